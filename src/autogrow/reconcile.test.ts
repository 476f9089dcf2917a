// The auto-grow reconcile with fakes at its ports: an in-memory claim cache, a writer that records
// patches (or answers like the API server would: 409, 403), recorded events, the real metric
// families on a registry, a fake clock. What it writes, says and counts for each decision.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { RecordingEventRecorder } from '../../test/fakes/recording-events.js';
import { pv, pvc, type PvcOptions } from '../../test/support/builders.js';
import { KubeApiError } from '../kube/api/errors.js';
import type { Pv, Pvc } from '../model/objects.js';
import { pvcKey } from '../model/pvc.js';
import { AUTO_GROW_REACTION, AUTO_GROW_TOTAL, registerAutoGrowMetrics } from '../observability/auto-grow-metrics.js';
import { silentLogger } from '../observability/log/logger.js';
import { KeyLock } from '../queue/key-lock.js';
import type { ClaimUsage } from '../usage/volume-usage.js';
import { ClaimMemory, REFUSAL_FIRST_MS } from './claim-memory.js';
import { AutoGrowReconciler } from './reconcile.js';
import type { StorageClassView } from './policy.js';

const Gi = 1n << 30n;
const DRIVER = 'hostpath.csi.example.com';
const never = new AbortController().signal;
const fast: StorageClassView = { metadata: { name: 'fast', annotations: { 'resize.topolvm.io/enabled': 'true' } }, allowVolumeExpansion: true };

function claim(annotations: Record<string, string> = {}, o: PvcOptions = {}): Pvc {
  return pvc({
    request: '10Gi',
    capacity: '10Gi',
    storageClassName: 'fast',
    resourceVersion: '7',
    ...o,
    annotations: { 'resize.topolvm.io/storage_limit': '20Gi', ...annotations },
  });
}

function sampled(availableGi: number, sampledAtMs: number): ClaimUsage {
  return { kind: 'sampled', usage: { capacityBytes: 10n * Gi, availableBytes: BigInt(availableGi * 1024) * (Gi / 1024n), sampledAtMs } };
}

interface Patch {
  namespace: string;
  name: string;
  patch: Record<string, unknown>;
}

function setup(first: Pvc, o: { failures?: number; answer?: (patch: Patch) => Pvc | Error } = {}) {
  const clock = new FakeClock(Date.parse('2026-08-30T12:00:00Z'));
  const claims = new Map<string, Pvc>([[pvcKey(first), first]]);
  const volumes = new Map<string, Pv>([['pv-1', pv({ name: 'pv-1', driver: DRIVER })]]);
  const usage = new Map<string, ClaimUsage>();
  const patches: Patch[] = [];
  const events = new RecordingEventRecorder();
  const registry = new Registry();
  const memory = new ClaimMemory();
  memory.observe(first, clock.now() - 3_600_000);
  const reconciler = new AutoGrowReconciler({
    pvcs: { get: (key) => claims.get(key), writeBack: (obj) => (claims.set(pvcKey(obj), obj), true) },
    pvs: { get: (name) => volumes.get(name) },
    classes: { get: (name) => (name === 'fast' ? fast : undefined) },
    serves: (v) => v.spec.csi?.driver === DRIVER,
    usage: { usageOf: (key) => usage.get(key) },
    memory,
    resizeFailures: () => o.failures ?? 0,
    writer: {
      patchClaim: async (namespace, name, patch) => {
        patches.push({ namespace, name, patch });
        const answer = o.answer?.({ namespace, name, patch }) ?? {
          ...claims.get(`${namespace}/${name}`)!,
          metadata: { ...first.metadata, resourceVersion: '8' },
        };
        if (answer instanceof Error) throw answer;
        return answer;
      },
    },
    events,
    metrics: registerAutoGrowMetrics(registry),
    defaults: { cooldownMs: 8 * 3_600_000, minStepBytes: Gi, dryRun: false },
    keyLock: new KeyLock(),
    clock,
    log: silentLogger,
  });
  const key = pvcKey(first);
  const counts = async () =>
    Object.fromEntries(
      ((await registry.getSingleMetric(AUTO_GROW_TOTAL)?.get())?.values ?? []).filter((v) => v.value > 0).map((v) => [v.labels['result'], v.value]),
    );
  const reactions = async () =>
    (await registry.getSingleMetric(AUTO_GROW_REACTION)?.get())?.values.find((v) => (v as { metricName?: string }).metricName?.endsWith('_count'))?.value;
  return { clock, claims, usage, patches, events, memory, reconciler, key, counts, reactions, set: (c: Pvc) => claims.set(key, c) };
}

test('grow: one merge patch with the request, the last-grow record and the resourceVersion; a Normal event; counted with its reaction time', async () => {
  const s = setup(claim());
  s.usage.set(s.key, sampled(0.5, s.clock.now() - 30_000));
  assert.deepEqual(await s.reconciler.reconcile(s.key, never), { kind: 'done' });
  assert.equal(s.patches.length, 1);
  const { patch } = s.patches[0]!;
  assert.deepEqual(patch['spec'], { resources: { requests: { storage: '11Gi' } } });
  const metadata = patch['metadata'] as { resourceVersion: string; annotations: Record<string, string> };
  assert.equal(metadata.resourceVersion, '7');
  assert.deepEqual(JSON.parse(metadata.annotations['auto-grow.csi-resizer.io/last-grow']!), {
    at: '2026-08-30T12:00:00Z',
    from: '10Gi',
    to: '11Gi',
    filesystemBytes: String(10n * Gi),
  });
  assert.deepEqual(
    s.events.events.map((e) => [e.type, e.reason, e.message]),
    [['Normal', 'AutoGrowRequested', 'Raised the storage request from 10Gi to 11Gi: 512Mi of 10Gi free (threshold 1Gi)']],
  );
  assert.deepEqual(await s.counts(), { grown: 1 });
  assert.equal(await s.reactions(), 1);
  assert.equal(s.claims.get(s.key)?.metadata.resourceVersion, '8', 'the stored object is written back to the cache');
});

test('a claim the usage did not cross: nothing written, nothing counted', async () => {
  const s = setup(claim());
  s.usage.set(s.key, sampled(5, s.clock.now() - 30_000));
  await s.reconciler.reconcile(s.key, never);
  assert.deepEqual(s.patches, []);
  assert.deepEqual(await s.counts(), {});
});

test('a resize in backoff (a bigger request the resize queue failed): the claim is not idle, nothing is written', async () => {
  const s = setup(claim({}, { request: '12Gi', resizeStatus: 'ControllerResizeInProgress', allocated: '12Gi' }), { failures: 2 });
  s.usage.set(s.key, sampled(0.5, s.clock.now() - 30_000));
  await s.reconciler.reconcile(s.key, never);
  assert.deepEqual(s.patches, []);
});

test('a volume of another driver is left alone, even when opted in', async () => {
  const s = setup(claim({}, { volumeName: 'pv-other' }));
  s.usage.set(s.key, sampled(0.5, s.clock.now() - 30_000));
  assert.equal(s.reconciler.triage(s.key), 'skip');
  await s.reconciler.reconcile(s.key, never);
  assert.deepEqual(s.patches, []);
});

test('dry-run: an event once per target, counted every time, nothing written', async () => {
  const s = setup(claim({ 'auto-grow.csi-resizer.io/dry-run': 'true' }));
  s.usage.set(s.key, sampled(0.5, s.clock.now() - 30_000));
  await s.reconciler.reconcile(s.key, never);
  await s.reconciler.reconcile(s.key, never);
  assert.deepEqual(s.patches, []);
  assert.deepEqual(
    s.events.events.map((e) => [e.type, e.reason, e.message]),
    [['Normal', 'AutoGrowDryRun', 'Dry run: would raise the storage request from 10Gi to 11Gi: 512Mi of 10Gi free (threshold 1Gi)']],
  );
  assert.deepEqual(await s.counts(), { dry_run: 2 });
});

test('a conflict (the claim changed since it was read): no event, not counted, decided again on its next version', async () => {
  const s = setup(claim(), { answer: () => new KubeApiError(409, 'Conflict', 'the object has been modified') });
  s.usage.set(s.key, sampled(0.5, s.clock.now() - 30_000));
  assert.deepEqual(await s.reconciler.reconcile(s.key, never), { kind: 'done' });
  assert.equal(s.patches.length, 1);
  assert.deepEqual(s.events.events, []);
  assert.deepEqual(await s.counts(), {});
  // The user's edit arrives: a bigger request, so the claim is resizing and auto-grow stays out.
  s.set(claim({}, { request: '15Gi', resourceVersion: '9' }));
  await s.reconciler.reconcile(s.key, never);
  assert.equal(s.patches.length, 1);
});

test('a refusal (quota): a Warning with the API message, counted, and a slow retry that doubles, not a storm', async () => {
  const quota =
    'persistentvolumeclaims "data" is forbidden: exceeded quota: storage, requested: requests.storage=1Gi, used: requests.storage=10Gi, limited: requests.storage=10Gi';
  const s = setup(claim(), { answer: () => new KubeApiError(403, 'Forbidden', quota) });
  s.usage.set(s.key, sampled(0.5, s.clock.now() - 30_000));
  await s.reconciler.reconcile(s.key, never);
  assert.deepEqual(
    s.events.events.map((e) => [e.type, e.reason, e.message]),
    [['Warning', 'AutoGrowRefused', `The API server refused the storage request 11Gi: ${quota}`]],
  );
  // Held back: neither a poll nor a reconcile tries again before the retry time.
  s.clock.advance(REFUSAL_FIRST_MS - 1);
  assert.equal(s.reconciler.triage(s.key), 'skip');
  await s.reconciler.reconcile(s.key, never);
  assert.equal(s.patches.length, 1);
  s.clock.advance(1);
  assert.equal(s.reconciler.triage(s.key), 'measure');
  await s.reconciler.reconcile(s.key, never);
  assert.equal(s.patches.length, 2);
  // The second refusal waits twice as long.
  s.clock.advance(2 * REFUSAL_FIRST_MS - 1);
  assert.equal(s.reconciler.triage(s.key), 'skip');
  s.clock.advance(1);
  assert.equal(s.reconciler.triage(s.key), 'measure');
  assert.deepEqual(await s.counts(), { refused: 2 });
});

test('any other failed write is thrown, for the queue to retry with backoff', async () => {
  const s = setup(claim(), { answer: () => new KubeApiError(500, 'InternalError', 'etcd is down') });
  s.usage.set(s.key, sampled(0.5, s.clock.now() - 30_000));
  await assert.rejects(s.reconciler.reconcile(s.key, never), /patching PVC ns\/data: etcd is down/);
  assert.deepEqual(s.events.events, []);
});

test('the limit: recorded on the claim and a Warning once per limit value, counted every time', async () => {
  const s = setup(claim({ 'resize.topolvm.io/storage_limit': '10Gi' }), {
    answer: (p) => {
      const annotations = (p.patch['metadata'] as { annotations: Record<string, string> }).annotations;
      return claim({ 'resize.topolvm.io/storage_limit': '10Gi', ...annotations }, { resourceVersion: '8' });
    },
  });
  s.usage.set(s.key, sampled(0.5, s.clock.now() - 30_000));
  await s.reconciler.reconcile(s.key, never);
  await s.reconciler.reconcile(s.key, never);
  assert.deepEqual(
    s.patches.map((p) => p.patch),
    [{ metadata: { resourceVersion: '7', annotations: { 'auto-grow.csi-resizer.io/limit-reached': '10Gi' } } }],
  );
  assert.deepEqual(
    s.events.events.map((e) => [e.type, e.reason]),
    [['Warning', 'AutoGrowLimitReached']],
  );
  assert.match(s.events.events[0]!.message, /at its limit resize\.topolvm\.io\/storage_limit=10Gi: 512Mi of 10Gi free \(threshold 1Gi\)\. Raise the limit/);
  assert.deepEqual(await s.counts(), { limit_reached: 2 });
});

test('an invalid policy: one Warning listing every bad value; again only when the message changes', async () => {
  const s = setup(claim({ 'resize.topolvm.io/threshold': '150%', 'auto-grow.csi-resizer.io/cooldown': 'soon' }));
  assert.equal(s.reconciler.triage(s.key), 'evaluate');
  await s.reconciler.reconcile(s.key, never);
  await s.reconciler.reconcile(s.key, never);
  assert.equal(s.events.events.length, 1);
  assert.match(s.events.events[0]!.message, /resize\.topolvm\.io\/threshold: "150%".*auto-grow\.csi-resizer\.io\/cooldown: "soon"/);
  s.set(claim({ 'resize.topolvm.io/threshold': '200%' }));
  await s.reconciler.reconcile(s.key, never);
  assert.deepEqual(
    s.events.events.map((e) => e.reason),
    ['AutoGrowInvalidPolicy', 'AutoGrowInvalidPolicy'],
  );
  assert.deepEqual(s.patches, []);
});

test('usage unavailable: counted; a Warning once per cause, none while the kubelet has not measured it yet', async () => {
  const s = setup(claim());
  s.usage.set(s.key, { kind: 'unavailable', reason: 'notReported', message: 'kubelet on node n1 reports no usage of ns/data' });
  await s.reconciler.reconcile(s.key, never);
  assert.equal(s.events.events.length, 0);
  s.usage.set(s.key, { kind: 'unavailable', reason: 'unreachable', message: 'kubelet on node n1 (127.0.0.1:1): connect ECONNREFUSED' });
  await s.reconciler.reconcile(s.key, never);
  await s.reconciler.reconcile(s.key, never);
  assert.deepEqual(
    s.events.events.map((e) => [e.type, e.reason, e.message]),
    [['Warning', 'AutoGrowUsageUnavailable', 'kubelet on node n1 (127.0.0.1:1): connect ECONNREFUSED']],
  );
  assert.deepEqual(await s.counts(), { usage_unavailable: 3 });
  // Usage back, then gone again for the same cause: said again.
  s.usage.set(s.key, sampled(5, s.clock.now()));
  await s.reconciler.reconcile(s.key, never);
  s.usage.set(s.key, { kind: 'unavailable', reason: 'unreachable', message: 'kubelet on node n1 (127.0.0.1:1): connect ECONNREFUSED' });
  await s.reconciler.reconcile(s.key, never);
  assert.equal(s.events.withReason('AutoGrowUsageUnavailable').length, 2);
});

test('cooldown: counted, nothing written; the reaction time counts from the first sample that needed more', async () => {
  const lastGrow = JSON.stringify({ at: '2026-08-30T10:00:00Z', from: '9Gi', to: '10Gi', filesystemBytes: String(9n * Gi) });
  const s = setup(claim({ 'auto-grow.csi-resizer.io/last-grow': lastGrow, 'auto-grow.csi-resizer.io/cooldown': '3h' }));
  const firstNeedMs = s.clock.now() - 30_000;
  s.usage.set(s.key, sampled(0.5, firstNeedMs));
  await s.reconciler.reconcile(s.key, never);
  assert.deepEqual(s.patches, []);
  assert.deepEqual(await s.counts(), { cooldown: 1 });
  s.clock.advance(3_600_000);
  s.usage.set(s.key, sampled(0.25, s.clock.now() - 30_000));
  await s.reconciler.reconcile(s.key, never);
  assert.equal(s.patches.length, 1);
  assert.deepEqual(await s.counts(), { cooldown: 1, grown: 1 });
  assert.equal(await s.reactions(), 1);
});
