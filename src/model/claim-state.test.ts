import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pvc } from '../../test/support/builders.js';
import { cond, growing, MODIFY_ROWS, RESIZE_ROWS } from '../../test/support/claim-state-rows.js';
import { modifyProgress, resizeProgress } from './claim-state.js';

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
  for (const row of MODIFY_ROWS) {
    const progress = modifyProgress(row.pvc);
    assert.equal(progress?.state, row.expect, row.name);
    if (progress) assert.equal(progress.operation, 'modify');
  }
});
