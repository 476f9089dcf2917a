import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planExpansion, legacyNeedsResize, pvcNeedsResize, type ExpansionFacts, type ExpansionPlan } from './plan.js';

const Gi = 1024n ** 3n;

function facts(overrides: Partial<ExpansionFacts>): ExpansionFacts {
  return {
    requestedBytes: 2n * Gi,
    pvBytes: 1n * Gi,
    allocatedBytes: undefined,
    resizeStatus: '',
    hasFinalError: false,
    fileSystemResizePending: false,
    supportsControlPlaneExpansion: true,
    ...overrides,
  };
}

const expand = (gib: bigint, rewritesAllocation = true): ExpansionPlan => ({ kind: 'expand', targetBytes: gib * Gi, rewritesAllocation });

const rows: { name: string; facts: Partial<ExpansionFacts>; expect: ExpansionPlan }[] = [
  // P < S
  { name: 'P<S, no status: expand to S', facts: {}, expect: expand(2n) },
  { name: 'P<S, ControllerResizeInfeasible: expand to S (new request)', facts: { resizeStatus: 'ControllerResizeInfeasible', allocatedBytes: 3n * Gi }, expect: expand(2n) },
  { name: 'P<S, NodeResizeInfeasible with A: expand to A', facts: { resizeStatus: 'NodeResizeInfeasible', allocatedBytes: 3n * Gi, requestedBytes: 4n * Gi }, expect: expand(3n, false) },
  { name: 'P<S, NodeResizeInfeasible without A: expand to S', facts: { resizeStatus: 'NodeResizeInfeasible' }, expect: expand(2n) },
  { name: 'P<S, NodeResizePending, P >= A: node finishes, nothing', facts: { resizeStatus: 'NodeResizePending', allocatedBytes: 1n * Gi, requestedBytes: 3n * Gi }, expect: { kind: 'nothing', why: 'node expansion pending' } },
  { name: 'P<S, NodeResizeInProgress, P >= A: nothing', facts: { resizeStatus: 'NodeResizeInProgress', allocatedBytes: 1n * Gi, requestedBytes: 3n * Gi }, expect: { kind: 'nothing', why: 'node expansion in progress' } },
  { name: 'P<S, NodeResizePending, P < A: expand to A', facts: { resizeStatus: 'NodeResizePending', allocatedBytes: 2n * Gi, requestedBytes: 3n * Gi }, expect: expand(2n, false) },
  { name: 'P<S, NodeResizePending without A: expand to S', facts: { resizeStatus: 'NodeResizePending', requestedBytes: 3n * Gi }, expect: expand(3n) },
  { name: 'P<S, ControllerResizeInProgress, uncertain: retry A', facts: { resizeStatus: 'ControllerResizeInProgress', allocatedBytes: 5n * Gi, requestedBytes: 3n * Gi }, expect: expand(5n, false) },
  { name: 'P<S, ControllerResizeInProgress, final error: recover to S', facts: { resizeStatus: 'ControllerResizeInProgress', allocatedBytes: 5n * Gi, requestedBytes: 3n * Gi, hasFinalError: true }, expect: expand(3n) },
  { name: 'P<S, ControllerResizeInProgress without A: S', facts: { resizeStatus: 'ControllerResizeInProgress' }, expect: expand(2n) },
  { name: 'P<S, same A as S: status already right', facts: { allocatedBytes: 2n * Gi }, expect: expand(2n, false) },
  // P >= S
  { name: 'P>=S, NodeResizeInProgress: kubelet owns it', facts: { pvBytes: 2n * Gi, resizeStatus: 'NodeResizeInProgress' }, expect: { kind: 'nothing', why: 'node expansion in progress' } },
  { name: 'P>=S, NodeResizePending: kubelet owns it', facts: { pvBytes: 2n * Gi, resizeStatus: 'NodeResizePending' }, expect: { kind: 'nothing', why: 'node expansion pending' } },
  { name: 'P>=S, NodeResizeInfeasible, real resizer with A: A', facts: { pvBytes: 3n * Gi, resizeStatus: 'NodeResizeInfeasible', allocatedBytes: 3n * Gi }, expect: expand(3n, false) },
  { name: 'P>=S, NodeResizeInfeasible, trivial resizer: S', facts: { pvBytes: 3n * Gi, resizeStatus: 'NodeResizeInfeasible', allocatedBytes: 3n * Gi, supportsControlPlaneExpansion: false }, expect: expand(2n) },
  { name: 'P>=S, NodeResizeInfeasible, no A: S', facts: { pvBytes: 3n * Gi, resizeStatus: 'NodeResizeInfeasible' }, expect: expand(2n) },
  { name: 'P>=S, ControllerResizeInProgress: A (expanded, not recorded)', facts: { pvBytes: 3n * Gi, resizeStatus: 'ControllerResizeInProgress', allocatedBytes: 3n * Gi }, expect: expand(3n, false) },
  { name: 'P>=S, ControllerResizeInfeasible without A: S', facts: { pvBytes: 3n * Gi, resizeStatus: 'ControllerResizeInfeasible' }, expect: expand(2n) },
  { name: 'P>=S, empty, A present: A', facts: { pvBytes: 3n * Gi, allocatedBytes: 3n * Gi }, expect: expand(3n, false) },
  { name: 'P>=S, empty, no A, FileSystemResizePending: nothing (old API server)', facts: { pvBytes: 2n * Gi, fileSystemResizePending: true }, expect: { kind: 'nothing', why: 'waiting for kubelet (FileSystemResizePending)', warnOldApiServer: true } },
  { name: 'P>=S, empty, no A: S so the driver tells about the node (old API server)', facts: { pvBytes: 2n * Gi }, expect: { ...expand(2n), warnOldApiServer: true } as ExpansionPlan },
];

for (const row of rows) {
  test(`planExpansion: ${row.name}`, () => {
    assert.deepEqual(planExpansion(facts(row.facts)), row.expect);
  });
}

test('legacyNeedsResize: P<S resizes; P>=S resizes unless kubelet still has work', () => {
  assert.equal(legacyNeedsResize({ requestedBytes: 2n, pvBytes: 1n, fileSystemResizePending: true }), true);
  assert.equal(legacyNeedsResize({ requestedBytes: 2n, pvBytes: 2n, fileSystemResizePending: false }), true);
  assert.equal(legacyNeedsResize({ requestedBytes: 2n, pvBytes: 2n, fileSystemResizePending: true }), false);
});

test('pvcNeedsResize: bound, with a volume, request above capacity', () => {
  assert.equal(pvcNeedsResize('Bound', 'pv', 2n, 1n), true);
  assert.equal(pvcNeedsResize('Pending', 'pv', 2n, 1n), false);
  assert.equal(pvcNeedsResize('Bound', '', 2n, 1n), false);
  assert.equal(pvcNeedsResize('Bound', 'pv', 1n, 1n), false);
});
