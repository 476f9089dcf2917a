// The modify controller's patch bodies: exactly what is sent to PATCH …/status.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pvc } from '../model/objects.js';
import {
  markModifyCanceled, markModifyCompleted, markModifyFailed, markModifyInProgress, markModifyPending, pvClassPatch,
} from './status.js';

const NOW = '2025-01-02T03:04:05Z';
const EARLIER = '2024-12-31T00:00:00Z';

function pvc(status: Pvc['status'] = {}): Pvc {
  return { metadata: { name: 'data', namespace: 'ns', resourceVersion: '42' }, spec: { volumeAttributesClassName: 'gold' }, status: { phase: 'Bound', ...status } };
}

const resizing = { type: 'Resizing', status: 'True', lastProbeTime: null, lastTransitionTime: EARLIER };

test('InProgress: target and status, ModifyingVolume=True with the reference message, RV-checked, resize conditions untouched', () => {
  const patch = markModifyInProgress(pvc({ conditions: [resizing] }), 'gold', NOW);
  assert.equal(patch.checksResourceVersion, true);
  assert.deepEqual(patch.body, {
    metadata: { resourceVersion: '42' },
    status: {
      conditions: [{ type: 'ModifyingVolume', status: 'True', message: 'Modifying volume to "gold" is in progress.', lastProbeTime: NOW, lastTransitionTime: NOW }],
      modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'InProgress' },
    },
  });
});

test('InProgress again with an unchanged condition keeps its lastTransitionTime', () => {
  const existing = { type: 'ModifyingVolume', status: 'True', message: 'Modifying volume to "gold" is in progress.', lastProbeTime: EARLIER, lastTransitionTime: EARLIER };
  const patch = markModifyInProgress(pvc({ conditions: [existing] }), 'gold', NOW);
  const conditions = (patch.body['status'] as { conditions: unknown[] }).conditions;
  // Only what changed is sent, keyed by type.
  assert.deepEqual(conditions, [{ type: 'ModifyingVolume', lastProbeTime: NOW }]);
});

test('Pending: only the status, target and conditions untouched, RV-checked', () => {
  const patch = markModifyPending(pvc({ conditions: [resizing] }));
  assert.deepEqual(patch, {
    body: { metadata: { resourceVersion: '42' }, status: { modifyVolumeStatus: { status: 'Pending' } } },
    checksResourceVersion: true,
  });
});

test('final InvalidArgument: Infeasible, "failed. Waiting for retry.", ModifyVolumeError with the code name and gRPC message', () => {
  const before = pvc({
    modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'InProgress' },
    conditions: [{ type: 'ModifyingVolume', status: 'True', message: 'Modifying volume to "gold" is in progress.', lastProbeTime: EARLIER, lastTransitionTime: EARLIER }],
  });
  const patch = markModifyFailed(before, {
    target: 'gold', status: 'Infeasible', final: true, codeName: 'InvalidArgument', details: 'iops must be at most 3000',
  }, NOW);
  assert.equal(patch.checksResourceVersion, true);
  assert.deepEqual(patch.body, {
    metadata: { resourceVersion: '42' },
    status: {
      conditions: [
        // status unchanged: the transition time stays, only the message and probe time change
        { type: 'ModifyingVolume', message: 'Modifying volume to "gold" failed. Waiting for retry.', lastProbeTime: NOW },
        { type: 'ModifyVolumeError', status: 'True', reason: 'InvalidArgument', message: 'iops must be at most 3000', lastProbeTime: NOW, lastTransitionTime: NOW },
      ],
      modifyVolumeStatus: { status: 'Infeasible' },
    },
  });
});

test('non-final error: stays InProgress, "is still in progress."; a changed reason moves the error condition\'s transition time', () => {
  const before = pvc({
    modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'InProgress' },
    conditions: [{ type: 'ModifyVolumeError', status: 'True', reason: 'Internal', message: 'x', lastProbeTime: EARLIER, lastTransitionTime: EARLIER }],
  });
  const patch = markModifyFailed(before, { target: 'gold', status: 'InProgress', final: false, codeName: 'Unavailable', details: 'busy' }, NOW);
  const status = patch.body['status'] as Record<string, unknown>;
  assert.deepEqual(status['conditions'], [
    { type: 'ModifyVolumeError', reason: 'Unavailable', message: 'busy', lastProbeTime: NOW, lastTransitionTime: NOW },
    { type: 'ModifyingVolume', status: 'True', message: 'Modifying volume to "gold" is still in progress.', lastProbeTime: NOW, lastTransitionTime: NOW },
  ]);
  // Target and status unchanged: nothing to send for them.
  assert.equal(status['modifyVolumeStatus'], undefined);
});

test('completed: modifyVolumeStatus deleted (null), current class set, both modify conditions deleted, others kept; not RV-checked', () => {
  const before = pvc({
    modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'InProgress' },
    conditions: [
      resizing,
      { type: 'ModifyingVolume', status: 'True', lastTransitionTime: EARLIER },
      { type: 'ModifyVolumeError', status: 'True', reason: 'Unavailable', lastTransitionTime: EARLIER },
    ],
  });
  assert.deepEqual(markModifyCompleted(before, 'gold'), {
    body: {
      status: {
        modifyVolumeStatus: null,
        conditions: [{ type: 'ModifyingVolume', $patch: 'delete' }, { type: 'ModifyVolumeError', $patch: 'delete' }],
        currentVolumeAttributesClassName: 'gold',
      },
    },
    checksResourceVersion: false,
  });
});

test('completed without modify conditions sends no condition changes', () => {
  const patch = markModifyCompleted(pvc({ modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'InProgress' } }), 'gold');
  assert.deepEqual(patch.body, { status: { modifyVolumeStatus: null, currentVolumeAttributesClassName: 'gold' } });
});

test('canceled: only ModifyingVolume goes (ModifyVolumeError and the status stay); not RV-checked', () => {
  const before = pvc({
    modifyVolumeStatus: { targetVolumeAttributesClassName: 'bad', status: 'Infeasible' },
    conditions: [
      { type: 'ModifyingVolume', status: 'True', lastTransitionTime: EARLIER },
      { type: 'ModifyVolumeError', status: 'True', reason: 'InvalidArgument', lastTransitionTime: EARLIER },
    ],
  });
  assert.deepEqual(markModifyCanceled(before), {
    body: { status: { conditions: [{ type: 'ModifyingVolume', $patch: 'delete' }] } },
    checksResourceVersion: false,
  });
});

test('PV patch names the class', () => {
  assert.deepEqual(pvClassPatch('gold'), { spec: { volumeAttributesClassName: 'gold' } });
});
