import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeResizeConditions, mergeModifyConditions, withoutResizeConditions } from './conditions.js';

const c = (type: string, extra: object = {}) => ({ type, status: 'True', ...extra });

test('resize merge keeps foreign conditions in place and replaces same-type resize conditions in place', () => {
  const old = [c('Resizing', { message: 'old' }), c('ModifyingVolume'), c('ControllerResizeError')];
  const merged = mergeResizeConditions(old, [c('Resizing', { message: 'new' })], false);
  assert.deepEqual(merged, [c('Resizing', { message: 'new' }), c('ModifyingVolume')]);
});

test('resize merge with keepOld keeps other resize conditions and appends new types', () => {
  const old = [c('ControllerResizeError'), c('ModifyingVolume')];
  const merged = mergeResizeConditions(old, [c('FileSystemResizePending')], true);
  assert.deepEqual(
    merged.map((x) => x.type),
    ['ControllerResizeError', 'ModifyingVolume', 'FileSystemResizePending'],
  );
});

test('withoutResizeConditions drops only the four resize types', () => {
  const old = [c('Resizing'), c('FileSystemResizePending'), c('ControllerResizeError'), c('NodeResizeError'), c('ModifyVolumeError')];
  assert.deepEqual(
    withoutResizeConditions(old).map((x) => x.type),
    ['ModifyVolumeError'],
  );
});

test('modify merge keeps the transition time when status and reason are unchanged', () => {
  const old = [{ type: 'ModifyingVolume', status: 'True', lastTransitionTime: 't0', lastProbeTime: 't0', message: 'a' }];
  const merged = mergeModifyConditions(old, [{ type: 'ModifyingVolume', status: 'True', message: 'b' }], 't1');
  assert.deepEqual(merged, [{ type: 'ModifyingVolume', status: 'True', message: 'b', lastProbeTime: 't1', lastTransitionTime: 't0' }]);
});

test('modify merge moves the transition time when the reason changes, and appends new types', () => {
  const old = [{ type: 'ModifyVolumeError', status: 'True', reason: 'Internal', lastTransitionTime: 't0' }, c('Resizing')];
  const merged = mergeModifyConditions(
    old,
    [
      { type: 'ModifyVolumeError', status: 'True', reason: 'InvalidArgument' },
      { type: 'ModifyingVolume', status: 'True' },
    ],
    't1',
  );
  assert.equal(merged[0]?.lastTransitionTime, 't1');
  assert.equal(merged[1]?.type, 'Resizing');
  assert.deepEqual(merged[2], { type: 'ModifyingVolume', status: 'True', lastProbeTime: 't1', lastTransitionTime: 't1' });
});

test('modify merge keeps a missing transition time missing when nothing changed (as upstream)', () => {
  const merged = mergeModifyConditions([{ type: 'ModifyingVolume', status: 'True' }], [{ type: 'ModifyingVolume', status: 'True', message: 'b' }], 't1');
  assert.equal(merged[0]?.lastTransitionTime, null);
});
