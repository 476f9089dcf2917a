// The auto-grow scenario's pure parts: the nodes and what they mount, the crossings of each run,
// the reaction read from what the harness saw, the poll count from the stand-ins' requests, and
// the flags.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  crossedAvailable,
  crossingSchedule,
  filesystemBytes,
  healthyAvailable,
  isEmptyNode,
  mean,
  parseAutoGrowShape,
  parseIntervalSeconds,
  planNodes,
  pollsSeen,
  reaction,
  reactionSummary,
  requestsToEmptyNodes,
} from '../../bench/lib/autogrow-plan.js';

const GI = 1n << 30n;

test('2000 claims over 100 kubelets: every fifth node has no opted-in claim, the other 80 have 25 each', () => {
  const nodes = planNodes({ claims: 2000, kubelets: 100, emptyEvery: 5, plainPerNode: 5 });
  assert.equal(nodes.length, 100);
  const empty = nodes.filter((_, i) => isEmptyNode({ emptyEvery: 5 }, i));
  assert.equal(empty.length, 20);
  assert.ok(empty.every((n) => n.optedIn.length === 0 && n.plain.length === 5));
  const takers = nodes.filter((_, i) => !isEmptyNode({ emptyEvery: 5 }, i));
  assert.ok(takers.every((n) => n.optedIn.length === 25));
  // Each claim on exactly one node; plain claims numbered apart from opted-in ones.
  const all = nodes.flatMap((n) => n.optedIn).sort((a, b) => a - b);
  assert.deepEqual(
    all,
    Array.from({ length: 2000 }, (_, j) => j),
  );
  assert.equal(new Set(nodes.flatMap((n) => n.plain)).size, 500);
  assert.equal(new Set(nodes.map((n) => n.name)).size, 100);
});

test('claims that do not divide evenly: the first nodes take one more', () => {
  const nodes = planNodes({ claims: 10, kubelets: 4, emptyEvery: 0, plainPerNode: 0 });
  assert.deepEqual(
    nodes.map((n) => n.optedIn),
    [
      [0, 4, 8],
      [1, 5, 9],
      [2, 6],
      [3, 7],
    ],
  );
});

test('a shape where no node takes opted-in claims is refused', () => {
  assert.throws(() => planNodes({ claims: 10, kubelets: 1, emptyEvery: 1, plainPerNode: 0 }), /no node takes opted-in claims/);
});

test('each run crosses claims of its own, one per slot, evenly over the span', () => {
  const run0 = crossingSchedule({ run: 0, count: 4, spanMs: 60_000, claims: 100 });
  const run1 = crossingSchedule({ run: 1, count: 4, spanMs: 60_000, claims: 100 });
  assert.deepEqual(
    run0.map((c) => c.atMs),
    [7_500, 22_500, 37_500, 52_500],
  );
  assert.deepEqual(
    run0.map((c) => c.claim),
    [0, 1, 2, 3],
  );
  assert.deepEqual(
    run1.map((c) => c.claim),
    [4, 5, 6, 7],
  );
  // Consecutive claims sit on different nodes (planNodes deals them out round-robin).
  const nodes = planNodes({ claims: 100, kubelets: 10, emptyEvery: 5, plainPerNode: 0 });
  const nodeOf = (j: number) => nodes.find((n) => n.optedIn.includes(j))!.name;
  assert.equal(new Set(run0.map((c) => nodeOf(c.claim))).size, 4);
});

test('more runs than claims for their crossings: refused before the run', () => {
  assert.throws(() => crossingSchedule({ run: 5, count: 20, spanMs: 1000, claims: 100 }), /run 6 needs claims 100\.\.119, but there are 100/);
});

test('reaction: crossing to write, and from the request whose answer led to the write', () => {
  // Crossed at 10 s; the stand-in was asked at 5 s (before) and at 62 s (the next poll); written at 62.4 s.
  const r = reaction({ crossedAtMs: 10_000, writtenAtMs: 62_400, requestsAtMs: [5_000, 62_000, 122_000] });
  assert.deepEqual(r, { totalMs: 52_400, fromPollMs: 400 });
});

test('reaction: not written, or written with no request after the crossing, is no reaction', () => {
  assert.equal(reaction({ crossedAtMs: 10_000, requestsAtMs: [62_000] }), undefined);
  assert.equal(reaction({ crossedAtMs: 10_000, writtenAtMs: 11_000, requestsAtMs: [5_000] }), undefined);
});

test('reaction: a request that arrived just before the crossing, answered after it, still counts', () => {
  // The stand-in reads the volumes after authenticating the request: a crossing set meanwhile is in the answer.
  assert.deepEqual(reaction({ crossedAtMs: 10_000, writtenAtMs: 10_500, requestsAtMs: [9_990] }), { totalMs: 500, fromPollMs: 510 });
});

test('reaction summary: nearest-rank p50 and p99 in seconds', () => {
  const reactions = Array.from({ length: 100 }, (_, i) => ({ totalMs: (i + 1) * 1000, fromPollMs: (i + 1) * 10 }));
  const s = reactionSummary(reactions);
  assert.equal(s.p50, 50.5);
  assert.equal(s.p99, 99);
  assert.equal(s.fromPollP50, 0.505);
  assert.equal(s.fromPollP99, 0.99);
});

test('polls seen: the fewest requests any node with an opted-in claim got; empty nodes counted apart', () => {
  const perNode = new Map([
    ['a', 3],
    ['b', 2],
    ['c', 3],
    ['empty', 0],
  ]);
  assert.equal(pollsSeen(perNode, ['a', 'b', 'c']), 2);
  assert.equal(pollsSeen(perNode, ['a', 'missing']), 0);
  assert.equal(pollsSeen(perNode, []), 0);
  assert.equal(requestsToEmptyNodes(perNode, ['empty']), 0);
  assert.equal(requestsToEmptyNodes(new Map([['empty', 2]]), ['empty']), 2);
});

test('free space: healthy claims keep 25 to 74 % free, a crossed one 5 %, under the default 10 % threshold', () => {
  const fs = filesystemBytes(10n * GI);
  assert.equal(fs, (10n * GI * 97n) / 100n);
  for (let j = 0; j < 200; j++) {
    const free = healthyAvailable(fs, j);
    assert.ok(free >= (fs * 25n) / 100n && free <= (fs * 74n) / 100n, `claim ${j}: ${free}`);
  }
  assert.ok(crossedAvailable(fs) * 10n < fs);
});

test('mean of samples; no samples is NaN', () => {
  assert.equal(mean([1, 2, 3, 6]), 3);
  assert.ok(Number.isNaN(mean([])));
});

test('flags: --autogrow C:K and --autogrow-interval in seconds or minutes, with bounds', () => {
  assert.deepEqual(parseAutoGrowShape('2000:100'), { claims: 2000, kubelets: 100 });
  assert.throws(() => parseAutoGrowShape('2000'), /want CLAIMS:KUBELETS/);
  assert.throws(() => parseAutoGrowShape('0:10'), /want CLAIMS:KUBELETS/);
  assert.throws(() => parseAutoGrowShape('10:501'), /want CLAIMS:KUBELETS/);
  assert.equal(parseIntervalSeconds('1m'), 60);
  assert.equal(parseIntervalSeconds('15s'), 15);
  assert.throws(() => parseIntervalSeconds('1s'), /from 5s to 10m/);
  assert.throws(() => parseIntervalSeconds('1h'), /from 5s to 10m/);
  assert.throws(() => parseIntervalSeconds('1.5m'), /from 5s to 10m/);
});
