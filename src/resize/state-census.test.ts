import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import type { Pv, Pvc, PvcCondition } from '../model/objects.js';
import { pv, pvc } from '../../test/support/builders.js';
import { createMetrics, type Metrics } from '../observability/metrics.js';
import { OLDEST_METRIC, PVCS_METRIC, registerResizeStateMetrics } from '../observability/resize-state.js';
import { ResizeStateCensus, type ResizeStateCensusOptions } from './state-census.js';

const DRIVER = 'mock.csi.k8s.io';

// A 1Gi volume of this driver.
const ours = { capacity: '1Gi', driver: DRIVER };

const cond = (type: string, at = '2024-01-01T00:00:00Z', status = 'True'): PvcCondition => ({ type, status, lastTransitionTime: at });

function storeOf<T extends { metadata: { name: string; namespace?: string } }>(items: T[]) {
  const key = (o: T) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);
  return { list: () => items, get: (k: string) => items.find((o) => key(o) === k) };
}

/** The census registered as the process registers it: the gauges over the census. */
function registerCensus(metrics: Metrics, options: ResizeStateCensusOptions): ResizeStateCensus {
  const census = new ResizeStateCensus(options);
  registerResizeStateMetrics({ registry: metrics.registry, snapshot: () => census.count() });
  return census;
}

async function scrape(text: Promise<string>, metric: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await text).split('\n')) {
    if (!line.startsWith(metric)) continue;
    const m = /^(\S+?)(\{.*\})? (\S+)$/.exec(line);
    if (m) out.set(m[2] ?? '', Number(m[3]));
  }
  return out;
}

/** The two gauges as a scrape shows them: PVCs by state, and the age of the oldest unfinished one. */
async function gauges(metrics: Metrics): Promise<{ counts: Record<string, number>; oldestSeconds: number | undefined }> {
  const byState = await scrape(metrics.registry.metrics(), PVCS_METRIC);
  const counts = Object.fromEntries([...byState].map(([labels, value]) => [/state="(\w+)"/.exec(labels)?.[1] ?? labels, value]));
  return { counts, oldestSeconds: (await scrape(metrics.registry.metrics(), OLDEST_METRIC)).get('') };
}

test("gauges count this driver's PVCs by state, every state always present, never a PVC name", async () => {
  const clock = new FakeClock(Date.parse('2024-01-01T00:10:00Z'));
  const metrics = createMetrics();
  const pvcs = [
    pvc({ name: 'a', uid: 'uid-a', request: '2Gi', capacity: '1Gi', volumeName: 'pv-a' }),
    pvc({
      name: 'b',
      uid: 'uid-b',
      request: '2Gi',
      capacity: '1Gi',
      volumeName: 'pv-b',
      resizeStatus: 'ControllerResizeInfeasible',
      conditions: [cond('ControllerResizeError', '2024-01-01T00:05:00Z')],
    }),
    pvc({
      name: 'c',
      uid: 'uid-c',
      request: '2Gi',
      capacity: '1Gi',
      volumeName: 'pv-c',
      resizeStatus: 'NodeResizePending',
      conditions: [cond('FileSystemResizePending', '2024-01-01T00:09:00Z')],
    }),
    pvc({ name: 'd', uid: 'uid-d', request: '1Gi', capacity: '1Gi', volumeName: 'pv-d' }),
    // Another driver's volume and an unbound claim are not ours.
    pvc({ name: 'e', uid: 'uid-e', request: '2Gi', capacity: '1Gi', volumeName: 'pv-other' }),
    pvc({ name: 'f', uid: 'uid-f', request: '2Gi', capacity: '1Gi', volumeName: '' }),
  ];
  const pvs = [
    pv({ ...ours, name: 'pv-a' }),
    pv({ ...ours, name: 'pv-b' }),
    pv({ ...ours, name: 'pv-c' }),
    pv({ ...ours, name: 'pv-d' }),
    pv({ ...ours, name: 'pv-other', driver: 'other.csi.example.com' }),
  ];
  registerCensus(metrics, { driverName: DRIVER, pvcs: storeOf(pvcs), pvs: storeOf(pvs), clock });

  const counts = await scrape(metrics.registry.metrics(), PVCS_METRIC);
  assert.deepEqual(Object.fromEntries(counts), {
    '{state="waiting"}': 1,
    '{state="in_progress"}': 0,
    '{state="node_pending"}': 1,
    '{state="infeasible"}': 1,
    '{state="backoff"}': 0,
  });
  // The infeasible one started at 00:05 by its condition; now is 00:10.
  assert.deepEqual(Object.fromEntries(await scrape(metrics.registry.metrics(), OLDEST_METRIC)), { '': 300 });
  assert.doesNotMatch(await metrics.registry.metrics(), /claim|"a"|pv-a/);

  // Time passes; "a" has no condition, so its age counts from when we first saw it (00:10).
  clock.advance(900_000);
  assert.equal((await gauges(metrics)).oldestSeconds, 1200);
  // Everything finishes: counts drop to zero, the age to 0, and the first-seen times are forgotten.
  pvcs.splice(0, pvcs.length, pvc({ name: 'a', uid: 'uid-a', request: '2Gi', capacity: '2Gi', volumeName: 'pv-a' }));
  const done = await gauges(metrics);
  assert.equal(done.oldestSeconds, 0);
  assert.deepEqual(Object.values(done.counts), [0, 0, 0, 0, 0]);
});

test("the request change starts the clock; the queue's requeue count marks backoff", async () => {
  const clock = new FakeClock(Date.parse('2024-01-01T00:00:00Z'));
  const metrics = createMetrics();
  const claim = pvc({ name: 'a', uid: 'uid-a', request: '2Gi', capacity: '1Gi', volumeName: 'pv-a' });
  const requeues = new Map<string, number>();
  const state = registerCensus(metrics, {
    driverName: DRIVER,
    pvcs: storeOf([claim]),
    pvs: storeOf([pv({ ...ours, name: 'pv-a' })]),
    clock,
    requeues: (key) => requeues.get(key) ?? 0,
  });
  state.requestChanged(claim);
  clock.advance(42_000);
  assert.equal((await gauges(metrics)).oldestSeconds, 42);
  assert.equal((await gauges(metrics)).counts['waiting'], 1);
  requeues.set('ns/a', 1);
  assert.equal((await gauges(metrics)).counts['backoff'], 1);
  assert.equal((await gauges(metrics)).counts['waiting'], 0);
});

test('a ModifyingVolume condition counts toward the oldest age', async () => {
  const clock = new FakeClock(Date.parse('2024-01-01T01:00:00Z'));
  const metrics = createMetrics();
  const claim = pvc({
    name: 'm',
    uid: 'uid-m',
    request: '1Gi',
    capacity: '1Gi',
    volumeName: 'pv-m',
    conditions: [cond('ModifyingVolume', '2024-01-01T00:59:00Z')],
  });
  registerCensus(metrics, { driverName: DRIVER, pvcs: storeOf([claim]), pvs: storeOf([pv({ ...ours, name: 'pv-m' })]), clock });
  assert.equal((await gauges(metrics)).oldestSeconds, 60);
  assert.deepEqual(Object.values((await gauges(metrics)).counts), [0, 0, 0, 0, 0]);
});

test("ownership is the controllers' decision: a migrated in-tree PV counts, the annotation alone does not, the scope applies", async () => {
  const EBS = 'ebs.csi.aws.com'; // a CSI migration target
  const annotated = (o: Parameters<typeof pvc>[0], driver: string): Pvc => {
    const claim = pvc(o);
    return { ...claim, metadata: { ...claim.metadata, annotations: { 'volume.kubernetes.io/storage-resizer': driver } } };
  };
  const inTree: Pv = { metadata: { name: 'pv-intree' }, spec: { capacity: { storage: '1Gi' }, awsElasticBlockStore: { volumeID: 'vol-1' } } } as Pv;
  const migrated = annotated({ name: 'migrated', request: '2Gi', capacity: '1Gi', volumeName: 'pv-intree' }, EBS);
  const count = async (driverName: string, pvcs: Pvc[], pvs: Pv[], scope?: { includes(pv: Pv): boolean }) => {
    const metrics = createMetrics();
    registerCensus(metrics, { driverName, pvcs: storeOf(pvcs), pvs: storeOf(pvs), ...(scope ? { scope } : {}) });
    return (await gauges(metrics)).counts['waiting'];
  };

  assert.equal(await count(EBS, [migrated], [inTree]), 1, 'the in-tree PV migrated to the driver is counted');
  assert.equal(await count(EBS, [migrated], []), 0, 'no PV in the cache: the controllers would not act either');
  // Not a migration target: the annotation does not make another driver's volume ours.
  const foreign = annotated({ name: 'foreign', request: '2Gi', capacity: '1Gi', volumeName: 'pv-other' }, DRIVER);
  assert.equal(await count(DRIVER, [foreign], [pv({ ...ours, name: 'pv-other', driver: 'other.csi.example.com' })]), 0);
  // --node-deployment: a volume outside this replica's scope is another replica's to count.
  const mine = pvc({ name: 'mine', request: '2Gi', capacity: '1Gi', volumeName: 'pv-a' });
  assert.equal(await count(DRIVER, [mine], [pv({ ...ours, name: 'pv-a' })], { includes: () => false }), 0);
  assert.equal(await count(DRIVER, [mine], [pv({ ...ours, name: 'pv-a' })], { includes: (p) => p.metadata.name === 'pv-a' }), 1);
});
