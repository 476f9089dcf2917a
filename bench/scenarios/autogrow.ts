// Scenario 7, ours only (upstream has no auto-grow; docs/auto-grow.md). C opted-in claims, each
// mounted by a pod, over K kubelet stand-ins on loopback (bench/lib/kubelet-fleet.ts), each
// serving its node's summary: the claims' pods, pods that mount claims of a class not opted in,
// and pods without claims. Every fifth node mounts no opted-in claim and must get no request.
// Each round runs the resizer with auto-grow off and on (ABBA over the rounds):
//  - off: after sync, CPU and RSS over the same window as on; no stand-in may be asked anything;
//  - on: after the first poll, CPU and RSS over whole poll intervals starting mid-interval (so the
//    window holds as many poll cycles as intervals, and the RSS mean averages a poll's sawtooth),
//    the resizer's API requests in that window (audit log); then claims cross their threshold at
//    known times, spread evenly over one interval (the stand-in drops their free bytes), and the
//    time to the new request written is read from a watch of the claims.
// Claims that crossed grow and then wait out their cooldown, so every run uses claims of its own.
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyRbac } from '../../test/cluster/rbac.js';
import { clientsFromKubeconfig } from '../../test/cluster/kube.js';
import { repoRoot } from '../../test/cluster/components.js';
import { RESIZER_USER } from '../../test/cluster/pki.js';
import type { FakeVolume } from '../../test/fakes/fake-kubelet.js';
import { TopolvmAnnotation } from '../../src/autogrow/annotations.js';
import { sleep, type Api } from '../lib/api.js';
import {
  crossedAvailable,
  crossingSchedule,
  filesystemBytes,
  healthyAvailable,
  isEmptyNode,
  mean,
  planNodes,
  pollsSeen,
  reaction,
  reactionSummary,
  requestsToEmptyNodes,
  type AutoGrowShape,
  type NodePlan,
  type Reaction,
} from '../lib/autogrow-plan.js';
import { DEFAULT_FLAGS, flags, makeWorkspace, start, syncViaCanary, type Ctx, type Workspace } from '../lib/context.js';
import { KubeletFleet } from '../lib/kubelet-fleet.js';
import type { RunningResizer } from '../lib/resizer.js';
import { GI, LABEL, createPods, provisionBulk } from '../lib/workload.js';

const CLAIM_GI = 10;
const LIMIT = '100Gi';
const OPTED_IN_CLASS = 'bench-autogrow';
/** Pods without claims on every node (DaemonSets, stateless workloads), in the summary only. */
const FILLER_PODS = 15;
const PLAIN_PER_NODE = 5;
const EMPTY_EVERY = 5;
/** Poll intervals over which CPU and RSS are read. */
const WINDOW_INTERVALS = 2;
const AUTO_GROW_RBAC = join(repoRoot, 'deploy', 'kubernetes', 'auto-grow', 'rbac-auto-grow.yaml');

interface Setup {
  ws: Workspace;
  shape: AutoGrowShape;
  nodes: NodePlan[];
  fleet: KubeletFleet;
  requests: RequestLog;
  optedInNodes: string[];
  emptyNodes: string[];
  /** The node of each opted-in claim. */
  nodeOfClaim: string[];
}

const optedInClaim = (j: number) => `ag-${j}`;
const plainClaim = (k: number) => `plain-${k}`;

export async function autogrow(ctx: Ctx): Promise<void> {
  const { claims, kubelets, intervalS, crossings } = ctx.opts.autoGrow;
  const scenario = `auto-grow ${claims} claims, ${kubelets} kubelets, interval ${intervalS}s`;
  ctx.log(`== ${scenario} (ours only)`);
  if (ctx.opts.rounds * crossings > claims) throw new Error(`${ctx.opts.rounds} rounds of ${crossings} crossings need as many claims, but there are ${claims}`);
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const setup = await prepare(ctx, cleanups);
    const reactions: Reaction[] = [];
    let missed = 0;
    let offRequests = 0;
    for (let round = 1; round <= ctx.opts.rounds; round++) {
      const r = await runRound(ctx, setup, scenario, round);
      reactions.push(...r.reactions);
      missed += r.missed;
      offRequests += r.offRequests;
    }
    for (const r of reactions) {
      ctx.figures.add(scenario, 'threshold crossed to request written, p50', 's', 'lower', 'ours', r.totalMs / 1000, 'median');
      ctx.figures.add(scenario, 'threshold crossed to request written, p99', 's', 'lower', 'ours', r.totalMs / 1000, 'p99');
      ctx.figures.add(scenario, 'poll to request written, p50', 's', 'lower', 'ours', r.fromPollMs / 1000, 'median');
      ctx.figures.add(scenario, 'poll to request written, p99', 's', 'lower', 'ours', r.fromPollMs / 1000, 'p99');
    }
    // Totals over every run: each target is none at all.
    const perNode = setup.fleet.requestsPerNode();
    ctx.figures.add(scenario, 'crossings not written in time', 'count', 'lower', 'ours', missed);
    ctx.figures.add(scenario, 'kubelet requests to nodes without an opted-in claim', 'count', 'lower', 'ours', requestsToEmptyNodes(perNode, setup.emptyNodes));
    ctx.figures.add(scenario, 'kubelet requests, auto-grow off', 'count', 'lower', 'ours', offRequests);
    ctx.figures.add(scenario, 'kubelet requests refused or failed', 'count', 'lower', 'ours', setup.fleet.failedRequests());
    const s = reactionSummary(reactions);
    ctx.log(
      `  ${reactions.length} crossings written (${missed} not): p50 ${s.p50.toFixed(1)} s, p99 ${s.p99.toFixed(1)} s (target ${intervalS + 5} s); ` +
        `poll to write p50 ${s.fromPollP50.toFixed(2)} s, p99 ${s.fromPollP99.toFixed(2)} s`,
    );
    if (missed > 0) ctx.notes.push(`auto-grow: ${missed} crossings were not written within an interval and 30 s of their poll`);
  } finally {
    for (const c of cleanups.reverse()) await c().catch((err: unknown) => ctx.log(`  auto-grow cleanup: ${String(err)}`));
  }
}

/** One off run and one on run (off first in odd rounds), and the figures that compare them. */
async function runRound(ctx: Ctx, setup: Setup, scenario: string, round: number): Promise<{ reactions: Reaction[]; missed: number; offRequests: number }> {
  const order = round % 2 === 1 ? (['off', 'on'] as const) : (['on', 'off'] as const);
  let off: (Window & { requests: number }) | undefined;
  let on: Awaited<ReturnType<typeof onRun>> | undefined;
  for (const mode of order) {
    if (mode === 'off') off = await offRun(ctx, setup, scenario);
    else on = await onRun(ctx, setup, scenario, round - 1);
  }
  if (!on || !off) throw new Error('a round runs both');
  // Per poll cycle: the on window's CPU less what the same window costs with auto-grow off, per poll.
  const perPoll = on.window.polls > 0 ? (on.window.cpuSeconds - off.cpuSeconds) / on.window.polls : NaN;
  ctx.figures.add(scenario, 'CPU per poll cycle (on less off)', 'cpu-ms', 'lower', 'ours', perPoll * 1000);
  ctx.figures.add(scenario, 'RSS on less off', 'MiB', 'lower', 'ours', on.window.rssMiB - off.rssMiB);
  ctx.notes.push(`auto-grow round ${round}: load average (1, 5, 15 min) ${loadavg()} at its end`);
  ctx.log(
    `  round ${round}: CPU per poll ${(perPoll * 1000).toFixed(0)} ms, RSS on ${on.window.rssMiB.toFixed(1)} MiB, off ${off.rssMiB.toFixed(1)} MiB, loadavg ${loadavg()}`,
  );
  return { reactions: on.reactions, missed: on.missed, offRequests: off.requests };
}

/** The class, the RBAC component, the stand-ins and their Nodes, the claims and their pods. Not timed. */
async function prepare(ctx: Ctx, cleanups: Array<() => Promise<void>>): Promise<Setup> {
  const { claims, kubelets } = ctx.opts.autoGrow;
  const shape: AutoGrowShape = { claims, kubelets, emptyEvery: EMPTY_EVERY, plainPerNode: PLAIN_PER_NODE };
  const nodes = planNodes(shape);
  const nodeOfClaim: string[] = [];
  const nodeOfPlain: string[] = [];
  for (const n of nodes) {
    for (const j of n.optedIn) nodeOfClaim[j] = n.name;
    for (const k of n.plain) nodeOfPlain[k] = n.name;
  }
  const t0 = Date.now();
  const ws = await makeWorkspace(ctx, 'bench-autogrow', 0);
  cleanups.push(async () => ws.tracker.stop());
  await createOptedInClass(ctx.api, ctx.cluster.driverName);
  cleanups.push(() => ctx.api.callRetry('DELETE', `/apis/storage.k8s.io/v1/storageclasses/${OPTED_IN_CLASS}`));
  await grantAutoGrow(ctx);
  cleanups.push(async () => {
    await ctx.api.callRetry('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/csi-resizer-auto-grow').catch(() => undefined);
    await ctx.api.callRetry('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterroles/external-resizer-auto-grow').catch(() => undefined);
  });

  const capacityBytes = filesystemBytes(BigInt(CLAIM_GI) * GI);
  const volume = (claim: string, pod: string, availableBytes: bigint): FakeVolume => ({
    namespace: ws.ns,
    claim,
    pod,
    capacityBytes,
    availableBytes,
    inodes: 655_360n,
    inodesFree: 589_824n,
  });
  const fleetNodes = nodes.map((n) => ({
    name: n.name,
    volumes: [
      ...n.optedIn.map((j) => volume(optedInClaim(j), `ag-pod-${j}`, healthyAvailable(capacityBytes, j))),
      ...n.plain.map((k) => volume(plainClaim(k), `plain-pod-${k}`, healthyAvailable(capacityBytes, k))),
    ],
  }));
  const dir = mkdtempSync(join(ctx.cluster.dir, 'kubelets-'));
  const fleet = await KubeletFleet.start({
    nodes: fleetNodes,
    fillerPods: FILLER_PODS,
    reviewerKubeconfigPath: ctx.cluster.adminKubeconfigPath,
    dir,
    concurrency: 8,
  });
  cleanups.push(() => fleet.close());
  await fleet.registerNodes(ctx.api, ctx.opts.concurrency);
  cleanups.push(() => fleet.deleteNodes(ctx.api, ctx.opts.concurrency));

  await claimsAndPods(ctx, ws.ns, nodeOfClaim, nodeOfPlain);
  await admissionSeesClass(ctx.api, ws.ns, optedInClaim(0));
  const requests = await RequestLog.start(ctx.api, ws.ns);
  cleanups.push(async () => requests.stop());
  const optedInNodes = nodes.filter((_, i) => !isEmptyNode(shape, i)).map((n) => n.name);
  const emptyNodes = nodes.filter((_, i) => isEmptyNode(shape, i)).map((n) => n.name);
  ctx.log(
    `  ${kubelets} kubelet stand-ins (${emptyNodes.length} without opted-in claims), ${claims} opted-in + ${nodeOfPlain.length} plain claims and their pods, ` +
      `${FILLER_PODS} pods without claims per node: ${((Date.now() - t0) / 1000).toFixed(0)}s (not timed)`,
  );
  return { ws, shape, nodes, fleet, requests, optedInNodes, emptyNodes, nodeOfClaim };
}

/** The opted-in claims (on the driver, with a limit) and the plain ones, each mounted by a pod on its node. */
async function claimsAndPods(ctx: Ctx, ns: string, nodeOfClaim: readonly string[], nodeOfPlain: readonly string[]): Promise<void> {
  const claims = nodeOfClaim.length;
  const common = { ns, sizeGi: CLAIM_GI, driverName: ctx.cluster.driverName, concurrency: ctx.opts.concurrency, deadlineMs: 20 * 60_000 };
  await provisionBulk(ctx.api, {
    ...common,
    count: claims,
    prefix: 'ag',
    storageClass: OPTED_IN_CLASS,
    csi: { protoPath: ctx.cluster.driver.protoPath, address: ctx.cluster.csiAddress },
    pvcAnnotations: { [TopolvmAnnotation.StorageLimit]: LIMIT },
    progress: (d) => ctx.log(`  ${d}/${claims} opted-in claims`),
  });
  await provisionBulk(ctx.api, { ...common, count: nodeOfPlain.length, prefix: 'plain', storageClass: ctx.storageClass });
  const podOptions = { ns, concurrency: ctx.opts.concurrency, deadlineMs: 20 * 60_000 };
  const optedInPods = await createPods(ctx.api, {
    ...podOptions,
    count: claims,
    prefix: 'ag-pod',
    claims: Array.from({ length: claims }, (_, j) => optedInClaim(j)),
    nodeOf: (j) => nodeOfClaim[j]!,
  });
  const plainPods = await createPods(ctx.api, {
    ...podOptions,
    count: nodeOfPlain.length,
    prefix: 'plain-pod',
    claims: nodeOfPlain.map((_, k) => plainClaim(k)),
    nodeOf: (k) => nodeOfPlain[k]!,
  });
  if (optedInPods < claims || plainPods < nodeOfPlain.length)
    throw new Error(`only ${optedInPods + plainPods} of ${claims + nodeOfPlain.length} pods were created in time`);
}

interface Window {
  cpuSeconds: number;
  /** Means over the window: VmRSS, and its anonymous and file-backed parts. */
  rssMiB: number;
  rssAnonMiB: number;
  rssFileMiB: number;
  hwmMiB: number;
}

/** CPU over `ms`, and the means of VmRSS and its parts sampled every 250 ms over it. */
async function measureWindow(r: RunningResizer, ms: number): Promise<Window> {
  const before = r.sample();
  const until = Date.now() + ms;
  const rss: number[] = [];
  const anon: number[] = [];
  const file: number[] = [];
  while (Date.now() < until) {
    const p = r.sample();
    rss.push(p.rssKiB / 1024);
    anon.push(p.rssAnonKiB / 1024);
    file.push(p.rssFileKiB / 1024);
    await sleep(Math.min(250, Math.max(0, until - Date.now())));
  }
  const after = r.sample();
  return { cpuSeconds: after.cpuSeconds - before.cpuSeconds, rssMiB: mean(rss), rssAnonMiB: mean(anon), rssFileMiB: mean(file), hwmMiB: after.hwmKiB / 1024 };
}

/** The memory figures of one window, for auto-grow `mode`. */
function addMemoryFigures(ctx: Ctx, scenario: string, mode: 'on' | 'off', w: Window): void {
  ctx.figures.add(scenario, `RSS, auto-grow ${mode}`, 'MiB', 'lower', 'ours', w.rssMiB);
  ctx.figures.add(scenario, `  anonymous, auto-grow ${mode}`, 'MiB', 'lower', 'ours', w.rssAnonMiB);
  ctx.figures.add(scenario, `  file-backed, auto-grow ${mode}`, 'MiB', 'lower', 'ours', w.rssFileMiB);
  ctx.figures.add(scenario, `peak RSS (VmHWM), auto-grow ${mode}`, 'MiB', 'lower', 'ours', w.hwmMiB);
}

async function offRun(ctx: Ctx, s: Setup, scenario: string): Promise<Window & { requests: number }> {
  const intervalMs = ctx.opts.autoGrow.intervalS * 1000;
  const asked = total(s.fleet.requestsPerNode());
  const r = start(ctx, 'ours', flags(ctx, DEFAULT_FLAGS), 'autogrow-off');
  try {
    await syncViaCanary(ctx, s.ws, r);
    // As long after sync as the on run's window starts (its first poll follows the sync at once).
    await sleep(intervalMs / 2);
    const w = await measureWindow(r, WINDOW_INTERVALS * intervalMs);
    const requests = total(s.fleet.requestsPerNode()) - asked;
    addMemoryFigures(ctx, scenario, 'off', w);
    ctx.figures.add(scenario, 'CPU per interval, auto-grow off', 'cpu-ms', 'lower', 'ours', (w.cpuSeconds * 1000) / WINDOW_INTERVALS);
    ctx.log(
      `  off: RSS ${w.rssMiB.toFixed(1)} MiB (anon ${w.rssAnonMiB.toFixed(1)}, file ${w.rssFileMiB.toFixed(1)}, hwm ${w.hwmMiB.toFixed(1)}), ${(w.cpuSeconds * 1000).toFixed(0)} cpu-ms over ${WINDOW_INTERVALS} intervals, ${requests} kubelet requests`,
    );
    return { ...w, requests };
  } finally {
    await r.stop();
  }
}

async function onRun(
  ctx: Ctx,
  s: Setup,
  scenario: string,
  run: number,
): Promise<{ window: Window & { polls: number }; reactions: Reaction[]; missed: number }> {
  const { intervalS, crossings } = ctx.opts.autoGrow;
  const intervalMs = intervalS * 1000;
  const startPolls = pollsSeen(s.fleet.requestsPerNode(), s.optedInNodes);
  const startEmpty = requestsToEmptyNodes(s.fleet.requestsPerNode(), s.emptyNodes);
  const startAsked = askedOf(s.fleet.requestsPerNode(), s.optedInNodes);
  const r = start(
    ctx,
    'ours',
    {
      ...flags(ctx, DEFAULT_FLAGS),
      extraArgs: ['--auto-grow', `--auto-grow-interval=${intervalS}s`, `--kubelet-certificate-authority=${s.fleet.caPath}`],
    },
    'autogrow-on',
  );
  try {
    await syncViaCanary(ctx, s.ws, r);
    await waitPolls(s, startPolls + 1, intervalMs + 60_000, r);
    // Mid-interval, the process is between polls: a window of whole intervals from here holds one poll per interval.
    await sleep(intervalMs / 2);
    const polls0 = pollsSeen(s.fleet.requestsPerNode(), s.optedInNodes);
    ctx.audit.poll();
    const wallStart = Date.now();
    const w = await measureWindow(r, WINDOW_INTERVALS * intervalMs);
    const polls = pollsSeen(s.fleet.requestsPerNode(), s.optedInNodes) - polls0;
    ctx.audit.poll();
    const api = ctx.audit.countBetween(wallStart, Date.now());
    addMemoryFigures(ctx, scenario, 'on', w);
    ctx.figures.add(scenario, 'CPU per interval, auto-grow on', 'cpu-ms', 'lower', 'ours', (w.cpuSeconds * 1000) / WINDOW_INTERVALS);
    ctx.figures.add(scenario, 'API requests per poll cycle', 'req', 'lower', 'ours', polls > 0 ? api.total / polls : NaN);
    ctx.log(
      `  on: RSS ${w.rssMiB.toFixed(1)} MiB (anon ${w.rssAnonMiB.toFixed(1)}, file ${w.rssFileMiB.toFixed(1)}, hwm ${w.hwmMiB.toFixed(1)}), ${(w.cpuSeconds * 1000).toFixed(0)} cpu-ms over ${WINDOW_INTERVALS} intervals, ` +
        `${polls} polls, ${api.total} API requests ${JSON.stringify(api.byKind)}`,
    );

    const seen = await crossAndWatch(ctx, s, run, crossings, intervalMs);
    const reactions = seen.map(reaction).filter((x): x is Reaction => x !== undefined);
    const perNode = s.fleet.requestsPerNode();
    const allPolls = pollsSeen(perNode, s.optedInNodes) - startPolls;
    const empty = requestsToEmptyNodes(perNode, s.emptyNodes) - startEmpty;
    const asked = askedOf(perNode, s.optedInNodes) - startAsked;
    ctx.figures.add(scenario, 'kubelet requests per poll', 'req', 'lower', 'ours', allPolls > 0 ? asked / allPolls : NaN);
    ctx.log(`  on: ${allPolls} polls in all, ${asked} requests to the ${s.optedInNodes.length} nodes with opted-in claims, ${empty} to the others`);
    return { window: { ...w, polls }, reactions, missed: crossings - reactions.length };
  } finally {
    await r.stop();
  }
}

/**
 * Drops the free bytes of this run's claims at their scheduled times (spread over one interval),
 * waits until each one's new request was seen or until an interval and 30 s after the last
 * crossing, then gives every crossed claim its free space back.
 */
async function crossAndWatch(ctx: Ctx, s: Setup, run: number, count: number, intervalMs: number) {
  const schedule = crossingSchedule({ run, count, spanMs: intervalMs, claims: s.shape.claims });
  const capacityBytes = filesystemBytes(BigInt(CLAIM_GI) * GI);
  const t0 = Date.now();
  const crossedAt = new Map<number, number>();
  try {
    for (const c of schedule) {
      await sleep(Math.max(0, t0 + c.atMs - Date.now()));
      s.fleet.setAvailable(s.nodeOfClaim[c.claim]!, optedInClaim(c.claim), crossedAvailable(capacityBytes));
      crossedAt.set(c.claim, Date.now());
    }
    const deadline = Date.now() + intervalMs + 30_000;
    const claims = schedule.map((c) => optedInClaim(c.claim));
    while (Date.now() < deadline && !claims.every((name, i) => s.requests.changedAfter(name, crossedAt.get(schedule[i]!.claim)!) !== undefined)) {
      await sleep(200);
    }
  } finally {
    for (const c of schedule) s.fleet.setAvailable(s.nodeOfClaim[c.claim]!, optedInClaim(c.claim), healthyAvailable(capacityBytes, c.claim));
  }
  return schedule
    .filter((c) => crossedAt.has(c.claim))
    .map((c) => {
      const at = crossedAt.get(c.claim)!;
      const written = s.requests.changedAfter(optedInClaim(c.claim), at);
      return { crossedAtMs: at, requestsAtMs: s.fleet.requestTimes(s.nodeOfClaim[c.claim]!), ...(written !== undefined ? { writtenAtMs: written } : {}) };
    });
}

/** Waits until every opted-in node has been asked `polls` times in all (bounded; the resizer must still run). */
async function waitPolls(s: Setup, polls: number, timeoutMs: number, r: RunningResizer): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (pollsSeen(s.fleet.requestsPerNode(), s.optedInNodes) < polls) {
    if (r.proc.hasExited()) throw new Error(`the resizer exited before its first poll (log: ${r.proc.logPath})`);
    if (Date.now() > until) {
      throw new Error(`auto-grow poll ${polls} did not reach every opted-in node within ${timeoutMs} ms (log: ${r.proc.logPath})`);
    }
    await sleep(200);
  }
}

/**
 * Each claim's spec.resources.requests.storage as it changes, from a list and a watch of the
 * namespace's claims: when a new request arrived (ms since the epoch, the watch's arrival time).
 */
class RequestLog {
  private readonly last = new Map<string, string>();
  private readonly changes = new Map<string, number[]>();
  private stopped = false;
  private watch: { stop(): void } | undefined;

  static async start(api: Api, ns: string): Promise<RequestLog> {
    const log = new RequestLog();
    const path = `/api/v1/namespaces/${ns}/persistentvolumeclaims?labelSelector=${encodeURIComponent(`${LABEL}=${ns}`)}`;
    const list = await api.callRetry<{ metadata: { resourceVersion: string }; items: any[] }>('GET', path);
    for (const o of list.items) log.last.set(o.metadata.name, o.spec?.resources?.requests?.storage ?? '');
    log.follow(api, path, list.metadata.resourceVersion);
    return log;
  }

  private follow(api: Api, path: string, rv: string): void {
    const w = api.watch(path, rv, (ev, at) => {
      if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') return;
      const name: string = ev.object.metadata.name;
      const request: string = ev.object.spec?.resources?.requests?.storage ?? '';
      if (this.last.get(name) === request) return;
      this.last.set(name, request);
      const list = this.changes.get(name) ?? [];
      list.push(performance.timeOrigin + at);
      this.changes.set(name, list);
    });
    this.watch = w;
    // A watch that ends early (the bench runs for minutes, the server's timeout is an hour) is an error of the run.
    void w.ended.then(() => {
      if (!this.stopped) process.stderr.write('[bench] auto-grow: the watch of the claims ended early\n');
    });
  }

  /** When the claim's request first changed after `ms` (undefined: not yet). */
  changedAfter(name: string, ms: number): number | undefined {
    return this.changes.get(name)?.find((at) => at >= ms);
  }

  stop(): void {
    this.stopped = true;
    this.watch?.stop();
  }
}

async function createOptedInClass(api: Api, provisioner: string): Promise<void> {
  await api.callRetry('POST', '/apis/storage.k8s.io/v1/storageclasses', {
    metadata: { name: OPTED_IN_CLASS, annotations: { [TopolvmAnnotation.Enabled]: 'true' } },
    provisioner,
    allowVolumeExpansion: true,
    reclaimPolicy: 'Retain',
    volumeBindingMode: 'Immediate',
  });
}

/** The auto-grow RBAC component, as an operator applies it, for the resizer's user; returns once the authorizer grants nodes/stats. */
async function grantAutoGrow(ctx: Ctx): Promise<void> {
  await applyRbac(clientsFromKubeconfig(ctx.cluster.adminKubeconfigPath), AUTO_GROW_RBAC);
  const until = Date.now() + 60_000;
  for (;;) {
    const review = await ctx.api.callRetry<{ status?: { allowed?: boolean } }>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: RESIZER_USER, resourceAttributes: { verb: 'get', resource: 'nodes', subresource: 'stats', name: 'any', version: 'v1' } },
    });
    if (review.status?.allowed === true) return;
    if (Date.now() > until) throw new Error(`${RESIZER_USER} is not granted get nodes/stats 60 s after the auto-grow component was applied`);
    await sleep(250);
  }
}

/**
 * Waits until the resize admission plugin sees the opted-in class (its StorageClass cache lags a
 * new class): a server-side dry run of a bigger request is admitted. Otherwise the first grows
 * would be refused and held back for minutes.
 */
async function admissionSeesClass(api: Api, ns: string, claim: string): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      await api.call(
        'PATCH',
        `/api/v1/namespaces/${ns}/persistentvolumeclaims/${claim}?dryRun=All`,
        { spec: { resources: { requests: { storage: `${CLAIM_GI + 1}Gi` } } } },
        'application/merge-patch+json',
      );
      return;
    } catch (err) {
      if ((err as { status?: number }).status !== 403 || Date.now() > until) throw err;
      await sleep(250);
    }
  }
}

function total(m: ReadonlyMap<string, number>): number {
  let n = 0;
  for (const v of m.values()) n += v;
  return n;
}

function askedOf(m: ReadonlyMap<string, number>, nodes: readonly string[]): number {
  return nodes.reduce((sum, n) => sum + (m.get(n) ?? 0), 0);
}

function loadavg(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}
