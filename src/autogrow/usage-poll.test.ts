// The auto-grow poll with a fake usage source and Node reader: which claims it measures, which
// nodes it asks (only those whose pods mount a claim to measure), how long it keeps a Node, and
// what it queues.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { KubeApiError } from '../kube/api/errors.js';
import type { Node } from '../model/objects.js';
import { createLogger } from '../observability/log/logger.js';
import type { ClaimUsage, NodeClaims, UsageReport, VolumeUsageSource } from '../usage/volume-usage.js';
import { claimKey } from '../usage/volume-usage.js';
import type { PodMount } from './mounts.js';
import { UsagePoll, type Triage } from './usage-poll.js';

const never = new AbortController().signal;

function setup(o: { pods: PodMount[]; triage: Record<string, Triage>; missingNodes?: string[]; prometheus?: boolean }) {
  const clock = new FakeClock();
  const asked: NodeClaims[][] = [];
  const nodeReads: string[] = [];
  const queued: string[] = [];
  const lines: string[] = [];
  const source: VolumeUsageSource = {
    readUsage: async (nodes: readonly NodeClaims[]): Promise<UsageReport> => {
      asked.push([...nodes]);
      const claims = new Map<string, ClaimUsage>();
      for (const n of nodes) {
        for (const c of n.claims) {
          claims.set(claimKey(c), { kind: 'sampled', usage: { capacityBytes: 100n, availableBytes: 50n, sampledAtMs: clock.now() } });
        }
      }
      return { claims, failures: [] };
    },
  };
  const poll = new UsagePoll({
    source,
    nodes: o.prometheus
      ? undefined
      : {
          getNode: async (name): Promise<Node> => {
            nodeReads.push(name);
            if (o.missingNodes?.includes(name)) throw new KubeApiError(404, 'NotFound', `nodes "${name}" not found`);
            return { metadata: { name, labels: { big: 'x'.repeat(100) } }, status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] } };
          },
        },
    pods: { list: () => o.pods },
    candidates: () => Object.keys(o.triage),
    triage: (key) => o.triage[key] ?? 'skip',
    enqueue: (key) => queued.push(key),
    intervalMs: 60_000,
    concurrency: 2,
    clock,
    log: createLogger({ verbosity: 0, format: 'text', write: (l) => lines.push(l) }),
  });
  return { clock, poll, asked, nodeReads, queued, lines };
}

const nodesOf = (asked: NodeClaims[]) =>
  Object.fromEntries(asked.map((n) => [n.node.metadata.name, n.claims.map(claimKey).sort()]).sort(([a], [b]) => String(a).localeCompare(String(b))));

test('only the claims to measure, only on the nodes whose pods mount them; the rest by triage', async () => {
  const s = setup({
    pods: [
      { claims: 'ns/a', nodeName: 'n1' },
      { claims: ['ns/b', 'ns/idle'], nodeName: 'n2' },
      { claims: 'ns/idle', nodeName: 'n3' },
      { claims: 'ns/a', nodeName: '' },
      { claims: 'ns/unmounted-elsewhere', nodeName: 'n4' },
    ],
    triage: { 'ns/a': 'measure', 'ns/b': 'measure', 'ns/idle': 'skip', 'ns/bad': 'evaluate', 'ns/unmounted': 'measure' },
  });
  await s.poll.pollOnce(never);
  assert.deepEqual(nodesOf(s.asked[0]!), { n1: ['ns/a'], n2: ['ns/b'] });
  assert.deepEqual(s.nodeReads.sort(), ['n1', 'n2']);
  assert.deepEqual(s.queued.sort(), ['ns/a', 'ns/b', 'ns/bad']);
  assert.equal(s.poll.usageOf('ns/a')?.kind, 'sampled');
  assert.equal(s.poll.usageOf('ns/unmounted'), undefined, 'not mounted: no usage, not queued');
  // The Node is kept lean: addresses and port only.
  assert.deepEqual(s.asked[0]!.find((n) => n.node.metadata.name === 'n1')?.node, {
    metadata: { name: 'n1' },
    status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] },
  });
});

test('a Node is read once and kept for minutes; one the API server does not have makes its claims unavailable', async () => {
  const s = setup({
    pods: [
      { claims: 'ns/a', nodeName: 'n1' },
      { claims: 'ns/gone', nodeName: 'n-gone' },
    ],
    triage: { 'ns/a': 'measure', 'ns/gone': 'measure' },
    missingNodes: ['n-gone'],
  });
  await s.poll.pollOnce(never);
  s.clock.advance(60_000);
  await s.poll.pollOnce(never);
  assert.deepEqual(s.nodeReads.sort(), ['n-gone', 'n-gone', 'n1']);
  assert.deepEqual(s.poll.usageOf('ns/gone'), { kind: 'unavailable', reason: 'noAddress', message: 'node n-gone does not exist' });
  assert.deepEqual(nodesOf(s.asked[1]!), { n1: ['ns/a'] });
  // Logged once, when it started failing, not at every poll.
  assert.equal(s.lines.filter((l) => l.includes('Cannot read volume usage')).length, 1);
  s.clock.advance(10 * 60_000);
  await s.poll.pollOnce(never);
  assert.equal(s.nodeReads.filter((n) => n === 'n1').length, 2, 'read again after ten minutes');
});

test('nothing to measure: no node read, no usage read', async () => {
  const s = setup({ pods: [{ claims: 'ns/a', nodeName: 'n1' }], triage: { 'ns/a': 'skip' } });
  await s.poll.pollOnce(never);
  assert.deepEqual(s.nodeReads, []);
  assert.deepEqual(s.asked, [[]]);
  assert.deepEqual(s.queued, []);
});

test('Prometheus: no Node is read; the source gets the node names only', async () => {
  const s = setup({ pods: [{ claims: 'ns/a', nodeName: 'n1' }], triage: { 'ns/a': 'measure' }, prometheus: true });
  await s.poll.pollOnce(never);
  assert.deepEqual(s.nodeReads, []);
  assert.deepEqual(
    s.asked[0]!.map((n) => n.node),
    [{ metadata: { name: 'n1' } }],
  );
});

test('run: one poll per interval on the clock, until the signal aborts', async () => {
  const s = setup({ pods: [{ claims: 'ns/a', nodeName: 'n1' }], triage: { 'ns/a': 'measure' } });
  const stop = new AbortController();
  const running = s.poll.run(stop.signal);
  await s.clock.advanceAsync(0);
  assert.equal(s.poll.count, 1);
  await s.clock.advanceAsync(59_999);
  assert.equal(s.poll.count, 1);
  await s.clock.advanceAsync(1);
  assert.equal(s.poll.count, 2);
  stop.abort();
  await running;
  assert.equal(s.clock.pendingTimers, 0);
});
