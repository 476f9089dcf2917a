import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffPatch, patchContentType, PatchType, withResourceVersion } from './patch.js';

test('withResourceVersion injects the precondition without touching the input', () => {
  const p = { status: { phase: 'Bound' } };
  assert.deepEqual(withResourceVersion(p, '42'), { status: { phase: 'Bound' }, metadata: { resourceVersion: '42' } });
  assert.deepEqual(p, { status: { phase: 'Bound' } });
  assert.equal(withResourceVersion(p, undefined), p);
});

test('content types are explicit per patch type', () => {
  assert.equal(patchContentType(PatchType.StrategicMerge), 'application/strategic-merge-patch+json');
  assert.equal(patchContentType(PatchType.Merge), 'application/merge-patch+json');
});

test('diffPatch sends only changed fields; removed fields become null; no change → undefined', () => {
  const before = { metadata: { name: 'a', annotations: { x: '1', y: '2' } }, status: { capacity: { storage: '1Gi' }, phase: 'Bound' } };
  const after = { metadata: { name: 'a', annotations: { x: '1' } }, status: { capacity: { storage: '2Gi' }, phase: 'Bound' } };
  assert.deepEqual(diffPatch(before, after), { metadata: { annotations: { y: null } }, status: { capacity: { storage: '2Gi' } } });
  assert.equal(diffPatch(before, structuredClone(before)), undefined);
});

test('strategic: conditions merge by type with deletes; merge patch replaces the list', () => {
  const before = { status: { conditions: [{ type: 'Resizing', status: 'True' }, { type: 'Old', status: 'True' }] } };
  const after = { status: { conditions: [{ type: 'Resizing', status: 'False' }, { type: 'New', status: 'True' }] } };
  assert.deepEqual(diffPatch(before, after, PatchType.StrategicMerge), {
    status: { conditions: [{ type: 'Resizing', status: 'False' }, { type: 'New', status: 'True' }, { type: 'Old', $patch: 'delete' }] },
  });
  assert.deepEqual(diffPatch(before, after, PatchType.Merge), { status: { conditions: after.status.conditions } });
});
