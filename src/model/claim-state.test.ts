import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pvc } from './objects.js';
import { pvc } from '../../test/support/builders.js';
import { cond, growing, RESIZE_ROWS } from '../../test/support/claim-state-rows.js';
import { modifyProgress, resizeProgress, type ClaimState } from './claim-state.js';

test('resize state of one PVC', () => {
  for (const row of RESIZE_ROWS) assert.equal(resizeProgress(row.pvc, row.failures ?? 0)?.state, row.expect, row.name);
});

test('the state comes with the True conditions that show it, the most telling first', () => {
  const failing = pvc({
    ...growing,
    allocated: '2Gi',
    resizeStatus: 'ControllerResizeInProgress',
    conditions: [cond('Resizing', 'True', '2024-01-01T00:00:00Z'), cond('ControllerResizeError', 'True', '2024-01-01T00:05:00Z', 'failed to expand pvc')],
  });
  assert.deepEqual(
    resizeProgress(failing)?.shownBy.map((c) => c.type),
    ['ControllerResizeError'],
  );
  const nodePending = pvc({
    ...growing,
    allocated: '2Gi',
    resizeStatus: 'NodeResizePending',
    conditions: [cond('FileSystemResizePending'), cond('NodeResizeError', 'False')],
  });
  assert.deepEqual(
    resizeProgress(nodePending)?.shownBy.map((c) => c.type),
    ['FileSystemResizePending'],
  );
  assert.deepEqual(resizeProgress(pvc(growing))?.shownBy, []);
});

test('modify state of one PVC', () => {
  const claim = { request: '1Gi', capacity: '1Gi' };
  const inProgress = { targetVolumeAttributesClassName: 'gold', status: 'InProgress' };
  const rows: Array<{ name: string; pvc: Pvc; expect: ClaimState | undefined }> = [
    { name: 'no class asked for', pvc: pvc(claim), expect: undefined },
    { name: 'the class is applied', pvc: pvc({ ...claim, attributesClass: 'gold', currentAttributesClass: 'gold' }), expect: undefined },
    { name: 'another class asked for, untouched', pvc: pvc({ ...claim, attributesClass: 'gold' }), expect: 'waiting' },
    {
      name: 'Pending (the class does not exist yet)',
      pvc: pvc({ ...claim, attributesClass: 'gold', modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'Pending' } }),
      expect: 'waiting',
    },
    {
      name: 'InProgress',
      pvc: pvc({ ...claim, attributesClass: 'gold', modifyVolumeStatus: inProgress, conditions: [cond('ModifyingVolume')] }),
      expect: 'in_progress',
    },
    {
      name: 'InProgress with ModifyVolumeError=True: backoff',
      pvc: pvc({ ...claim, attributesClass: 'gold', modifyVolumeStatus: inProgress, conditions: [cond('ModifyVolumeError')] }),
      expect: 'backoff',
    },
    {
      name: 'InProgress with ModifyVolumeError=False: in progress',
      pvc: pvc({ ...claim, attributesClass: 'gold', modifyVolumeStatus: inProgress, conditions: [cond('ModifyVolumeError', 'False')] }),
      expect: 'in_progress',
    },
    {
      name: 'Infeasible',
      pvc: pvc({ ...claim, attributesClass: 'gold', modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'Infeasible' } }),
      expect: 'infeasible',
    },
  ];
  for (const row of rows) {
    const progress = modifyProgress(row.pvc);
    assert.equal(progress?.state, row.expect, row.name);
    if (progress) assert.equal(progress.operation, 'modify');
  }
});
