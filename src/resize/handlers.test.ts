import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podHandlers, pvcHandlers, pvcUpdateWorthReconciling } from './handlers.js';
import { ClaimUsage, PodClaimUsage } from './in-use.js';
import type { Pvc } from '../model/objects.js';
import { pvc } from '../../test/support/builders.js';

// The claim ns/c as the update handler sees it: 1Gi asked and had unless a row says otherwise.
const claim = { name: 'c', resourceVersion: '1', request: '1Gi', capacity: '1Gi' };

// Upstream v2.3.0's filter: with the legacy path gone, a request that shrinks and a changed resize
// status always count.
const rows: { name: string; before: Pvc; after: Pvc; expect: boolean }[] = [
  { name: 'request grows', before: pvc(claim), after: pvc({ ...claim, resourceVersion: '2', request: '2Gi' }), expect: true },
  {
    name: 'request shrinks (recovery from a failed expansion)',
    before: pvc({ ...claim, request: '3Gi' }),
    after: pvc({ ...claim, resourceVersion: '2', request: '2Gi' }),
    expect: true,
  },
  { name: 'resync (same resourceVersion)', before: pvc(claim), after: pvc(claim), expect: true },
  { name: 'label change only', before: pvc(claim), after: pvc({ ...claim, resourceVersion: '2', labels: { l: 'x' } }), expect: false },
  { name: 'capacity grows (node finished)', before: pvc(claim), after: pvc({ ...claim, resourceVersion: '2', capacity: '2Gi' }), expect: true },
  {
    name: 'resize status changes',
    before: pvc(claim),
    after: pvc({ ...claim, resourceVersion: '2', resizeStatus: 'NodeResizeInfeasible' }),
    expect: true,
  },
  {
    name: 'resize status cleared',
    before: pvc({ ...claim, resizeStatus: 'NodeResizePending' }),
    after: pvc({ ...claim, resourceVersion: '2' }),
    expect: true,
  },
  {
    name: 'capacity shrinks, nothing else: not a change',
    before: pvc({ ...claim, capacity: '2Gi' }),
    after: pvc({ ...claim, resourceVersion: '2' }),
    expect: false,
  },
  {
    name: 'an empty storage-resizer annotation reads as none, as a Go map lookup',
    before: pvc(claim),
    after: pvc({ ...claim, resourceVersion: '2', annotations: { 'volume.kubernetes.io/storage-resizer': '' } }),
    expect: false,
  },
  {
    name: 'storage-resizer annotation changes',
    before: pvc(claim),
    after: pvc({ ...claim, resourceVersion: '2', annotations: { 'volume.kubernetes.io/storage-resizer': 'ebs.csi.aws.com' } }),
    expect: true,
  },
  {
    name: 'malformed request does not throw',
    before: pvc(claim),
    after: pvc({ ...claim, resourceVersion: '2', request: '1.x.Gi' }),
    expect: true,
  },
];

for (const row of rows) {
  test(`PVC update filter: ${row.name}`, () => {
    assert.equal(pvcUpdateWorthReconciling(row.before, row.after), row.expect);
  });
}

function recordingQueue() {
  const calls: string[] = [];
  return { calls, queue: { add: (key: string) => calls.push(`add ${key}`), forget: (key: string) => calls.push(`forget ${key}`) } };
}

test("PVC handlers: an add enqueues, an update through the filter, a delete forgets the backoff and the reconciler's memory", () => {
  const { calls, queue } = recordingQueue();
  const h = pvcHandlers({ queue, forget: (key, uid) => calls.push(`reconciler forgets ${key} ${uid}`) });
  h.add!(pvc(claim));
  h.update!(pvc(claim), pvc({ ...claim, resourceVersion: '2', labels: { l: 'x' } }));
  h.update!(pvc(claim), pvc({ ...claim, resourceVersion: '2', request: '2Gi' }));
  h.delete!({ ...pvc(claim), metadata: { ...pvc(claim).metadata, uid: 'u-1' } });
  assert.deepEqual(calls, ['add ns/c', 'add ns/c', 'forget ns/c', 'reconciler forgets ns/c u-1']);
});

test('Pod handlers keep claim usage: added, moved to another claim, dropped, removed', () => {
  const usage = new ClaimUsage();
  const h = podHandlers(usage);
  const onC = new PodClaimUsage('ns/app', 'ns/c');
  h.add!(onC);
  assert.equal(usage.isInUse('ns/c'), true);
  h.update!(onC, onC); // resync
  assert.equal(usage.isInUse('ns/c'), true);
  const onD = new PodClaimUsage('ns/app', ['ns/c', 'ns/d']);
  h.update!(onC, onD);
  assert.deepEqual([usage.isInUse('ns/c'), usage.isInUse('ns/d')], [true, true]);
  h.update!(onD, new PodClaimUsage('ns/app', 'ns/d'));
  assert.deepEqual([usage.isInUse('ns/c'), usage.isInUse('ns/d')], [false, true]);
  h.delete!(new PodClaimUsage('ns/app', 'ns/d'));
  assert.equal(usage.isInUse('ns/d'), false);
});
