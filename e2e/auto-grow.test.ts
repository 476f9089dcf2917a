// Auto-grow on the real node (`npm run e2e` runs it after Kubernetes' specs; docs/e2e.md,
// "Auto-grow on the node"): the loopfs test driver (real XFS volumes on loop devices, usage from
// statfs) with our csi-resizer image running `--auto-grow`, deployed twice on one node, the two
// ways an operator deploys it (e2e/auto-grow-manifests.ts):
//
//   central     a Deployment with deploy/kubernetes/deployment.yaml's resizer container;
//   node-local  a DaemonSet with deploy/kubernetes/node-local/daemonset.yaml's (--node-deployment).
//
// For each, a 1Gi claim that may grow to 2Gi is mounted by a running pod, which writes files of
// random bytes until less than the claim's threshold is free. Nothing else asks for more: the
// resizer reads kubelet's /stats/summary, raises the request, expands the volume; kubelet grows
// the filesystem online and the same pod sees ~2Gi, every checksum still good. A second fill
// then finds the claim at its limit: one AutoGrowLimitReached Warning, later polls still decide
// "limit reached", and the claim, the volume and the filesystem stay at 2Gi (the driver's
// operation log shows exactly one growth of each layer).
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type * as k8s from '@kubernetes/client-node';
import { loadComponents } from '../test/cluster/components.js';
import { provisionVolume, quantityBytes } from '../test/cluster/fixtures.js';
import { clientsFromKubeconfig, type KubeClients } from '../test/cluster/kube.js';
import { eventually } from '../test/support/eventually.js';
import { autoGrowCounts, createAutoGrowClass, deployAutoGrowDriver, driverPodName, nodeAffinity, type AutoGrowDriver, type AutoGrowMode } from './auto-grow-manifests.js';
import { fillClaim, IDLE_SCRIPT, podView, type DfView } from './fill.js';
import { ended, growths, readLoopfsLog } from './loopfs-oplog.js';
import { startNode, type NodeEnv } from './node-session.js';
import { resizeFinished } from './resize-status.js';
import { shellPod } from './smoke-manifests.js';

const NAMESPACE = 'default';
/** resize.topolvm.io/threshold: grow when less than this much of the filesystem is free. High, so each fill writes under 200 MiB. */
const THRESHOLD_PCT = 80;
const LIMIT = '2Gi';
const oneGi = quantityBytes('1Gi');
const twoGi = quantityBytes(LIMIT);

const seconds = (from: number) => `${((Date.now() - from) / 1000).toFixed(1)} s`;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

/** df shows the filesystem less its metadata: within 8 % of the volume (XFS keeps its log). */
function assertSize(df: DfView, volumeBytes: bigint, what: string): void {
  const size = BigInt(df.sizeBytes);
  assert.ok(size <= volumeBytes && size >= (volumeBytes * 92n) / 100n, `${what}: df shows ${size} bytes for a ${volumeBytes}-byte volume`);
}

async function claimEvents(admin: KubeClients, claim: string): Promise<k8s.CoreV1Event[]> {
  return (await admin.core.listNamespacedEvent({ namespace: NAMESPACE, fieldSelector: `involvedObject.name=${claim}` })).items;
}

async function readClaim(admin: KubeClients, name: string): Promise<k8s.V1PersistentVolumeClaim> {
  return admin.core.readNamespacedPersistentVolumeClaim({ name, namespace: NAMESPACE });
}

interface Scenario {
  t: TestContext;
  env: NodeEnv;
  admin: KubeClients;
  driver: AutoGrowDriver;
  csiProtoPath: string;
  /** Where the driver pod's container logs are written when the scenario ends. */
  logDir: string;
}

/** The driver pod's containers' logs (our resizer's among them), kept beside the node's. */
async function keepDriverLogs(s: Scenario): Promise<void> {
  const pods = await s.admin.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: s.driver.selector });
  for (const pod of pods.items) {
    for (const container of pod.spec?.containers ?? []) {
      const log = await s.admin.core.readNamespacedPodLog({ name: pod.metadata!.name!, namespace: NAMESPACE, container: container.name }).catch((err: unknown) => `(no log: ${String(err)})`);
      writeFileSync(join(s.logDir, `${s.driver.mode}-${container.name}.log`), log);
    }
  }
}

/** A 1Gi XFS claim that may grow to 2Gi, bound, and a running pod that mounts it. */
async function claimInUse(s: Scenario): Promise<{ claim: string; pv: string; volumeId: string; pod: string }> {
  const { admin, driver, env } = s;
  const storageClassName = await createAutoGrowClass(admin, driver);
  const provisioned = await provisionVolume(admin, driver.socket, {
    namespace: NAMESPACE,
    size: '1Gi',
    storageClassName,
    driverName: driver.driverName,
    fsType: 'xfs',
    csiProtoPath: s.csiProtoPath,
    pvcAnnotations: { 'resize.topolvm.io/storage_limit': LIMIT, 'resize.topolvm.io/threshold': `${THRESHOLD_PCT}%` },
    ...(driver.mode === 'node-local' ? { nodeAffinity: nodeAffinity(env.nodeName) } : {}),
  });
  const claim = provisioned.pvc.metadata!.name!;
  const pod = `${driver.mode}-app`;
  await admin.core.createNamespacedPod({ namespace: NAMESPACE, body: shellPod({ name: pod, claimName: claim, nodeName: env.nodeName, image: env.images['BUSYBOX_IMAGE']!, script: IDLE_SCRIPT }) });
  await eventually(`${pod} Running`, async () => (await admin.core.readNamespacedPod({ name: pod, namespace: NAMESPACE })).status?.phase === 'Running', 120_000, 250);
  return { claim, pv: provisioned.pv.metadata!.name!, volumeId: provisioned.volumeId, pod };
}

/** The driver's growths of the volume: exactly one of the file and one of the filesystem, online, 1Gi to 2Gi; no failed call. */
function assertGrownOnce(dataDir: string, volumeId: string): void {
  const log = readLoopfsLog(dataDir);
  const files = growths(log, volumeId, 'file');
  assert.deepEqual(files.map((g) => [g.op, BigInt(g.sizeBefore!), BigInt(g.sizeAfter!)]), [['ControllerExpandVolume', oneGi, twoGi]], `file growths ${JSON.stringify(files)}`);
  const filesystems = growths(log, volumeId, 'filesystem');
  assert.deepEqual(
    filesystems.map((g) => [g.op, g.online, BigInt(g.sizeBefore!), BigInt(g.sizeAfter!)]),
    [['NodeExpandVolume', true, oneGi, twoGi]],
    `filesystem growths ${JSON.stringify(filesystems)}`,
  );
  assert.ok(ended(log, volumeId, 'NodeExpandVolume').length >= 1, 'kubelet called NodeExpandVolume');
  assert.deepEqual(log.filter((r) => r.phase === 'end' && r.result === 'error'), [], 'no driver call failed');
}

async function fillGrowAndHold(s: Scenario): Promise<void> {
  const { t, env, admin, driver } = s;
  t.after(() => keepDriverLogs(s));
  const say = (line: string) => t.diagnostic(`${driver.mode}: ${line}`);
  const { claim, pv, volumeId, pod } = await claimInUse(s);
  const podUid = (await admin.core.readNamespacedPod({ name: pod, namespace: NAMESPACE })).metadata!.uid!;
  const before = await podView(env, pod);
  assertSize(before.df, oneGi, `${pod} before the fill`);

  // The first fill: below the threshold, and nothing but auto-grow asks for more.
  let started = Date.now();
  const first = await fillClaim(env, pod, THRESHOLD_PCT);
  say(`first fill: ${mib(first.availableBytes)} of ${mib(first.sizeBytes)} free after ${seconds(started)}`);
  const filled = Date.now();
  const raised = await eventually(`auto-grow to raise ${claim} to ${LIMIT}`, async () => {
    const pvc = await readClaim(admin, claim);
    if (pvc.spec?.resources?.requests?.['storage'] === LIMIT) return pvc;
    // Until then the error says what the claim shows: auto-grow's Warnings would be here.
    throw new Error(`events: ${JSON.stringify((await claimEvents(admin, claim)).map((e) => `${e.reason}: ${e.message}`))}`);
  }, 120_000, 250);
  say(`request raised to ${LIMIT} ${seconds(filled)} after the fill`);
  const lastGrow = JSON.parse(raised.metadata?.annotations?.['auto-grow.csi-resizer.io/last-grow'] ?? 'null') as { from: string; to: string } | null;
  assert.deepEqual([lastGrow?.from, lastGrow?.to], ['1Gi', LIMIT], `the last-grow record: ${JSON.stringify(lastGrow)}`);

  await eventually(`${claim} to report ${LIMIT} with no resize in progress`, async () => {
    const pvc = await readClaim(admin, claim);
    if (!resizeFinished(pvc, LIMIT)) throw new Error(`status ${JSON.stringify(pvc.status)}`);
    return true;
  }, 120_000, 250);
  say(`claim grown, filesystem included, ${seconds(filled)} after the fill`);
  const grown = await podView(env, pod);
  assertSize(grown.df, twoGi, `${pod} after the grow, still running`);
  assert.deepEqual(grown.failed, [], 'sha256sum -c after the grow');
  assert.ok(grown.files > 0, 'the first fill wrote files');
  const app = await admin.core.readNamespacedPod({ name: pod, namespace: NAMESPACE });
  assert.deepEqual([app.metadata?.uid, app.status?.phase, app.status?.containerStatuses?.[0]?.restartCount], [podUid, 'Running', 0], 'the same pod kept running');
  assert.equal((await admin.core.readPersistentVolume({ name: pv })).spec?.capacity?.['storage'], LIMIT);
  assertGrownOnce(driver.dataDir, volumeId);
  const requested = (await claimEvents(admin, claim)).filter((e) => e.reason === 'AutoGrowRequested');
  assert.equal(requested.length, 1, `AutoGrowRequested events: ${JSON.stringify(requested.map((e) => e.message))}`);
  // The sizes a real filesystem reports, rounded for reading (src/autogrow/events.ts).
  assert.match(requested[0]!.message ?? '', /^Raised the storage request from 1Gi to 2Gi: \d+(\.\d+)?[KMG]i of \d+(\.\d+)?[MG]i free \(threshold \d+(\.\d+)?[MG]i\)$/);
  assert.equal(requested[0]!.source?.component ?? requested[0]!.reportingComponent, `external-resizer ${driver.driverName}`);

  // The second fill: the claim needs more again, but it is at its limit.
  started = Date.now();
  const second = await fillClaim(env, pod, THRESHOLD_PCT);
  say(`second fill: ${mib(second.availableBytes)} of ${mib(second.sizeBytes)} free after ${seconds(started)}`);
  const refilled = Date.now();
  const warning = await eventually(`an AutoGrowLimitReached Warning on ${claim}`, async () => (await claimEvents(admin, claim)).find((e) => e.reason === 'AutoGrowLimitReached'), 120_000, 250);
  say(`limit reached ${seconds(refilled)} after the second fill: ${warning.message}`);
  assert.equal(warning.type, 'Warning');
  const resizer = await driverPodName(admin, driver);
  const atWarning = (await autoGrowCounts(env, resizer))['limit_reached'] ?? 0;
  // Two more polls decide "limit reached" again: the limit holds while the claim stays full.
  const counts = await eventually('two more auto-grow evaluations at the limit', async () => {
    const c = await autoGrowCounts(env, resizer);
    return (c['limit_reached'] ?? 0) >= atWarning + 2 ? c : undefined;
  }, 60_000, 500);
  say(`csi_resizer_auto_grow_total: ${JSON.stringify(counts)}`);
  assert.equal(counts['grown'], 1, 'one grow in all');

  const held = await readClaim(admin, claim);
  assert.deepEqual([held.spec?.resources?.requests?.['storage'], held.status?.capacity?.['storage']], [LIMIT, LIMIT], 'the claim stays at its limit');
  assert.equal(held.metadata?.annotations?.['auto-grow.csi-resizer.io/limit-reached'], LIMIT);
  assert.equal((await admin.core.readPersistentVolume({ name: pv })).spec?.capacity?.['storage'], LIMIT);
  assertGrownOnce(driver.dataDir, volumeId);
  const events = await claimEvents(admin, claim);
  const warnings = events.filter((e) => e.type === 'Warning').map((e) => `${e.reason} x${e.count ?? 1}: ${e.message}`);
  assert.deepEqual(warnings, [`AutoGrowLimitReached x1: ${warning.message}`], 'the one Warning on the claim, given once');
  const after = await podView(env, pod);
  assert.deepEqual(after.failed, [], 'sha256sum -c after the second fill');
  assert.ok(after.files > grown.files, `the second fill added files (${grown.files} then ${after.files})`);
  assertSize(after.df, twoGi, `${pod} after the second fill`);
  say(`${after.files} files of random bytes intact; ${mib(after.df.availableBytes)} of ${mib(after.df.sizeBytes)} free`);
}

test('auto-grow on the node: a claim fills, grows by itself, the pod sees it, data intact, the limit holds (central Deployment and node-local DaemonSet)', { timeout: 75 * 60_000, concurrency: 2 }, async (t) => {
  const logDir = mkdtempSync('/tmp/rz-e2e-auto-grow-');
  const node = await startNode({ logPath: join(logDir, 'node.log'), keepLogsIn: join(logDir, 'node-logs'), progress: (line) => t.diagnostic(line) });
  t.after(() => node.stop());
  t.diagnostic(`node Ready ${(node.startupMs / 1000).toFixed(1)} s after start (builds included); logs in ${logDir}`);
  const env = node.env;
  const admin = clientsFromKubeconfig(env.kubeconfig);
  const { csiProtoPath } = await loadComponents();

  const t0 = Date.now();
  const deploy = (mode: AutoGrowMode) => deployAutoGrowDriver(admin, { mode, driverName: `${mode}.loopfs.test.csi-resizer.local`, env });
  const central = await deploy('central');
  const nodeLocal = await deploy('node-local');
  t.diagnostic(`both drivers registered with kubelet ${seconds(t0)} after the node was Ready`);

  await Promise.all(
    [central, nodeLocal].map((driver) => t.test(`${driver.mode}: fill, grow, fill again at the limit`, (st) => fillGrowAndHold({ t: st, env, admin, driver, csiProtoPath, logDir }))),
  );
  t.diagnostic(`test body ${seconds(t0)} after the node was Ready`);

  // The teardown unmounts what is still mounted and detaches the loop devices; node.sh checks both.
  const code = await node.stop();
  assert.equal(code, 0, `e2e/node.sh left something behind (exit ${code}); see ${logDir}/node.log`);
});
