// The modify controller's patch bodies: exactly what is sent to PATCH …/status, as JSON text
// (key order included: upstream's patches are Go-marshalled, keys sorted).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pv, pvc } from '../../test/support/builders.js';
import { markModifyCanceled, markModifyCompleted, markModifyFailed, markModifyInProgress, markModifyPending, pvClassPatch } from './status.js';
import type { Patch } from '../kube/api/patch.js';

const NOW = '2025-01-02T03:04:05Z';
const EARLIER = '2024-12-31T00:00:00Z';

// The claim ns/data asks for class gold.
const data = { resourceVersion: '42', attributesClass: 'gold' };

const resizing = { type: 'Resizing', status: 'True', lastProbeTime: null, lastTransitionTime: EARLIER };
const text = (body: unknown) => JSON.stringify(body);
/** The resourceVersion the patch requires the stored object to have, if any. */
const precondition = (patch: Patch) => (patch['metadata'] as { resourceVersion?: unknown } | undefined)?.resourceVersion;

test('InProgress: target and status, ModifyingVolume=True with the reference message, RV-checked, resize conditions untouched', () => {
  const patch = markModifyInProgress(pvc({ ...data, conditions: [resizing] }), 'gold', NOW);
  assert.equal(precondition(patch), '42');
  // Appended after the resize condition: the order list names both.
  assert.equal(
    text(patch),
    '{"metadata":{"resourceVersion":"42"},"status":{' +
      '"$setElementOrder/conditions":[{"type":"Resizing"},{"type":"ModifyingVolume"}],' +
      '"conditions":[{"lastProbeTime":"2025-01-02T03:04:05Z","lastTransitionTime":"2025-01-02T03:04:05Z","message":"Modifying volume to \\"gold\\" is in progress.","status":"True","type":"ModifyingVolume"}],' +
      '"modifyVolumeStatus":{"status":"InProgress","targetVolumeAttributesClassName":"gold"}}}',
  );
});

test('InProgress again with an unchanged condition keeps its lastTransitionTime', () => {
  const existing = {
    type: 'ModifyingVolume',
    status: 'True',
    message: 'Modifying volume to "gold" is in progress.',
    lastProbeTime: EARLIER,
    lastTransitionTime: EARLIER,
  };
  const patch = markModifyInProgress(pvc({ ...data, conditions: [existing] }), 'gold', NOW);
  const conditions = (patch['status'] as { conditions: unknown[] }).conditions;
  // Only what changed is sent, keyed by type.
  assert.deepEqual(conditions, [{ type: 'ModifyingVolume', lastProbeTime: NOW }]);
});

test('Pending: only the status, target and conditions untouched, RV-checked', () => {
  const patch = markModifyPending(pvc({ ...data, conditions: [resizing] }));
  assert.deepEqual(patch, { metadata: { resourceVersion: '42' }, status: { modifyVolumeStatus: { status: 'Pending' } } });
  assert.equal(precondition(patch), '42');
});

test('final InvalidArgument: Infeasible, "failed. Waiting for retry.", ModifyVolumeError with the code name and gRPC message', () => {
  const before = pvc({
    ...data,
    modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'InProgress' },
    conditions: [
      { type: 'ModifyingVolume', status: 'True', message: 'Modifying volume to "gold" is in progress.', lastProbeTime: EARLIER, lastTransitionTime: EARLIER },
    ],
  });
  const patch = markModifyFailed(
    before,
    {
      target: 'gold',
      status: 'Infeasible',
      final: true,
      codeName: 'InvalidArgument',
      details: 'iops must be at most 3000',
    },
    NOW,
  );
  assert.equal(precondition(patch), '42');
  // ModifyingVolume's status is unchanged: its transition time stays, only message and probe time change.
  assert.equal(
    text(patch),
    '{"metadata":{"resourceVersion":"42"},"status":{' +
      '"$setElementOrder/conditions":[{"type":"ModifyingVolume"},{"type":"ModifyVolumeError"}],' +
      '"conditions":[{"lastProbeTime":"2025-01-02T03:04:05Z","message":"Modifying volume to \\"gold\\" failed. Waiting for retry.","type":"ModifyingVolume"},' +
      '{"lastProbeTime":"2025-01-02T03:04:05Z","lastTransitionTime":"2025-01-02T03:04:05Z","message":"iops must be at most 3000","reason":"InvalidArgument","status":"True","type":"ModifyVolumeError"}],' +
      '"modifyVolumeStatus":{"status":"Infeasible"}}}',
  );
});

test('non-final error: stays InProgress, "is still in progress."; a changed reason moves the error condition\'s transition time', () => {
  const before = pvc({
    ...data,
    modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'InProgress' },
    conditions: [{ type: 'ModifyVolumeError', status: 'True', reason: 'Internal', message: 'x', lastProbeTime: EARLIER, lastTransitionTime: EARLIER }],
  });
  const patch = markModifyFailed(before, { target: 'gold', status: 'InProgress', final: false, codeName: 'Unavailable', details: 'busy' }, NOW);
  const status = patch['status'] as Record<string, unknown>;
  assert.deepEqual(status['conditions'], [
    { type: 'ModifyVolumeError', reason: 'Unavailable', message: 'busy', lastProbeTime: NOW, lastTransitionTime: NOW },
    { type: 'ModifyingVolume', status: 'True', message: 'Modifying volume to "gold" is still in progress.', lastProbeTime: NOW, lastTransitionTime: NOW },
  ]);
  // Target and status unchanged: nothing to send for them.
  assert.equal(status['modifyVolumeStatus'], undefined);
});

test('completed: modifyVolumeStatus deleted (null), current class set, both modify conditions deleted, others kept; not RV-checked', () => {
  const before = pvc({
    ...data,
    modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'InProgress' },
    conditions: [
      resizing,
      { type: 'ModifyingVolume', status: 'True', lastTransitionTime: EARLIER },
      { type: 'ModifyVolumeError', status: 'True', reason: 'Unavailable', lastTransitionTime: EARLIER },
    ],
  });
  const patch = markModifyCompleted(before, 'gold');
  assert.equal(precondition(patch), undefined);
  // Deletions in merge-key order, as apimachinery sorts them.
  assert.equal(
    text(patch),
    '{"status":{"$setElementOrder/conditions":[{"type":"Resizing"}],' +
      '"conditions":[{"$patch":"delete","type":"ModifyVolumeError"},{"$patch":"delete","type":"ModifyingVolume"}],' +
      '"currentVolumeAttributesClassName":"gold","modifyVolumeStatus":null}}',
  );
});

test('completed with only modify conditions: the emptied list is null', () => {
  const patch = markModifyCompleted(
    pvc({
      ...data,
      modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'InProgress' },
      conditions: [{ type: 'ModifyingVolume', status: 'True', lastTransitionTime: EARLIER }],
    }),
    'gold',
  );
  assert.equal(text(patch), '{"status":{"conditions":null,"currentVolumeAttributesClassName":"gold","modifyVolumeStatus":null}}');
});

test('completed without modify conditions sends no condition changes', () => {
  const patch = markModifyCompleted(pvc({ ...data, modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'InProgress' } }), 'gold');
  assert.deepEqual(patch, { status: { modifyVolumeStatus: null, currentVolumeAttributesClassName: 'gold' } });
});

test('canceled: only ModifyingVolume goes (ModifyVolumeError and the status stay); not RV-checked', () => {
  const before = pvc({
    ...data,
    modifyVolumeStatus: { targetVolumeAttributesClassName: 'bad', status: 'Infeasible' },
    conditions: [
      { type: 'ModifyingVolume', status: 'True', lastTransitionTime: EARLIER },
      { type: 'ModifyVolumeError', status: 'True', reason: 'InvalidArgument', lastTransitionTime: EARLIER },
    ],
  });
  const patch = markModifyCanceled(before);
  assert.equal(precondition(patch), undefined);
  assert.equal(
    text(patch),
    '{"status":{"$setElementOrder/conditions":[{"type":"ModifyVolumeError"}],"conditions":[{"$patch":"delete","type":"ModifyingVolume"}]}}',
  );
});

test('PV patch names the class, and is empty when the PV already has it', () => {
  assert.equal(text(pvClassPatch(pv({ name: 'pv' }), 'gold')), '{"spec":{"volumeAttributesClassName":"gold"}}');
  assert.equal(text(pvClassPatch(pv({ name: 'pv', attributesClass: 'silver' }), 'gold')), '{"spec":{"volumeAttributesClassName":"gold"}}');
  assert.equal(text(pvClassPatch(pv({ name: 'pv', attributesClass: 'gold' }), 'gold')), '{}');
});
