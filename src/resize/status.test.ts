import { test } from 'node:test';
import assert from 'node:assert/strict';
import { markControllerExpansionFailed, markControllerResizeInProgress, markExpansionFinished, markNodeExpansionPending, pvCapacityPatch } from './status.js';
import type { Pv, Pvc } from '../model/objects.js';

const pvc = (status: Pvc['status'], annotations?: Record<string, string>): Pvc => ({
  metadata: { name: 'c', namespace: 'ns', resourceVersion: '42', ...(annotations ? { annotations } : {}) },
  spec: { resources: { requests: { storage: '2Gi' } } },
  status,
});

test('in progress: RV precondition, Resizing added, allocation written, not-required annotation removed', () => {
  const patch = markControllerResizeInProgress(pvc({ capacity: { storage: '1Gi' } }, { 'volume.kubernetes.io/node-expansion-not-required': 'true' }), '2Gi', true, 'T');
  assert.equal(patch.checksResourceVersion, true);
  assert.deepEqual(patch.body, {
    metadata: { annotations: { 'volume.kubernetes.io/node-expansion-not-required': null }, resourceVersion: '42' },
    status: {
      conditions: [{ type: 'Resizing', status: 'True', lastProbeTime: null, lastTransitionTime: 'T' }],
      allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' },
      allocatedResources: { storage: '2Gi' },
    },
  });
});

test('failed, infeasible: no precondition, error condition kept beside others, status Infeasible', () => {
  const patch = markControllerExpansionFailed(
    pvc({ conditions: [{ type: 'Resizing', status: 'True' }], allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' } }),
    'rpc error: code = OutOfRange desc = too big', true, 'T',
  );
  assert.equal(patch.checksResourceVersion, false);
  assert.deepEqual(patch.body, {
    status: {
      conditions: [{ type: 'ControllerResizeError', status: 'True', lastProbeTime: null, lastTransitionTime: 'T', message: 'failed to expand pvc with rpc error: code = OutOfRange desc = too big' }],
      allocatedResourceStatuses: { storage: 'ControllerResizeInfeasible' },
    },
  });
});

test('finished: capacity set, resize conditions deleted by type, foreign ones untouched, status map removed', () => {
  const patch = markExpansionFinished(
    pvc({
      capacity: { storage: '1Gi' },
      conditions: [{ type: 'Resizing', status: 'True' }, { type: 'ModifyingVolume', status: 'True' }],
      allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' },
    }),
    '2Gi',
  );
  assert.deepEqual(patch.body, {
    metadata: { annotations: { 'volume.kubernetes.io/node-expansion-not-required': 'true' }, resourceVersion: '42' },
    status: {
      capacity: { storage: '2Gi' },
      conditions: [{ type: 'Resizing', $patch: 'delete' }],
      allocatedResourceStatuses: null,
    },
  });
});

test('node pending keeps other statuses in the map', () => {
  const patch = markNodeExpansionPending(pvc({ allocatedResourceStatuses: { storage: 'ControllerResizeInProgress', 'example.com/iops': 'X' } }), 'T');
  assert.deepEqual((patch.body['status'] as Record<string, unknown>)['allocatedResourceStatuses'], { storage: 'NodeResizePending' });
});

test('PV capacity patch adds the pre-resize annotation only once', () => {
  const pv: Pv = { metadata: { name: 'pv' }, spec: {} };
  assert.deepEqual(pvCapacityPatch(pv, '2Gi', '1Gi'), {
    spec: { capacity: { storage: '2Gi' } },
    metadata: { annotations: { 'volume.alpha.kubernetes.io/pre-resize-capacity': '1Gi' } },
  });
  const annotated: Pv = { metadata: { name: 'pv', annotations: { 'volume.alpha.kubernetes.io/pre-resize-capacity': '512Mi' } }, spec: {} };
  assert.deepEqual(pvCapacityPatch(annotated, '3Gi', '2Gi'), { spec: { capacity: { storage: '3Gi' } } });
});
