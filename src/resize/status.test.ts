// The resize controller's patch bodies: exactly what is sent, as JSON text (key order included:
// upstream's patches are Go-marshalled, keys sorted).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  markControllerExpansionFailed,
  markControllerResizeInProgress,
  markExpansionFinished,
  markNodeExpansionPending,
  pvCapacityPatch,
  removePreResizeAnnotationPatch,
} from './status.js';
import type { Patch } from '../kube/api/patch.js';
import { pv, pvc } from '../../test/support/builders.js';

// The claim ns/c asks for 2Gi.
const claim = { name: 'c', resourceVersion: '42', request: '2Gi' };
const text = (body: unknown) => JSON.stringify(body);
/** The resourceVersion the patch requires the stored object to have, if any. */
const precondition = (patch: Patch) => (patch['metadata'] as { resourceVersion?: unknown } | undefined)?.resourceVersion;
const resizing = { type: 'Resizing', status: 'True', lastProbeTime: null, lastTransitionTime: 'T0' };

test('in progress: RV precondition, Resizing added, allocation written, the only annotation removed', () => {
  const patch = markControllerResizeInProgress(
    pvc({ ...claim, annotations: { 'volume.kubernetes.io/node-expansion-not-required': 'true' }, status: { capacity: { storage: '1Gi' } } }),
    '2Gi',
    true,
    'T',
  );
  assert.equal(precondition(patch), '42');
  assert.equal(
    text(patch),
    '{"metadata":{"annotations":null,"resourceVersion":"42"},"status":{' +
      '"allocatedResourceStatuses":{"storage":"ControllerResizeInProgress"},"allocatedResources":{"storage":"2Gi"},' +
      '"conditions":[{"lastProbeTime":null,"lastTransitionTime":"T","status":"True","type":"Resizing"}]}}',
  );
});

test('in progress, same allocation: other resize conditions kept, Resizing replaced in place', () => {
  const error = { type: 'ControllerResizeError', status: 'True', lastProbeTime: null, lastTransitionTime: 'T0', message: 'm' };
  const patch = markControllerResizeInProgress(
    pvc({ ...claim, status: { conditions: [resizing, error], allocatedResources: { storage: '2Gi' } } }),
    '2Gi',
    false,
    'T',
  );
  assert.equal(
    text(patch),
    '{"metadata":{"resourceVersion":"42"},"status":{' +
      '"$setElementOrder/conditions":[{"type":"Resizing"},{"type":"ControllerResizeError"}],' +
      '"conditions":[{"lastTransitionTime":"T","type":"Resizing"}]}}',
  );
});

test('failed, infeasible: no precondition, the error condition appended after Resizing, status Infeasible', () => {
  const patch = markControllerExpansionFailed(
    pvc({ ...claim, status: { conditions: [resizing], allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' } } }),
    'rpc error: code = OutOfRange desc = too big',
    true,
    'T',
  );
  assert.equal(precondition(patch), undefined);
  assert.equal(
    text(patch),
    '{"status":{"$setElementOrder/conditions":[{"type":"Resizing"},{"type":"ControllerResizeError"}],' +
      '"allocatedResourceStatuses":{"storage":"ControllerResizeInfeasible"},' +
      '"conditions":[{"lastProbeTime":null,"lastTransitionTime":"T","message":"failed to expand pvc with rpc error: code = OutOfRange desc = too big","status":"True","type":"ControllerResizeError"}]}}',
  );
});

test('node pending: FileSystemResizePending appended after the existing conditions; other statuses kept', () => {
  const patch = markNodeExpansionPending(
    pvc({
      ...claim,
      status: {
        conditions: [{ type: 'ModifyingVolume', status: 'True', lastProbeTime: null, lastTransitionTime: 'T0' }, resizing],
        allocatedResourceStatuses: { storage: 'ControllerResizeInProgress', 'example.com/iops': 'X' },
      },
    }),
    'T',
  );
  assert.equal(
    text(patch),
    '{"metadata":{"resourceVersion":"42"},"status":{' +
      '"$setElementOrder/conditions":[{"type":"ModifyingVolume"},{"type":"Resizing"},{"type":"FileSystemResizePending"}],' +
      '"allocatedResourceStatuses":{"storage":"NodeResizePending"},' +
      '"conditions":[{"lastProbeTime":null,"lastTransitionTime":"T","message":"Waiting for user to (re-)start a pod to finish file system resize of volume on node.","status":"True","type":"FileSystemResizePending"}]}}',
  );
});

test('finished: capacity set, resize conditions deleted by type, foreign ones kept in order, status map null', () => {
  const patch = markExpansionFinished(
    pvc({
      ...claim,
      status: {
        capacity: { storage: '1Gi' },
        conditions: [resizing, { type: 'ModifyingVolume', status: 'True', lastProbeTime: null, lastTransitionTime: 'T0' }],
        allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' },
      },
    }),
    '2Gi',
  );
  assert.equal(
    text(patch),
    '{"metadata":{"annotations":{"volume.kubernetes.io/node-expansion-not-required":"true"},"resourceVersion":"42"},' +
      '"status":{"$setElementOrder/conditions":[{"type":"ModifyingVolume"}],"allocatedResourceStatuses":null,"capacity":{"storage":"2Gi"},' +
      '"conditions":[{"$patch":"delete","type":"Resizing"}]}}',
  );
});

test('finished with only resize conditions: the emptied list is null', () => {
  const patch = markExpansionFinished(pvc({ ...claim, annotations: { other: 'x' }, status: { capacity: { storage: '1Gi' }, conditions: [resizing] } }), '2Gi');
  assert.equal(
    text(patch),
    '{"metadata":{"annotations":{"volume.kubernetes.io/node-expansion-not-required":"true"},"resourceVersion":"42"},' +
      '"status":{"capacity":{"storage":"2Gi"},"conditions":null}}',
  );
});

test('PV capacity patch adds the pre-resize annotation only once', () => {
  const plain = pv({ name: 'pv', capacity: '1Gi' });
  assert.equal(
    text(pvCapacityPatch(plain, '2Gi', '1Gi')),
    '{"metadata":{"annotations":{"volume.alpha.kubernetes.io/pre-resize-capacity":"1Gi"}},"spec":{"capacity":{"storage":"2Gi"}}}',
  );
  const annotated = pv({ name: 'pv', annotations: { 'volume.alpha.kubernetes.io/pre-resize-capacity': '512Mi' }, capacity: '2Gi' });
  assert.equal(text(pvCapacityPatch(annotated, '3Gi', '2Gi')), '{"spec":{"capacity":{"storage":"3Gi"}}}');
  assert.equal(text(pvCapacityPatch(annotated, '2Gi', undefined)), '{}');
});

test('removing the pre-resize annotation: the key when others stay, the whole map when it was the only one', () => {
  const only = pv({ name: 'pv', annotations: { 'volume.alpha.kubernetes.io/pre-resize-capacity': '1Gi' } });
  assert.equal(text(removePreResizeAnnotationPatch(only)), '{"metadata":{"annotations":null}}');
  const more = pv({ name: 'pv', annotations: { 'volume.alpha.kubernetes.io/pre-resize-capacity': '1Gi', 'pv.kubernetes.io/provisioned-by': 'd' } });
  assert.equal(text(removePreResizeAnnotationPatch(more)), '{"metadata":{"annotations":{"volume.alpha.kubernetes.io/pre-resize-capacity":null}}}');
});
