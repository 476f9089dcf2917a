import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planExpansion, pvcNeedsResize, type ExpansionDecision, type ExpansionFacts, type ExpansionPlan } from './plan.js';

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
    inSlowSet: false,
    ...overrides,
  };
}

const expand = (gib: bigint, rewritesAllocation = true): ExpansionPlan => ({ kind: 'expand', targetBytes: gib * Gi, rewritesAllocation });

const rows: { name: string; facts: Partial<ExpansionFacts>; expect: ExpansionPlan }[] = [
  // P < S
  { name: 'P<S, no status: expand to S', facts: {}, expect: expand(2n) },
  {
    name: 'P<S, ControllerResizeInfeasible: expand to S (new request)',
    facts: { resizeStatus: 'ControllerResizeInfeasible', allocatedBytes: 3n * Gi },
    expect: expand(2n),
  },
  {
    name: 'P<S, NodeResizeInfeasible with A: expand to A',
    facts: { resizeStatus: 'NodeResizeInfeasible', allocatedBytes: 3n * Gi, requestedBytes: 4n * Gi },
    expect: expand(3n, false),
  },
  { name: 'P<S, NodeResizeInfeasible without A: expand to S', facts: { resizeStatus: 'NodeResizeInfeasible' }, expect: expand(2n) },
  {
    name: 'P<S, NodeResizePending, P >= A: node finishes, nothing',
    facts: { resizeStatus: 'NodeResizePending', allocatedBytes: 1n * Gi, requestedBytes: 3n * Gi },
    expect: { kind: 'nothing', why: 'node expansion pending' },
  },
  {
    name: 'P<S, NodeResizeInProgress, P >= A: nothing',
    facts: { resizeStatus: 'NodeResizeInProgress', allocatedBytes: 1n * Gi, requestedBytes: 3n * Gi },
    expect: { kind: 'nothing', why: 'node expansion in progress' },
  },
  {
    name: 'P<S, NodeResizePending, P < A: expand to A',
    facts: { resizeStatus: 'NodeResizePending', allocatedBytes: 2n * Gi, requestedBytes: 3n * Gi },
    expect: expand(2n, false),
  },
  { name: 'P<S, NodeResizePending without A: expand to S', facts: { resizeStatus: 'NodeResizePending', requestedBytes: 3n * Gi }, expect: expand(3n) },
  {
    name: 'P<S, ControllerResizeInProgress, uncertain: retry A',
    facts: { resizeStatus: 'ControllerResizeInProgress', allocatedBytes: 5n * Gi, requestedBytes: 3n * Gi },
    expect: expand(5n, false),
  },
  {
    name: 'P<S, ControllerResizeInProgress, final error: recover to S',
    facts: { resizeStatus: 'ControllerResizeInProgress', allocatedBytes: 5n * Gi, requestedBytes: 3n * Gi, hasFinalError: true },
    expect: expand(3n),
  },
  { name: 'P<S, ControllerResizeInProgress without A: S', facts: { resizeStatus: 'ControllerResizeInProgress' }, expect: expand(2n) },
  { name: 'P<S, same A as S: status already right', facts: { allocatedBytes: 2n * Gi }, expect: expand(2n, false) },
  // P >= S
  {
    name: 'P>=S, NodeResizeInProgress: kubelet owns it',
    facts: { pvBytes: 2n * Gi, resizeStatus: 'NodeResizeInProgress' },
    expect: { kind: 'nothing', why: 'node expansion in progress' },
  },
  {
    name: 'P>=S, NodeResizePending: kubelet owns it',
    facts: { pvBytes: 2n * Gi, resizeStatus: 'NodeResizePending' },
    expect: { kind: 'nothing', why: 'node expansion pending' },
  },
  {
    name: 'P>=S, NodeResizeInfeasible, real resizer with A: A',
    facts: { pvBytes: 3n * Gi, resizeStatus: 'NodeResizeInfeasible', allocatedBytes: 3n * Gi },
    expect: expand(3n, false),
  },
  {
    name: 'P>=S, NodeResizeInfeasible, trivial resizer: S',
    facts: { pvBytes: 3n * Gi, resizeStatus: 'NodeResizeInfeasible', allocatedBytes: 3n * Gi, supportsControlPlaneExpansion: false },
    expect: expand(2n),
  },
  { name: 'P>=S, NodeResizeInfeasible, no A: S', facts: { pvBytes: 3n * Gi, resizeStatus: 'NodeResizeInfeasible' }, expect: expand(2n) },
  {
    name: 'P>=S, ControllerResizeInProgress: A (expanded, not recorded)',
    facts: { pvBytes: 3n * Gi, resizeStatus: 'ControllerResizeInProgress', allocatedBytes: 3n * Gi },
    expect: expand(3n, false),
  },
  { name: 'P>=S, ControllerResizeInfeasible without A: S', facts: { pvBytes: 3n * Gi, resizeStatus: 'ControllerResizeInfeasible' }, expect: expand(2n) },
  { name: 'P>=S, empty, A present: A', facts: { pvBytes: 3n * Gi, allocatedBytes: 3n * Gi }, expect: expand(3n, false) },
  {
    name: 'P>=S, empty, no A, FileSystemResizePending: nothing (old API server)',
    facts: { pvBytes: 2n * Gi, fileSystemResizePending: true },
    expect: { kind: 'nothing', why: 'waiting for kubelet (FileSystemResizePending)', warnOldApiServer: true },
  },
  {
    name: 'P>=S, empty, no A: S so the driver tells about the node (old API server)',
    facts: { pvBytes: 2n * Gi },
    expect: { ...expand(2n), warnOldApiServer: true } as ExpansionPlan,
  },
];

for (const row of rows) {
  test(`planExpansion: ${row.name}`, () => {
    assert.deepEqual(planExpansion(facts(row.facts)).plan, row.expect);
  });
}

// §3.5 steps 2 and 4: the slow-set gate. The key is parked whenever the status says the driver
// called the size infeasible; a parked key waits only while the target is the size already
// allocated (the user asked for nothing new).
const gateRows: { name: string; facts: Partial<ExpansionFacts>; expect: ExpansionDecision }[] = [
  {
    name: 'infeasible, not parked yet, same size: park it and try once more',
    facts: { resizeStatus: 'ControllerResizeInfeasible', allocatedBytes: 2n * Gi },
    expect: { slowSet: 'add', plan: expand(2n, false) },
  },
  {
    name: 'infeasible, parked, same size: wait',
    facts: { resizeStatus: 'ControllerResizeInfeasible', allocatedBytes: 2n * Gi, inSlowSet: true },
    expect: { slowSet: 'add', plan: { kind: 'delay' } },
  },
  {
    name: 'infeasible, parked, the user asked for another size: expand to it',
    facts: { resizeStatus: 'ControllerResizeInfeasible', allocatedBytes: 5n * Gi, inSlowSet: true },
    expect: { slowSet: 'add', plan: expand(2n) },
  },
  {
    name: 'infeasible, parked, request at or below the PV size: the target is A, already allocated: wait',
    facts: { resizeStatus: 'ControllerResizeInfeasible', allocatedBytes: 5n * Gi, pvBytes: 3n * Gi, inSlowSet: true },
    expect: { slowSet: 'add', plan: { kind: 'delay' } },
  },
  {
    name: 'in progress, parked (a later non-infeasible status), same size: still waits',
    facts: { resizeStatus: 'ControllerResizeInProgress', allocatedBytes: 2n * Gi, inSlowSet: true },
    expect: { slowSet: 'leave', plan: { kind: 'delay' } },
  },
  {
    name: 'parked, nothing to do for the controller: nothing',
    facts: { resizeStatus: 'NodeResizePending', pvBytes: 2n * Gi, inSlowSet: true },
    expect: { slowSet: 'leave', plan: { kind: 'nothing', why: 'node expansion pending' } },
  },
  { name: 'no status, parked, no A: the allocation is written, no wait', facts: { inSlowSet: true }, expect: { slowSet: 'leave', plan: expand(2n) } },
];

for (const row of gateRows) {
  test(`planExpansion slow-set gate: ${row.name}`, () => {
    assert.deepEqual(planExpansion(facts(row.facts)), row.expect);
  });
}

test('pvcNeedsResize: bound, with a volume, request above capacity', () => {
  assert.equal(pvcNeedsResize('Bound', 'pv', 2n, 1n), true);
  assert.equal(pvcNeedsResize('Pending', 'pv', 2n, 1n), false);
  assert.equal(pvcNeedsResize('Bound', '', 2n, 1n), false);
  assert.equal(pvcNeedsResize('Bound', 'pv', 1n, 1n), false);
});
