// One chaos run: N bound claims on the fault driver (its own process, volumes on disk), a resizer
// (ours or upstream's, one or two supervised replicas) talking to the API server through the
// controlled proxy, every claim grown at once, one fault in the middle of the burst, then the
// verdict: lost claims, wrong sizes, driver calls repeated after a success, resizer restarts, and
// the time until every claim was final. Every wait has a deadline.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError, sleep, type Api } from '../../bench/lib/api.js';
import { startResizer, type Impl, type ResizerFlags, type ResizerTargets } from '../../bench/lib/resizer.js';
import { createNamespace, ensureStorageClass, growAll, provisionBulk, teardown, Tracker, GI } from '../../bench/lib/workload.js';
import type { Cluster } from '../cluster/cluster.js';
import { startFaultDriverProcess, type FaultDriverProcess } from '../fakes/fault-driver-process.js';
import { ControlledProxy } from './proxy.js';
import { Supervised } from './supervisor.js';
import { claimView, pvView, verify } from './verify.js';

export const DRIVER_NAME = 'chaos.csi.test';
export const STORAGE_CLASS = 'chaos-expandable';
export const LEASE_NAMESPACE = 'default';
const LABEL = 'csi-resizer-bench';

export interface ChaosSettings {
  /** Claims grown at once. */
  n: number;
  /** Claims grown at once in the leader-election run. */
  nLeader: number;
  /** Time from the first edit to the fault. */
  faultAtMs: number;
  apiserverDownMs: number;
  etcdDownMs: number;
  blackholeMs: number;
  driverDownMs: number;
  /** A claim not final this long after the first edit is lost. */
  boundMs: number;
  /** The fault driver works this long on each ControllerExpandVolume. */
  driverDelayMs: number;
  workers: number;
  qps: number;
  burst: number;
  timeout: string;
  /** Leader election durations (both implementations): lease, renew deadline, retry period. */
  lease: { duration: string; renewDeadline: string; retryPeriod: string };
  /** The harness's own parallel API requests. */
  concurrency: number;
  /** Time after a kubelet would restart an exited resizer. */
  restartDelayMs: number;
}

export interface ChaosEnv {
  readonly cluster: Cluster;
  readonly api: Api;
  readonly proxy: ControlledProxy;
  /** The resizer user's kubeconfig, pointing at the proxy. */
  readonly kubeconfig: string;
  readonly oursEntry: string;
  readonly upstreamBin: string;
  readonly settings: ChaosSettings;
  readonly logDir: string;
  log(line: string): void;
}

export interface FaultContext {
  readonly env: ChaosEnv;
  readonly ns: string;
  readonly impl: Impl;
  readonly driver: FaultDriverProcess;
  readonly replicas: readonly Supervised[];
  /** Claim name → the size its final state must show; a fault may change it (recreated claims). */
  readonly expected: Map<string, bigint>;
  readonly retired: Array<{ pv: string; allowedBytes: bigint[] }>;
  /** resourceVersion of the claims' list just before the burst. */
  readonly rvBeforeBurst: string;
  /** Facts the table shows beside the figures (what the fault did, observed). */
  readonly facts: string[];
  readonly leaseName: string;
}

export interface Fault {
  readonly id: string;
  readonly title: string;
  readonly impls: readonly Impl[];
  readonly replicas: 1 | 2;
  /** Before the resizer starts (untimed). */
  prepare?(ctx: Omit<FaultContext, 'replicas' | 'rvBeforeBurst'>): Promise<void>;
  /** Runs faultAtMs after the first edit; resolves once the fault is over. */
  inject(ctx: FaultContext): Promise<void>;
  /** After the verdict, before the next run (untimed); also runs when the run failed. */
  cleanup?(ctx: Omit<FaultContext, 'replicas' | 'rvBeforeBurst'>): Promise<void>;
  /** After the verdict, with the resizers' logs and the driver's call log: more facts. */
  readLogs?(ctx: FaultContext, logs: string): void;
}

export interface FaultResult {
  fault: string;
  title: string;
  impl: Impl;
  n: number;
  lost: number;
  wrongSizes: number;
  duplicateCalls: number;
  restarts: number;
  /** Undefined when some claim never became final. */
  timeToAllFinalS: number | undefined;
  facts: string[];
  /** The first lost claims and wrong sizes, for the report. */
  problems: string[];
}

export async function prepareEnv(env: ChaosEnv): Promise<void> {
  await ensureStorageClass(env.api, STORAGE_CLASS, DRIVER_NAME);
}

/** Writes the resizer user's kubeconfig with its server replaced by the proxy's address. */
export function proxiedKubeconfig(cluster: Cluster, proxy: ControlledProxy, path: string): string {
  const kc = JSON.parse(readFileSync(cluster.resizerKubeconfigPath, 'utf8')) as { clusters: Array<{ cluster: { server: string } }> };
  for (const c of kc.clusters) c.cluster.server = proxy.url;
  writeFileSync(path, JSON.stringify(kc, null, 2), { mode: 0o600 });
  return path;
}

let runs = 0;

export async function runFault(env: ChaosEnv, fault: Fault, impl: Impl): Promise<FaultResult> {
  const s = env.settings;
  runs += 1;
  const ns = `chaos-${runs}-${fault.id}-${impl}`.slice(0, 63);
  const n = fault.replicas === 2 ? s.nLeader : s.n;
  const leaseName = `external-resizer-${DRIVER_NAME.replace(/[^a-zA-Z0-9-]/g, '-')}`;
  const log = (line: string) => env.log(`${fault.id}/${impl}: ${line}`);
  await createNamespace(env.api, ns);
  // Short: the socket path inside must stay under 107 bytes.
  const dir = mkdtempSync('/tmp/rzc-');
  const handle = (pv: string) => `bench-${pv}`;
  const volumes = new Map<string, bigint>();
  volumes.set(handle(`${ns}-canary-0`), GI);
  for (let i = 0; i < n; i++) {
    volumes.set(handle(`${ns}-vol-${i}`), GI);
    volumes.set(replacementHandle(ns, i), GI);
  }
  // Grown only once the fault is over: they reach the resizer through its watches alone, so they
  // are lost if a fault left a watch dead.
  const lateCount = Math.max(2, Math.ceil(n / 10));
  for (let i = 0; i < lateCount; i++) volumes.set(handle(`${ns}-late-${i}`), GI);
  const driver = await startFaultDriverProcess({ dir, name: DRIVER_NAME, volumes, expandDelayMs: s.driverDelayMs });
  const expected = new Map<string, bigint>();
  const retired: Array<{ pv: string; allowedBytes: bigint[] }> = [];
  const facts: string[] = [];
  const base = { env, ns, impl, driver, expected, retired, facts, leaseName };
  let replicas: Supervised[] = [];
  let tracker: Tracker | undefined;
  try {
    const common = { ns, sizeGi: 1, storageClass: STORAGE_CLASS, driverName: DRIVER_NAME, concurrency: s.concurrency, deadlineMs: 10 * 60_000 };
    const t0p = Date.now();
    const [canary] = await provisionBulk(env.api, { ...common, count: 1, prefix: 'canary' });
    const claims = (await provisionBulk(env.api, { ...common, count: n, prefix: 'vol' })).map((v) => v.pvc);
    for (const c of claims) expected.set(c, 2n * GI);
    const late = (await provisionBulk(env.api, { ...common, count: lateCount, prefix: 'late' })).map((v) => v.pvc);
    log(`${n} claims provisioned in ${((Date.now() - t0p) / 1000).toFixed(1)}s`);
    tracker = await Tracker.start(env.api, ns);
    await fault.prepare?.(base);

    replicas = startReplicas(env, impl, fault.replicas, dir);
    // Synced and working: a canary grown now becomes final (the same signal for both).
    await growWhenAdmitted(env.api, ns, canary!.pvc, 2);
    await waitFinal(tracker, new Map([[canary!.pvc, 2n * GI]]), 180_000, replicas);

    const rvBeforeBurst = (await env.api.callRetry<{ metadata: { resourceVersion: string } }>('GET', `/api/v1/namespaces/${ns}/persistentvolumeclaims?limit=1`))
      .metadata.resourceVersion;
    const ctx: FaultContext = { ...base, replicas, rvBeforeBurst };
    const wallStart = Date.now();
    const t0 = performance.now();
    let faultError: unknown;
    // On purpose a delay: the fault lands this far into the burst of edits.
    const injected = sleep(s.faultAtMs)
      .then(() => fault.inject(ctx))
      .catch((err: unknown) => {
        faultError = err;
      });
    await growAll(env.api, ns, claims, 2, s.concurrency);
    log(`edits sent in ${((performance.now() - t0) / 1000).toFixed(1)}s`);
    await injected;
    if (faultError !== undefined) throw new Error(`injecting ${fault.id} failed`, { cause: faultError });
    await growAll(env.api, ns, late, 2, s.concurrency);
    for (const c of late) expected.set(c, 2n * GI);
    facts.push(`${late.length} more claims grown after the fault`);
    const allFinal = await waitFinal(tracker, expected, Math.max(0, s.boundMs - (performance.now() - t0)), []);
    const finalTimes = [...expected].map(([c, b]) => tracker!.state(c, b).pvcAt);
    const timeToAllFinalS = allFinal && finalTimes.every((t) => t !== undefined) ? (Math.max(...(finalTimes as number[])) - t0) / 1000 : undefined;
    // A marker instead of a quiet window: the canary, grown again now, turns final only once the
    // resizers have taken the keys queued before it, so a late or stray write has landed by then.
    await growWhenAdmitted(env.api, ns, canary!.pvc, 3);
    if (!(await waitFinal(tracker, new Map([[canary!.pvc, 3n * GI]]), 60_000, [])))
      facts.push('the marker claim grown after the burst did not turn final within 60 s');

    const verdict = await judge(env.api, ns, expected, retired, driver);
    const duplicateCalls = driver
      .calls()
      .filter((c) => c.event === 'call' && c.method === 'ControllerExpandVolume' && c.afterSuccess && c.at >= wallStart).length;
    const restarts = replicas.reduce((sum, r) => sum + r.restarts, 0);
    await Promise.all(replicas.map((r) => r.stop()));
    const logs = replicas
      .flatMap((r) => r.logPaths)
      .map((p) => readFileSync(p, 'utf8'))
      .join('\n');
    fault.readLogs?.(ctx, logs);
    const result: FaultResult = {
      fault: fault.id,
      title: fault.title,
      impl,
      n,
      lost: verdict.lost.length,
      wrongSizes: verdict.wrong.length,
      duplicateCalls,
      restarts,
      timeToAllFinalS,
      facts,
      problems: [...verdict.lost.slice(0, 10), ...verdict.wrong.slice(0, 10)],
    };
    log(
      `lost ${result.lost}, wrong ${result.wrongSizes}, duplicate calls ${duplicateCalls}, restarts ${restarts}, ` +
        `all final in ${timeToAllFinalS === undefined ? '-' : timeToAllFinalS.toFixed(1)}s; ${facts.join('; ')}`,
    );
    for (const p of result.problems) log(`  ${p}`);
    return result;
  } finally {
    tracker?.stop();
    await Promise.all(replicas.map((r) => r.stop()));
    await driver.stop();
    await fault.cleanup?.(base).catch((err: unknown) => log(`cleanup failed: ${String(err)}`));
    await env.api.call('DELETE', `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases/${leaseName}`).catch(() => {});
    await teardown(env.api, ns, { concurrency: s.concurrency, deadlineMs: 5 * 60_000 }).catch((err: unknown) => log(`teardown: ${String(err)}`));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The driver volume behind the PV that replaces claim i when a fault recreates it. */
export function replacementHandle(ns: string, i: number): string {
  return `chaos-${ns}-new-${i}`;
}

function startReplicas(env: ChaosEnv, impl: Impl, count: 1 | 2, dir: string): Supervised[] {
  const s = env.settings;
  const targets: ResizerTargets = {
    kubeconfig: env.kubeconfig,
    csiAddress: `unix://${join(dir, 'csi.sock')}`,
    oursEntry: env.oursEntry,
    upstreamBin: env.upstreamBin,
    logDir: env.logDir,
  };
  const leader = count === 2;
  const flags: ResizerFlags = {
    workers: s.workers,
    qps: s.qps,
    burst: s.burst,
    timeout: s.timeout,
    handleVolumeInUseError: true,
    verbosity: 2,
    leaderElection: leader,
    extraArgs: leader
      ? [
          `--leader-election-namespace=${LEASE_NAMESPACE}`,
          `--leader-election-lease-duration=${s.lease.duration}`,
          `--leader-election-renew-deadline=${s.lease.renewDeadline}`,
          `--leader-election-retry-period=${s.lease.retryPeriod}`,
        ]
      : [],
  };
  return Array.from({ length: count }, (_, i) => {
    const identity = `replica-${'ab'[i]}`;
    const label = `${impl}-${identity}`;
    // Upstream's identity is the hostname; ours also reads CSI_RESIZER_LEADER_ELECTION_IDENTITY.
    const launch = leader ? (impl === 'upstream' ? { hostname: identity } : { env: { CSI_RESIZER_LEADER_ELECTION_IDENTITY: identity } }) : {};
    return new Supervised(label, () => startResizer(impl, targets, flags, `chaos-${label}`, launch), s.restartDelayMs);
  });
}

/** The resize admission plugin learns about a new StorageClass through an informer: retry its refusal briefly. */
async function growWhenAdmitted(api: Api, ns: string, pvc: string, gi: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      await api.mergePatch(`/api/v1/namespaces/${ns}/persistentvolumeclaims/${pvc}`, { spec: { resources: { requests: { storage: `${gi}Gi` } } } });
      return;
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 403) || Date.now() > deadline) throw err;
      await sleep(200);
    }
  }
}

/** True once every claim is final at its size (per the tracker); false at the deadline. Throws if every replica died. */
async function waitFinal(tracker: Tracker, expected: ReadonlyMap<string, bigint>, timeoutMs: number, replicas: readonly Supervised[]): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if ([...expected].every(([c, b]) => tracker.state(c, b).pvcAt !== undefined)) return true;
    if (performance.now() > deadline) return false;
    if (replicas.length > 0 && replicas.every((r) => !r.running && r.restarts >= 30)) throw new Error('every resizer replica exited for good');
    await sleep(100);
  }
}

async function judge(api: Api, ns: string, expected: ReadonlyMap<string, bigint>, retired: FaultContext['retired'], driver: FaultDriverProcess) {
  const sel = `labelSelector=${encodeURIComponent(`${LABEL}=${ns}`)}`;
  const pvcList = await api.callRetry<{ items: any[] }>('GET', `/api/v1/namespaces/${ns}/persistentvolumeclaims`);
  const pvList = await api.callRetry<{ items: any[] }>('GET', `/api/v1/persistentvolumes?${sel}`);
  return verify({
    expected,
    claims: new Map(pvcList.items.map((o) => [o.metadata.name as string, claimView(o)])),
    pvs: new Map(pvList.items.map((o) => [o.metadata.name as string, pvView(o)])),
    volumes: driver.volumes(),
    retired,
  });
}
