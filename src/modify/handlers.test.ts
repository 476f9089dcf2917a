import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pv, Pvc, VolumeAttributesClass } from '../model/objects.js';
import { createLogger } from '../observability/logger.js';
import { classHandlers, pvcHandlers, pvcsWaitingForClass, pvcUpdateWorthModifying } from './handlers.js';

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

function recordingQueue() {
  const calls: string[] = [];
  return { calls, queue: { add: (key: string) => calls.push(`add ${key}`), forget: (key: string) => calls.push(`forget ${key}`) } };
}

test('PVC handlers: enqueue through the filter, say why at v4, drop an update whose PV is not cached with upstream\'s error line', () => {
  const { calls, queue } = recordingQueue();
  const lines: string[] = [];
  const log = createLogger({ verbosity: 4, format: 'json', write: (l) => lines.push(l) });
  const pvs = new Map<string, Pv>([['pv-1', { metadata: { name: 'pv-1' }, spec: {} }]]);
  const h = pvcHandlers({ queue, pvs, forget: (key) => calls.push(`reconciler forgets ${key}`), log });
  h.add!(pvc('a', {}));
  const settled = pvc('a', { volumeAttributesClassName: 'gold' }, { phase: 'Bound', modifyVolumeStatus: { status: 'Pending' } });
  h.update!(settled, settled);
  h.update!(pvc('a', {}), pvc('a', { volumeAttributesClassName: 'gold' }, { phase: 'Bound' }, '2'));
  h.update!(pvc('b', { volumeName: 'pv-9' }), pvc('b', { volumeName: 'pv-9', volumeAttributesClassName: 'gold' }, { phase: 'Bound' }, '2'));
  h.delete!(pvc('a', {}));
  assert.deepEqual(calls, ['add ns/a', 'add ns/a', 'forget ns/a', 'reconciler forgets ns/a']);
  assert.deepEqual(lines.map((l) => (JSON.parse(l) as { msg: string }).msg), [
    'No need to modify PVC',
    'Enqueueing PVC for modify',
    'Get PV "pv-9" of pvc "ns/b" in PVInformer cache failed: persistentvolume "pv-9" not found',
  ]);
});

test('class handlers: a created class enqueues the PVCs waiting for it', () => {
  const { calls, queue } = recordingQueue();
  const h = classHandlers({ queue, pvcs: { list: () => [pvc('pending', { volumeAttributesClassName: 'gold' }, { phase: 'Bound', modifyVolumeStatus: { status: 'Pending' } }), pvc('other', {})] } });
  h.add!({ metadata: { name: 'gold' }, driverName: 'd' });
  assert.deepEqual(calls, ['add ns/pending']);
});
