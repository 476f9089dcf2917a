// What every scenario shares: the cluster, the admin API client, the audit reader, how to start
// either resizer, the figures being collected, and the run-level helpers (canary sync, settle).
import type { Cluster } from '../../test/cluster/cluster.js';
import { sleep, type Api } from './api.js';
import type { AuditReader } from './audit.js';
import type { Figures } from './figures.js';
import { startResizer, type Impl, type ResizerFlags, type ResizerTargets, type RunningResizer } from './resizer.js';
import { GI, Tracker, provisionBulk, createNamespace, type Volume } from './workload.js';

export interface BenchOptions {
  scenarios: Set<string>;
  rounds: number;
  /** Burst size at the high QPS setting. */
  n: number;
  /** Burst size at the reference QPS 5 / burst 10 (1 resize/s at best, so smaller by default). */
  nLow: number;
  /** Idle levels: [claims, pods]. */
  idle: Array<[number, number]>;
  /** Idle CPU: claims present, and seconds at rest over which CPU is read. */
  idleCpu: { claims: number; seconds: number };
  latencySamples: number;
  /** Starts per implementation in the startup scenario, alternating ABBA. */
  startupStarts: number;
  /** The auto-grow scenario (ours only): opted-in claims, kubelet stand-ins, the poll interval, threshold crossings per run. */
  autoGrow: { claims: number; kubelets: number; intervalS: number; crossings: number };
  workers: number;
  timeout: string;
  /** The harness's own connections to the apiserver. */
  concurrency: number;
  oursEntry: string;
  /** Extra node arguments for ours (profiling only). */
  oursNodeArgs: string[];
  upstreamBin: string;
}

export interface Ctx {
  readonly cluster: Cluster;
  readonly api: Api;
  readonly audit: AuditReader;
  readonly figures: Figures;
  readonly opts: BenchOptions;
  readonly targets: ResizerTargets;
  readonly storageClass: string;
  readonly notes: string[];
  log(line: string): void;
}

export const DEFAULT_FLAGS = { qps: 5, burst: 10 } as const;
export const HIGH_FLAGS = { qps: 200, burst: 400 } as const;

export function flags(ctx: Ctx, rate: { qps: number; burst: number }, handleVolumeInUseError = true): ResizerFlags {
  return { workers: ctx.opts.workers, timeout: ctx.opts.timeout, qps: rate.qps, burst: rate.burst, handleVolumeInUseError };
}

/** Starts one implementation against the cluster's driver, or the CSI endpoint at `csiAddress`. */
export function start(ctx: Ctx, impl: Impl, f: ResizerFlags, label: string, csiAddress?: string): RunningResizer {
  return startResizer(impl, csiAddress === undefined ? ctx.targets : { ...ctx.targets, csiAddress }, f, label);
}

/** A namespace with `count` resizable volumes plus a canary, and a tracker watching them. */
export interface Workspace {
  ns: string;
  volumes: Volume[];
  canary: Volume;
  /** Current requested size (Gi) of every volume; all grow together between runs. */
  sizeGi: number;
  canaryGi: number;
  tracker: Tracker;
}

/** A CSI driver other than the cluster's (the latency scenario gives each implementation its own). */
export interface WorkspaceDriver {
  name: string;
  address: string;
  storageClass: string;
}

export async function makeWorkspace(ctx: Ctx, ns: string, count: number, driver?: WorkspaceDriver): Promise<Workspace> {
  await createNamespace(ctx.api, ns);
  const t0 = Date.now();
  const common = {
    ns,
    sizeGi: 1,
    storageClass: driver?.storageClass ?? ctx.storageClass,
    driverName: driver?.name ?? ctx.cluster.driverName,
    csi: { protoPath: ctx.cluster.driver.protoPath, address: driver?.address ?? ctx.cluster.csiAddress },
    concurrency: ctx.opts.concurrency,
    deadlineMs: 30 * 60_000,
  };
  const [canary] = await provisionBulk(ctx.api, { ...common, count: 1, prefix: 'canary' });
  const volumes =
    count > 0 ? await provisionBulk(ctx.api, { ...common, count, prefix: 'vol', progress: (d) => ctx.log(`  ${ns}: ${d}/${count} volumes`) }) : [];
  ctx.log(`  ${ns}: ${count} volumes + canary provisioned in ${((Date.now() - t0) / 1000).toFixed(1)}s (not timed)`);
  const tracker = await Tracker.start(ctx.api, ns);
  return { ns, volumes, canary: canary!, sizeGi: 1, canaryGi: 1, tracker };
}

/**
 * Grows the canary and waits until it is done: the resizer has synced its caches and runs its
 * workers. The same signal for both implementations, read from the API, not from their logs.
 */
export async function syncViaCanary(ctx: Ctx, ws: Workspace, r: RunningResizer, timeoutMs = 180_000): Promise<number> {
  ws.canaryGi += 1;
  await ctx.api.mergePatch(`/api/v1/namespaces/${ws.ns}/persistentvolumeclaims/${ws.canary.pvc}`, {
    spec: { resources: { requests: { storage: `${ws.canaryGi}Gi` } } },
  });
  const race = await Promise.race([
    ws.tracker.waitAll([ws.canary.pvc], BigInt(ws.canaryGi) * GI, timeoutMs).then(() => 'ok' as const),
    r.proc.exited.then((code) => `exited ${code}` as const),
  ]);
  if (race !== 'ok') throw new Error(`${r.impl} resizer ${race} before its first resize (log: ${r.proc.logPath})`);
  return performance.now() - r.spawnedAt;
}

/** Waits until the resizer has sent nothing for quietMs (bounded by maxMs): its trailing events are counted too. */
export async function settleAudit(ctx: Ctx, quietMs = 2000, maxMs = 60_000): Promise<void> {
  const until = Date.now() + maxMs;
  let lastNew = Date.now();
  while (Date.now() < until) {
    if (ctx.audit.poll() > 0) lastNew = Date.now();
    if (Date.now() - lastNew >= quietMs) return;
    await sleep(200);
  }
}

export function gi(n: number): bigint {
  return BigInt(n) * GI;
}
