import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pv } from '../model/objects.js';
import { createLogger } from '../observability/log/logger.js';
import { pvc, volumeAttributesClass } from '../../test/support/builders.js';
import { classHandlers, pvcHandlers, pvcsWaitingForClass, pvcUpdateWorthModifying } from './handlers.js';

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

test("update: not Bound, or the old PVC's PV not cached: dropped", () => {
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

function recordingQueue() {
  const calls: string[] = [];
  return { calls, queue: { add: (key: string) => calls.push(`add ${key}`), forget: (key: string) => calls.push(`forget ${key}`) } };
}

test("PVC handlers: enqueue through the filter, say why at v4, drop an update whose PV is not cached with upstream's error line", () => {
  const { calls, queue } = recordingQueue();
  const lines: string[] = [];
  const log = createLogger({ verbosity: 4, format: 'json', write: (l) => lines.push(l) });
  const pvs = new Map<string, Pv>([['pv-1', { metadata: { name: 'pv-1' }, spec: {} }]]);
  const h = pvcHandlers({ queue, pvs, forget: (key) => calls.push(`reconciler forgets ${key}`), log });
  h.add!(pvc(a));
  const settled = pvc({ ...a, attributesClass: 'gold', modifyVolumeStatus: { status: 'Pending' } });
  h.update!(settled, settled);
  h.update!(pvc(a), pvc({ ...a, attributesClass: 'gold', resourceVersion: '2' }));
  h.update!(
    pvc({ name: 'b', resourceVersion: '1', volumeName: 'pv-9' }),
    pvc({ name: 'b', resourceVersion: '2', volumeName: 'pv-9', attributesClass: 'gold' }),
  );
  h.delete!(pvc(a));
  assert.deepEqual(calls, ['add ns/a', 'add ns/a', 'forget ns/a', 'reconciler forgets ns/a']);
  assert.deepEqual(
    lines.map((l) => (JSON.parse(l) as { msg: string }).msg),
    ['No need to modify PVC', 'Enqueueing PVC for modify', 'Get PV "pv-9" of pvc "ns/b" in PVInformer cache failed: persistentvolume "pv-9" not found'],
  );
});

test('class handlers: a created class enqueues the PVCs waiting for it', () => {
  const { calls, queue } = recordingQueue();
  const h = classHandlers({
    queue,
    pvcs: { list: () => [pvc({ name: 'pending', attributesClass: 'gold', modifyVolumeStatus: { status: 'Pending' } }), pvc({ name: 'other' })] },
  });
  h.add!({ metadata: { name: 'gold' }, driverName: 'd' });
  assert.deepEqual(calls, ['add ns/pending']);
});
