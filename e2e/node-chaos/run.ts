// One node chaos run (docs/e2e.md, "Faults on the node"): a fresh one-node cluster (e2e/node.sh),
// the loopfs driver deployed as a node plugin and a two-replica controller Deployment with the
// resizer image under test, N claims holding files a pod wrote, all grown at once, one fault
// struck while the expansions are in flight, then the verdict (verify.ts) and the teardown, which
// must leave nothing behind. Every wait is bounded; a run that cannot finish returns what it saw.
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readlinkSync, statSync, symlinkSync, writeFileSync, copyFileSync, lstatSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { pool, sleep } from '../../bench/lib/api.js';
import { loadComponents } from '../../test/cluster/components.js';
import { createStorageClass, provisionVolume, quantityBytes, requestPvcSize } from '../../test/cluster/fixtures.js';
import { clientsFromKubeconfig, statusOf, type KubeClients } from '../../test/cluster/kube.js';
import { applyRbac } from '../../test/cluster/rbac.js';
import { eventually } from '../../test/support/eventually.js';
import { readLoopfsLog } from '../loopfs-oplog.js';
import { startNode, type NodeEnv, type NodeSession } from '../node-session.js';
import { csiDriverObject } from '../smoke-manifests.js';
import { leaderPod, resizerLease, type NodeFault } from './faults.js';
import { CONTROLLER_NAME, NAMESPACE, controllerDeployment, nodePluginPod, offlineWriterPod, onlineWriterPod, readerPod } from './manifests.js';
import { OpLogTail } from './oplog-tail.js';
import { isFinal, verify, type ClaimKind, type ClaimPlan, type ClaimState, type PodView, type Verdict } from './verify.js';

export const DRIVER = 'loopfs.test.csi-resizer.local';
const NETNS = 'csi-rz-e2e';
const execFileP = promisify(execFile);

export type ImageName = 'ours' | 'upstream';

export interface NodeChaosSettings {
  /** Claims grown at once. */
  n: number;
  /** Files each claim's pod writes, and their size. */
  files: number;
  fileMiB: number;
  /** The controller driver's working time per ControllerExpandVolume. */
  expandDelayMs: number;
  /** The controller faults strike this long after the first ControllerExpandVolume began. */
  controllerFaultAfterMs: number;
  /** Seconds a killed daemon stays down. */
  downS: number;
  /** A claim not final this long after the first resize request is lost. */
  boundMs: number;
  fromSize: string;
  toSize: string;
}

export const DEFAULT_NODE_SETTINGS: NodeChaosSettings = {
  n: 100,
  files: 2,
  fileMiB: 2,
  expandDelayMs: 1000,
  controllerFaultAfterMs: 500,
  downS: 2,
  boundMs: 600_000,
  fromSize: '1Gi',
  toSize: '2Gi',
};

export interface NodeChaosResult {
  fault: string;
  title: string;
  image: ImageName;
  imageRef: string;
  n: number;
  kinds: Record<ClaimKind, number>;
  lost: number;
  /** Lost claims whose PV had grown, left at the node's part of the resize (verify.ts). */
  lostOnNode: number;
  wrongSizes: number;
  dataDamaged: number;
  badConditions: number;
  grownTwice: number;
  neverGrown: number;
  controllerCallsAfterSuccess: number;
  interrupted: Record<string, number>;
  failedCalls: Record<string, number>;
  resizerRestarts: number;
  /** Seconds from the first resize request: the fault, every PV grown, every claim final. */
  faultAtS?: number;
  controllerDoneS?: number;
  allFinalS?: number;
  leaders: string[];
  facts: string[];
  /** The first lines of each kind of problem. */
  problems: string[];
  teardownClean: boolean;
  /** Why the run ended before its verdict, if it did. */
  error?: string;
  phasesS: Record<string, number>;
}

interface Claim extends ClaimPlan {
  index: number;
}

interface RunContext {
  readonly env: NodeEnv;
  readonly admin: KubeClients;
  readonly apps: k8s.AppsV1Api;
  readonly settings: NodeChaosSettings;
  readonly logDir: string;
  readonly facts: string[];
  readonly phases: Record<string, number>;
  log(line: string): void;
}

const KIND_OF: readonly ClaimKind[] = ['online-xfs', 'online-xfs', 'offline-ext4', 'offline-xfs'];
const kindOf = (i: number): ClaimKind => KIND_OF[i % KIND_OF.length]!;
const seconds = (ms: number) => Math.round(ms / 100) / 10;

async function phase<T>(ctx: RunContext, name: string, fn: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  ctx.log(`${name}...`);
  const value = await fn();
  ctx.phases[name] = seconds(Date.now() - t0);
  ctx.log(`${name}: ${ctx.phases[name]} s`);
  return value;
}

/** The node's namespace must have no default route and reach no outside address. */
async function checkIsolation(): Promise<string> {
  const { stdout: routes } = await execFileP('ip', ['-n', NETNS, 'route', 'show']);
  const { stdout: def } = await execFileP('ip', ['-n', NETNS, 'route', 'show', 'default']);
  if (def.trim() !== '') throw new Error(`the node's namespace has a default route: ${def.trim()}`);
  const outside = await execFileP('ip', ['-n', NETNS, 'route', 'get', '192.0.2.1']).then(
    () => true,
    () => false,
  );
  if (outside) throw new Error(`the node's namespace routes to 192.0.2.1: ${routes.trim()}`);
  return `no default route in ${NETNS} (routes: ${routes.trim().replace(/\n/g, '; ')})`;
}

async function deployDriver(ctx: RunContext): Promise<void> {
  const { env, admin, settings } = ctx;
  const { LOOPFS_DRIVER_IMAGE: loopfs, REGISTRAR_IMAGE: registrar } = env.images;
  if (!loopfs || !registrar) throw new Error(`images.env lacks the loopfs driver or the registrar: ${JSON.stringify(env.images)}`);
  await applyRbac(admin);
  await admin.storage.createCSIDriver({ body: csiDriverObject(DRIVER) });
  await createStorageClass(admin, { name: 'loopfs-expand', provisioner: DRIVER, allowVolumeExpansion: true });
  const body = nodePluginPod({
    driverName: DRIVER,
    nodeName: env.nodeName,
    kubeletRootDir: env.kubeletRootDir,
    dataDir: env.loopfsDir,
    maxVolumes: settings.n + 10,
    images: { loopfs, registrar },
  });
  await admin.core.createNamespacedPod({ namespace: NAMESPACE, body });
  await eventually(
    `CSINode ${env.nodeName} to list ${DRIVER}`,
    async () => (await admin.storage.readCSINode({ name: env.nodeName })).spec.drivers.some((d) => d.name === DRIVER),
    180_000,
    500,
  );
}

async function provisionClaims(ctx: RunContext): Promise<Claim[]> {
  const { env, admin, settings } = ctx;
  const components = await loadComponents();
  const socket = `unix://${env.kubeletRootDir}/plugins/${DRIVER}/csi.sock`;
  const claims: Claim[] = [];
  const indexes = Array.from({ length: settings.n }, (_, i) => i);
  await pool(indexes, 4, async (i) => {
    const kind = kindOf(i);
    const p = await provisionVolume(admin, socket, {
      namespace: NAMESPACE,
      size: settings.fromSize,
      storageClassName: 'loopfs-expand',
      driverName: DRIVER,
      fsType: kind === 'offline-ext4' ? 'ext4' : 'xfs',
      csiProtoPath: components.csiProtoPath,
    });
    const pod = kind === 'online-xfs' ? `online-${i}` : `reader-${i}`;
    claims[i] = {
      index: i,
      name: p.pvc.metadata!.name!,
      pvName: p.pv.metadata!.name!,
      volumeId: p.volumeId,
      kind,
      pod,
      fromBytes: quantityBytes(settings.fromSize),
      toBytes: quantityBytes(settings.toSize),
    };
  });
  return claims;
}

const podBase = (ctx: RunContext, name: string, c: Claim) => ({
  name,
  claimName: c.name,
  nodeName: ctx.env.nodeName,
  image: ctx.env.images['BUSYBOX_IMAGE']!,
  labels: { 'node-chaos': 'claim-user' },
});

async function podsMatching(admin: KubeClients, names: ReadonlySet<string>, ok: (p: k8s.V1Pod) => boolean): Promise<string[]> {
  const pods = await admin.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: 'node-chaos=claim-user' });
  const failed = pods.items.filter((p) => names.has(p.metadata!.name!) && p.status?.phase === 'Failed');
  if (failed.length > 0)
    throw new Error(`pods failed: ${failed.map((p) => `${p.metadata?.name}: ${JSON.stringify(p.status?.containerStatuses?.map((c) => c.state))}`).join('; ')}`);
  return pods.items.filter((p) => names.has(p.metadata!.name!) && !ok(p)).map((p) => p.metadata!.name!);
}

const ready = (p: k8s.V1Pod) => p.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((c) => c.ready);

/** Waits until every named pod passes ok, polling the pod list; the bound names the pods still waiting. */
async function waitPods(ctx: RunContext, what: string, names: ReadonlySet<string>, ok: (p: k8s.V1Pod) => boolean, timeoutMs: number): Promise<void> {
  let waiting: string[] = [...names];
  await eventually(
    `${what} (${names.size} pods)`,
    async () => {
      waiting = await podsMatching(ctx.admin, names, ok);
      if (waiting.length > 0) throw new Error(`still waiting for ${waiting.length}: ${waiting.slice(0, 10).join(', ')}`);
      return true;
    },
    timeoutMs,
    1000,
  );
}

/** Every claim's pod writes its files; offline claims' writers end and their volumes are unstaged. */
async function writeData(ctx: RunContext, claims: readonly Claim[], oplog: OpLogTail): Promise<void> {
  const { admin, settings } = ctx;
  const data = { files: settings.files, fileMiB: settings.fileMiB };
  await pool(claims, 10, async (c) => {
    const body = c.kind === 'online-xfs' ? onlineWriterPod(podBase(ctx, c.pod, c), data) : offlineWriterPod(podBase(ctx, `writer-${c.index}`, c), data);
    await admin.core.createNamespacedPod({ namespace: NAMESPACE, body });
  });
  const online = new Set(claims.filter((c) => c.kind === 'online-xfs').map((c) => c.pod));
  const writers = new Set(claims.filter((c) => c.kind !== 'online-xfs').map((c) => `writer-${c.index}`));
  const bound = 120_000 + claims.length * 3000;
  await Promise.all([
    waitPods(ctx, 'online pods running with their files written', online, ready, bound),
    waitPods(ctx, 'offline writers done', writers, (p) => p.status?.phase === 'Succeeded', bound),
  ]);
  await pool([...writers], 10, async (name) => {
    await admin.core.deleteNamespacedPod({ name, namespace: NAMESPACE });
  });
  const offline = claims.filter((c) => c.kind !== 'online-xfs');
  await eventually(
    'every offline claim unstaged',
    () => {
      oplog.poll();
      const unstaged = new Set(oplog.records.filter((r) => r.phase === 'end' && r.op === 'NodeUnstageVolume' && r.result === 'ok').map((r) => r.volume));
      const left = offline.filter((c) => !unstaged.has(c.volumeId));
      if (left.length > 0)
        throw new Error(
          `${left.length} still staged: ${left
            .slice(0, 5)
            .map((c) => c.volumeId)
            .join(', ')}`,
        );
      return true;
    },
    bound,
    500,
  );
}

async function deployController(ctx: RunContext, image: ImageName): Promise<string> {
  const { env, admin, apps, settings } = ctx;
  const resizer = env.images[image === 'ours' ? 'RESIZER_OURS_IMAGE' : 'RESIZER_UPSTREAM_IMAGE'];
  if (!resizer) throw new Error(`images.env lacks the ${image} resizer image`);
  const body = controllerDeployment({
    driverName: DRIVER,
    nodeName: env.nodeName,
    dataDir: env.loopfsDir,
    maxVolumes: settings.n + 10,
    expandDelayMs: settings.expandDelayMs,
    images: { loopfs: env.images['LOOPFS_DRIVER_IMAGE']!, resizer },
  });
  await apps.createNamespacedDeployment({ namespace: NAMESPACE, body });
  const leader = await eventually(
    'both controller replicas ready and one resizer leading',
    async () => {
      const pods = await admin.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `app=${CONTROLLER_NAME}` });
      if (pods.items.length !== 2 || !pods.items.every(ready))
        throw new Error(`controller pods: ${pods.items.map((p) => `${p.metadata?.name} ${p.status?.phase}`).join(', ')}`);
      return (await leaderPod(admin)).metadata!.name!;
    },
    180_000,
    500,
  );
  return `${resizer}; ${leader} leads`;
}

/**
 * A private copy of the image set e2e/images.sh made (E2E_IMAGES_DIR, its `current` directory of
 * links to cached tarballs): another worktree's images.sh replaces `current` with its own images,
 * ours among them, and a long series of runs must keep the ones it was started with. Undefined
 * when no set was given (node.sh then makes one).
 */
export function pinImages(into: string): string | undefined {
  const from = process.env['E2E_IMAGES_DIR'];
  if (!from) return undefined;
  mkdirSync(into, { recursive: true });
  for (const name of readdirSync(from)) {
    const src = join(from, name);
    if (lstatSync(src).isSymbolicLink()) symlinkSync(resolve(from, readlinkSync(src)), join(into, name));
    else copyFileSync(src, join(into, name));
  }
  return into;
}

export async function runNodeFault(
  settings: NodeChaosSettings,
  fault: NodeFault,
  image: ImageName,
  logDir: string,
  log: (line: string) => void,
  imagesDir?: string,
): Promise<NodeChaosResult> {
  mkdirSync(logDir, { recursive: true });
  const facts: string[] = [];
  const phases: Record<string, number> = {};
  const result: NodeChaosResult = {
    fault: fault.id,
    title: fault.title,
    image,
    imageRef: '',
    n: settings.n,
    kinds: { 'online-xfs': 0, 'offline-ext4': 0, 'offline-xfs': 0 },
    lost: 0,
    lostOnNode: 0,
    wrongSizes: 0,
    dataDamaged: 0,
    badConditions: 0,
    grownTwice: 0,
    neverGrown: 0,
    controllerCallsAfterSuccess: 0,
    interrupted: {},
    failedCalls: {},
    resizerRestarts: 0,
    leaders: [],
    facts,
    problems: [],
    teardownClean: false,
    phasesS: phases,
  };
  for (let i = 0; i < settings.n; i++) result.kinds[kindOf(i)] += 1;
  const t0 = Date.now();
  let session: NodeSession | undefined;
  try {
    session = await startNode({
      logPath: join(logDir, 'node.log'),
      keepLogsIn: join(logDir, 'node-logs'),
      env: { E2E_KUBELET_MAX_PODS: String(settings.n + 30), ...(imagesDir ? { E2E_IMAGES_DIR: imagesDir } : {}) },
    });
    phases['node up'] = seconds(Date.now() - t0);
    const env = session.env;
    const admin = clientsFromKubeconfig(env.kubeconfig);
    const apps = admin.kc.makeApiClient(k8s.AppsV1Api);
    const ctx: RunContext = { env, admin, apps, settings, logDir, facts, phases, log };
    facts.push(await checkIsolation());
    try {
      result.imageRef = await runBody(ctx, fault, image, result);
    } finally {
      await saveLogs(ctx).catch((err: unknown) => log(`could not keep every log: ${String(err)}`));
    }
  } catch (err) {
    result.error = err instanceof Error ? err.message : String(err);
    log(`run failed: ${result.error}`);
  } finally {
    if (session) {
      const t = Date.now();
      const code = await session.stop();
      phases['teardown'] = seconds(Date.now() - t);
      result.teardownClean = code === 0;
      if (code !== 0) result.problems.push(`e2e/node.sh teardown exited ${code}: something was left behind (see ${join(logDir, 'node.log')})`);
    }
    phases['total'] = seconds(Date.now() - t0);
  }
  return result;
}

async function runBody(ctx: RunContext, fault: NodeFault, image: ImageName, result: NodeChaosResult): Promise<string> {
  const oplog = new OpLogTail(ctx.env.loopfsDir);
  await phase(ctx, 'driver', () => deployDriver(ctx));
  const claims = await phase(ctx, 'provision', () => provisionClaims(ctx));
  await phase(ctx, 'write', () => writeData(ctx, claims, oplog));
  const deployed = await phase(ctx, 'controller', () => deployController(ctx, image));
  ctx.facts.push(`resizer ${deployed}`);
  const grown = await phase(ctx, 'grow', () => growUnderFault(ctx, claims, fault, oplog));
  Object.assign(result, grown);
  const verdict = await phase(ctx, 'verify', () => judge(ctx, claims));
  applyVerdict(result, verdict);
  result.resizerRestarts = await resizerRestarts(ctx);
  return deployed.split(';')[0]!;
}

interface Growth {
  faultAtS?: number;
  controllerDoneS?: number;
  allFinalS?: number;
  leaders: string[];
}

async function growUnderFault(ctx: RunContext, claims: readonly Claim[], fault: NodeFault, oplog: OpLogTail): Promise<Growth> {
  const { admin, settings } = ctx;
  const growth: Growth = { leaders: [] };
  const t0 = Date.now();
  const at = () => seconds(Date.now() - t0);
  let done = false;
  await pool(claims, 10, async (c) => {
    await requestPvcSize(admin, NAMESPACE, c.name, settings.toSize, { retryUntilAdmittedMs: 10_000 });
  });
  // The fault's outcome is caught here at once: a fault that fails while the claims are watched
  // must end this run with what it said, not the whole series as an unhandled rejection.
  const struck = strike(ctx, fault, oplog, growth, at).then(
    () => undefined,
    (err: unknown) => err,
  );
  const watchers = [startReaders(ctx, claims, () => done), watchLeader(ctx, growth, at, () => done)];
  try {
    await eventually(
      'every claim final',
      async () => {
        const [pvcs, pvs] = await Promise.all([admin.core.listNamespacedPersistentVolumeClaim({ namespace: NAMESPACE }), admin.core.listPersistentVolume()]);
        const pvBytes = new Map(pvs.items.map((p) => [p.metadata!.name!, quantityBytes(p.spec!.capacity!['storage']!)]));
        if (growth.controllerDoneS === undefined && claims.every((c) => pvBytes.get(c.pvName) === c.toBytes)) growth.controllerDoneS = at();
        const states = new Map(pvcs.items.map((p) => [p.metadata!.name!, claimState(p)]));
        const open = claims.filter((c) => !isFinal(states.get(c.name), c.toBytes));
        if (open.length > 0)
          throw new Error(
            `${open.length} not final, e.g. ${open
              .slice(0, 3)
              .map((c) => `${c.name} ${JSON.stringify(pvcs.items.find((p) => p.metadata?.name === c.name)?.status)}`)
              .join('; ')}`,
          );
        return true;
      },
      settings.boundMs,
      1000,
    );
    growth.allFinalS = at();
  } catch (err) {
    ctx.facts.push(`not all final within the bound: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    done = true;
  }
  // The fault's own bound (node.sh's) ends it; a fault still running when every claim is final finishes first.
  await Promise.allSettled(watchers);
  const faultError = await struck;
  if (faultError !== undefined) throw new Error(`the fault ${fault.id} failed: ${faultError instanceof Error ? faultError.message : String(faultError)}`);
  return growth;
}

function claimState(p: k8s.V1PersistentVolumeClaim): ClaimState {
  const cap = p.status?.capacity?.['storage'];
  return {
    capacityBytes: cap === undefined ? undefined : quantityBytes(cap),
    conditions: (p.status?.conditions ?? []).map((c) => ({ type: c.type, status: c.status, message: c.message })),
    allocatedResourceStatuses: { ...p.status?.allocatedResourceStatuses },
  };
}

/** Offline claims get their reader pod once their PV has grown: mounting it grows the filesystem. */
async function startReaders(ctx: RunContext, claims: readonly Claim[], stop: () => boolean): Promise<void> {
  const waiting = new Map(claims.filter((c) => c.kind !== 'online-xfs').map((c) => [c.pvName, c]));
  while (waiting.size > 0 && !stop()) {
    try {
      const pvs = await ctx.admin.core.listPersistentVolume();
      for (const pv of pvs.items) {
        const c = waiting.get(pv.metadata!.name!);
        if (!c || quantityBytes(pv.spec!.capacity!['storage']!) !== c.toBytes) continue;
        try {
          await ctx.admin.core.createNamespacedPod({ namespace: NAMESPACE, body: readerPod(podBase(ctx, c.pod, c)) });
        } catch (err) {
          if (statusOf(err) !== 409) throw err;
        }
        waiting.delete(c.pvName);
      }
    } catch {
      // The API server may be down (the fault): try again.
    }
    await sleep(500);
  }
}

async function watchLeader(ctx: RunContext, growth: Growth, at: () => number, stop: () => boolean): Promise<void> {
  let last = '';
  while (!stop()) {
    try {
      const holder = (await resizerLease(ctx.admin))?.spec?.holderIdentity ?? '';
      if (holder !== last) {
        growth.leaders.push(`${holder || '(none)'} at ${at()} s`);
        last = holder;
      }
    } catch {
      // The API server may be down.
    }
    await sleep(500);
  }
}

/** Waits for the fault's moment in the driver's log, then strikes it. */
async function strike(ctx: RunContext, fault: NodeFault, oplog: OpLogTail, growth: Growth, at: () => number): Promise<void> {
  if (fault.when === 'never') return;
  const op = fault.when === 'controller-expand' ? 'ControllerExpandVolume' : 'NodeExpandVolume';
  await oplog.waitFor(`${op} call`, (r) => r.op === op && r.phase === 'start', ctx.settings.boundMs);
  if (fault.when === 'controller-expand') await sleep(ctx.settings.controllerFaultAfterMs);
  growth.faultAtS = at();
  ctx.log(`striking ${fault.id} at ${growth.faultAtS} s`);
  const facts = await fault.inject({ env: ctx.env, admin: ctx.admin, oplog, downS: ctx.settings.downS, logDir: ctx.logDir, log: ctx.log });
  ctx.facts.push(...facts.map((f) => `${f} (at ${growth.faultAtS} s)`));
}

async function podView(ctx: RunContext, pod: string): Promise<PodView> {
  const script = 'df -k /data | tail -n 1; cd /data && sha256sum -c SHA256SUMS 2>&1; true';
  try {
    const { stdout } = await execFileP(
      ctx.env.kubectl,
      ['--kubeconfig', ctx.env.kubeconfig, '-n', NAMESPACE, 'exec', pod, '-c', 'app', '--', 'sh', '-c', script],
      { timeout: 60_000 },
    );
    const [dfLine, ...checks] = stdout.trim().split('\n');
    const kib = Number(dfLine?.trim().split(/\s+/)[1]);
    if (!Number.isFinite(kib)) return { checks, error: `df said ${dfLine}` };
    return { dfBytes: kib * 1024, checks };
  } catch (err) {
    return { checks: [], error: `kubectl exec failed: ${err instanceof Error ? err.message.split('\n').slice(0, 3).join(' ') : String(err)}` };
  }
}

async function judge(ctx: RunContext, claims: readonly Claim[]): Promise<Verdict> {
  const { admin, env, settings } = ctx;
  // After a fault that restarted containers, the pods come back after the claims are final.
  const pods = new Set(claims.map((c) => c.pod));
  await waitPods(ctx, 'every claim pod running', pods, ready, 300_000).catch((err: unknown) => ctx.facts.push(`not every claim pod ran again: ${String(err)}`));
  const [pvcs, pvs] = await Promise.all([admin.core.listNamespacedPersistentVolumeClaim({ namespace: NAMESPACE }), admin.core.listPersistentVolume()]);
  const states = new Map<string, ClaimState>();
  for (const p of pvcs.items) states.set(p.metadata!.name!, claimState(p));
  for (const c of claims) {
    const s = states.get(c.name);
    if (!s) continue;
    const pv = pvs.items.find((p) => p.metadata?.name === c.pvName);
    s.pvBytes = pv ? quantityBytes(pv.spec!.capacity!['storage']!) : undefined;
    try {
      s.fileBytes = BigInt(statSync(join(env.loopfsDir, 'volumes', c.volumeId, 'disk.img')).size);
    } catch {
      s.fileBytes = undefined;
    }
  }
  const views = new Map<string, PodView>();
  await pool(claims, 4, async (c) => {
    views.set(c.name, await podView(ctx, c.pod));
  });
  const log = readLoopfsLog(env.loopfsDir);
  return verify({ claims, states, views, log, files: settings.files });
}

function applyVerdict(result: NodeChaosResult, v: Verdict): void {
  result.lost = v.lost.length;
  result.lostOnNode = v.lostOnNode.length;
  result.wrongSizes = v.wrongSizes.length;
  result.dataDamaged = v.dataDamaged.length;
  result.badConditions = v.badConditions.length;
  result.grownTwice = v.grownTwice.length;
  result.neverGrown = v.neverGrown.length;
  result.controllerCallsAfterSuccess = v.controllerCallsAfterSuccess;
  result.interrupted = v.interrupted;
  result.failedCalls = v.failedCalls;
  for (const [what, lines] of [
    ['lost', v.lost],
    ['wrong size', v.wrongSizes],
    ['data', v.dataDamaged],
    ['condition', v.badConditions],
    ['grown twice', v.grownTwice],
    ['never grown', v.neverGrown],
  ] as const) {
    for (const line of lines.slice(0, 5)) result.problems.push(`${what}: ${line}`);
    if (lines.length > 5) result.problems.push(`${what}: ... and ${lines.length - 5} more`);
  }
}

/** Restarts of the resizer containers, and controller pods beyond the two first ones. */
async function resizerRestarts(ctx: RunContext): Promise<number> {
  const pods = await ctx.admin.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `app=${CONTROLLER_NAME}` });
  const events = await ctx.admin.core.listNamespacedEvent({ namespace: NAMESPACE });
  const warnings = new Map<string, number>();
  for (const e of events.items) {
    if (e.type !== 'Warning' || e.involvedObject.kind !== 'PersistentVolumeClaim') continue;
    const key = `${e.reason ?? '?'} from ${e.source?.component ?? e.reportingComponent ?? '?'}`;
    warnings.set(key, (warnings.get(key) ?? 0) + (e.count ?? 1));
  }
  if (warnings.size > 0) ctx.facts.push(`warning events on claims: ${[...warnings].map(([k, n]) => `${n}× ${k}`).join(', ')}`);
  let restarts = 0;
  for (const p of pods.items) restarts += p.status?.containerStatuses?.find((c) => c.name === 'csi-resizer')?.restartCount ?? 0;
  return restarts;
}

/** The resizers' logs (and those of a container that restarted) and the driver's operation log beside the node's. */
async function saveLogs(ctx: RunContext): Promise<void> {
  try {
    copyFileSync(join(ctx.env.loopfsDir, 'operations.jsonl'), join(ctx.logDir, 'operations.jsonl'));
  } catch {
    // No driver call yet: no log.
  }
  const pods = await ctx.admin.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `app=${CONTROLLER_NAME}` });
  for (const p of pods.items) {
    const name = p.metadata!.name!;
    for (const container of ['csi-resizer', 'loopfs']) {
      for (const previous of [false, true]) {
        try {
          const text = await ctx.admin.core.readNamespacedPodLog({ name, namespace: NAMESPACE, container, previous });
          writeFileSync(join(ctx.logDir, `${name}-${container}${previous ? '-previous' : ''}.log`), text);
        } catch {
          // No previous container: nothing to keep.
        }
      }
    }
  }
}
