import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pvc, VolumeAttributesClass } from '../model/objects.js';
import { pvcsWaitingForClass, pvcUpdateWorthModifying } from './handlers.js';

function pvc(name: string, spec: Partial<Pvc['spec']>, status: Pvc['status'] = { phase: 'Bound' }, rv = '1'): Pvc {
  return { metadata: { name, namespace: 'ns', resourceVersion: rv }, spec: { volumeName: 'pv-1', ...spec }, status };
}
const pvExists = (name: string) => name === 'pv-1';

test('update: class changed on a bound PVC with a cached PV is enqueued, even with a modify status', () => {
  const before = pvc('a', { volumeAttributesClassName: 'gold' }, { phase: 'Bound', modifyVolumeStatus: { status: 'Infeasible', targetVolumeAttributesClassName: 'gold' } });
  const after = pvc('a', { volumeAttributesClassName: 'silver' }, before.status, '2');
  assert.equal(pvcUpdateWorthModifying(before, after, pvExists), true);
});

test('update: unchanged class with a modify status (resync of a Pending/Infeasible PVC) is dropped', () => {
  const p = pvc('a', { volumeAttributesClassName: 'gold' }, { phase: 'Bound', modifyVolumeStatus: { status: 'Pending' } });
  assert.equal(pvcUpdateWorthModifying(p, p, pvExists), false);
});

test('update: unchanged class without a modify status is enqueued (resync, resize status writes)', () => {
  const p = pvc('a', { volumeAttributesClassName: 'gold' });
  assert.equal(pvcUpdateWorthModifying(p, pvc('a', { volumeAttributesClassName: 'gold' }, { phase: 'Bound' }, '2'), pvExists), true);
});

test('update: not Bound, or the old PVC\'s PV not cached: dropped', () => {
  const before = pvc('a', {});
  assert.equal(pvcUpdateWorthModifying(before, pvc('a', { volumeAttributesClassName: 'gold' }, { phase: 'Pending' }), pvExists), false);
  const unbound = pvc('a', { volumeName: '' });
  assert.equal(pvcUpdateWorthModifying(unbound, pvc('a', { volumeAttributesClassName: 'gold' }), pvExists), false);
  const otherPv = pvc('a', { volumeName: 'pv-2' });
  assert.equal(pvcUpdateWorthModifying(otherPv, pvc('a', { volumeAttributesClassName: 'gold' }), pvExists), false);
});

test('class created: PVCs that name it and are not settled on it are returned', () => {
  const vac: VolumeAttributesClass = { metadata: { name: 'gold' }, driverName: 'd' };
  const keys = pvcsWaitingForClass(vac, [
    pvc('pending', { volumeAttributesClassName: 'gold' }, { phase: 'Bound', modifyVolumeStatus: { status: 'Pending' } }),
    pvc('new', { volumeAttributesClassName: 'gold' }, { phase: 'Bound', currentVolumeAttributesClassName: 'silver' }),
    pvc('settled', { volumeAttributesClassName: 'gold' }, { phase: 'Bound', currentVolumeAttributesClassName: 'gold' }),
    pvc('other', { volumeAttributesClassName: 'silver' }, { phase: 'Bound', modifyVolumeStatus: { status: 'Pending' } }),
    pvc('none', {}),
  ]);
  assert.deepEqual(keys, ['ns/pending', 'ns/new']);
});
