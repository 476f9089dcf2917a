import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pvc, volumeAttributesClass } from '../../test/support/builders.js';
import { pvcsWaitingForClass, pvcUpdateWorthModifying } from './handlers.js';

// The claim ns/a, bound to pv-1, the one PV in the cache.
const a = { name: 'a', resourceVersion: '1' };
const pvExists = (name: string) => name === 'pv-1';

test('update: class changed on a bound PVC with a cached PV is enqueued, even with a modify status', () => {
  const before = pvc({ ...a, attributesClass: 'gold', modifyVolumeStatus: { status: 'Infeasible', targetVolumeAttributesClassName: 'gold' } });
  const after = pvc({ ...a, attributesClass: 'silver', status: before.status, resourceVersion: '2' });
  assert.equal(pvcUpdateWorthModifying(before, after, pvExists), true);
});

test('update: unchanged class with a modify status (resync of a Pending/Infeasible PVC) is dropped', () => {
  const p = pvc({ ...a, attributesClass: 'gold', modifyVolumeStatus: { status: 'Pending' } });
  assert.equal(pvcUpdateWorthModifying(p, p, pvExists), false);
});

test('update: unchanged class without a modify status is enqueued (resync, resize status writes)', () => {
  const p = pvc({ ...a, attributesClass: 'gold' });
  assert.equal(pvcUpdateWorthModifying(p, pvc({ ...a, attributesClass: 'gold', resourceVersion: '2' }), pvExists), true);
});

test('update: not Bound, or the old PVC\'s PV not cached: dropped', () => {
  const before = pvc(a);
  assert.equal(pvcUpdateWorthModifying(before, pvc({ ...a, attributesClass: 'gold', phase: 'Pending' }), pvExists), false);
  const unbound = pvc({ ...a, volumeName: '' });
  assert.equal(pvcUpdateWorthModifying(unbound, pvc({ ...a, attributesClass: 'gold' }), pvExists), false);
  const otherPv = pvc({ ...a, volumeName: 'pv-2' });
  assert.equal(pvcUpdateWorthModifying(otherPv, pvc({ ...a, attributesClass: 'gold' }), pvExists), false);
});

test('class created: PVCs that name it and are not settled on it are returned', () => {
  const vac = volumeAttributesClass({ name: 'gold', driverName: 'd' });
  const keys = pvcsWaitingForClass(vac, [
    pvc({ name: 'pending', attributesClass: 'gold', modifyVolumeStatus: { status: 'Pending' } }),
    pvc({ name: 'new', attributesClass: 'gold', currentAttributesClass: 'silver' }),
    pvc({ name: 'settled', attributesClass: 'gold', currentAttributesClass: 'gold' }),
    pvc({ name: 'other', attributesClass: 'silver', modifyVolumeStatus: { status: 'Pending' } }),
    pvc({ name: 'none' }),
  ]);
  assert.deepEqual(keys, ['ns/pending', 'ns/new']);
});
