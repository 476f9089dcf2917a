// The node smoke test with real volumes (`npm run e2e:smoke` runs it after e2e/smoke.test.ts):
// on the one-node cluster of e2e/node.sh, our loopfs test driver (real filesystems on loop
// devices; docs/e2e.md, "The loopfs test driver") runs in a pod beside our csi-resizer image.
// Two 1Gi claims hold files a pod wrote, with their checksums, and are raised to 2Gi:
//
//   xfs, online    the writer keeps running; the resizer grows the file, kubelet calls
//                  NodeExpandVolume, and the running pod sees ~2Gi in df;
//   ext4, offline  the writer has finished; the resizer grows the file, and when a new pod
//                  mounts the claim the driver grows the filesystem while staging it (ext4
//                  cannot grow mounted here: root lacks CAP_SYS_RESOURCE), then kubelet's
//                  NodeExpandVolume finds it grown; the new pod sees ~2Gi.
//
// Both pods then check every checksum, the driver's operation log must show exactly one file
// growth and one filesystem growth per claim, kubelet must report the grown capacity and the
// written bytes from NodeGetVolumeStats (/stats/summary and kubelet_volume_stats_*), and the
// node's teardown must leave no mount and no loop device behind.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import type * as k8s from '@kubernetes/client-node';
import { loadComponents } from '../test/cluster/components.js';
import { createStorageClass, provisionVolume, requestPvcSize, quantityBytes, type Provisioned } from '../test/cluster/fixtures.js';
import { clientsFromKubeconfig, type KubeClients } from '../test/cluster/kube.js';
import { applyRbac } from '../test/cluster/rbac.js';
import { eventually } from '../test/support/eventually.js';
import { ended, growths, readLoopfsLog } from './loopfs-oplog.js';
import { startNode, type NodeEnv } from './node-session.js';
import { resizeFinished } from './resize-status.js';
import { csiDriverObject, loopfsDriverPod, shellPod } from './smoke-manifests.js';

const DRIVER = 'loopfs.test.csi-resizer.local';
const NAMESPACE = 'default';
const FILES = 4;
const FILE_MIB = 16;

// Writes FILES files of random bytes and their checksums, then idles until stopped (or, with
// exit, ends: the claim is then unmounted and unstaged).
const writeScript = (then: 'idle' | 'exit') => `set -e
cd /data
i=0
while [ $i -lt ${FILES} ]; do dd if=/dev/urandom of=file-$i bs=1M count=${FILE_MIB} 2>/dev/null; i=$((i + 1)); done
sha256sum file-* > SHA256SUMS
sync
echo WRITTEN
${then === 'idle' ? IDLE : 'exit 0'}`;
const IDLE = "trap 'exit 0' TERM; sleep 1000000 & wait";

const runFile = promisify(execFile);

/** kubectl with the node's admin kubeconfig (kubectl exec: the stream goes through the API server). */
async function kubectl(env: NodeEnv, ...args: string[]): Promise<string> {
  const { stdout } = await runFile(env.kubectl, ['--kubeconfig', env.kubeconfig, ...args], { maxBuffer: 16 << 20 });
  return stdout;
}

/** What the pod sees at /data: df's size in bytes, and sha256sum -c's verdict on every file. */
async function podView(env: NodeEnv, pod: string): Promise<{ dfBytes: number; checks: string[] }> {
  const out = await kubectl(env, '-n', NAMESPACE, 'exec', pod, '-c', 'app', '--', 'sh', '-c', 'df -k /data | tail -n 1; cd /data && sha256sum -c SHA256SUMS');
  const [dfLine, ...checks] = out.trim().split('\n');
  const kib = Number(dfLine?.trim().split(/\s+/)[1]);
  assert.ok(Number.isFinite(kib), `df's line in ${pod}: ${dfLine}`);
  return { dfBytes: kib * 1024, checks };
}

function assertView(view: { dfBytes: number; checks: string[] }, volumeBytes: bigint, what: string): void {
  const bytes = BigInt(view.dfBytes);
  // df shows the filesystem less its own metadata: within 8 % of the volume (XFS keeps 64 MiB for its log).
  assert.ok(bytes <= volumeBytes && bytes >= (volumeBytes * 92n) / 100n, `${what}: df shows ${bytes} bytes for a ${volumeBytes}-byte volume`);
  assert.equal(view.checks.length, FILES, `${what}: sha256sum -c said ${JSON.stringify(view.checks)}`);
  for (const line of view.checks) assert.match(line, /^file-\d+: OK$/, `${what}: ${line}`);
}

async function podPhase(admin: KubeClients, name: string): Promise<string | undefined> {
  return (await admin.core.readNamespacedPod({ name, namespace: NAMESPACE })).status?.phase;
}

/** The claim once its resize to size is over; until then it throws its status, which eventually() reports on timeout. */
async function resizeDone(admin: KubeClients, name: string, size: string): Promise<k8s.V1PersistentVolumeClaim> {
  const pvc = await admin.core.readNamespacedPersistentVolumeClaim({ name, namespace: NAMESPACE });
  if (!resizeFinished(pvc, size)) throw new Error(`${name} status: ${JSON.stringify(pvc.status)}`);
  return pvc;
}

interface SummaryVolume {
  name: string;
  pvcRef?: { name: string; namespace: string };
  capacityBytes?: number;
  usedBytes?: number;
  inodesUsed?: number;
}

/** Kubelet's view of a claim: its /stats/summary entry and its kubelet_volume_stats_capacity_bytes. */
async function kubeletView(env: NodeEnv, pvcName: string): Promise<{ summary?: SummaryVolume; metricCapacity?: number }> {
  const summary = JSON.parse(await kubectl(env, 'get', '--raw', `/api/v1/nodes/${env.nodeName}/proxy/stats/summary`)) as { pods?: { volume?: SummaryVolume[] }[] };
  const entry = (summary.pods ?? []).flatMap((p) => p.volume ?? []).find((v) => v.pvcRef?.name === pvcName);
  const metrics = await kubectl(env, 'get', '--raw', `/api/v1/nodes/${env.nodeName}/proxy/metrics`);
  const line = metrics.split('\n').find((l) => l.startsWith('kubelet_volume_stats_capacity_bytes{') && l.includes(`persistentvolumeclaim="${pvcName}"`));
  return { summary: entry, metricCapacity: line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1)) };
}

test('node smoke, real volumes: xfs grows online and ext4 at its next staging, data intact, each grown once', { timeout: 75 * 60_000 }, async (t) => {
  const logDir = mkdtempSync('/tmp/rz-e2e-loopfs-');
  const node = await startNode({ logPath: join(logDir, 'node.log'), keepLogsIn: join(logDir, 'node-logs'), progress: (line) => t.diagnostic(line) });
  t.after(() => node.stop());
  t.diagnostic(`node Ready ${(node.startupMs / 1000).toFixed(1)} s after start (builds included); logs in ${logDir}`);
  const env = node.env;
  const admin = clientsFromKubeconfig(env.kubeconfig);
  const components = await loadComponents();
  const { RESIZER_OURS_IMAGE: ours, REGISTRAR_IMAGE: registrar, LOOPFS_DRIVER_IMAGE: loopfs, BUSYBOX_IMAGE: busybox } = env.images;
  assert.ok(ours && registrar && loopfs && busybox, `images.env lacks an image: ${JSON.stringify(env.images)}`);

  const t0 = Date.now();
  const since = (from: number) => `${((Date.now() - from) / 1000).toFixed(1)} s`;
  await applyRbac(admin);
  await admin.storage.createCSIDriver({ body: csiDriverObject(DRIVER) });
  const driverPod = loopfsDriverPod({ driverName: DRIVER, kubeletRootDir: env.kubeletRootDir, nodeName: env.nodeName, dataDir: env.loopfsDir, images: { ours, registrar, loopfs } });
  await admin.core.createNamespacedPod({ namespace: NAMESPACE, body: driverPod });
  await eventually(`CSINode ${env.nodeName} to list ${DRIVER}`, async () => {
    const csiNode = await admin.storage.readCSINode({ name: env.nodeName });
    return csiNode.spec.drivers.some((d) => d.name === DRIVER);
  }, 120_000, 250);
  t.diagnostic(`driver pod registered with kubelet in ${since(t0)}`);

  const sc = await createStorageClass(admin, { name: 'loopfs-expand', provisioner: DRIVER, allowVolumeExpansion: true });
  // The test runs as root on the node's host, so it reaches the driver's socket directly.
  const socket = `unix://${env.kubeletRootDir}/plugins/${DRIVER}/csi.sock`;
  const provision = (fsType: string) => provisionVolume(admin, socket, {
    namespace: NAMESPACE, size: '1Gi', storageClassName: sc.metadata!.name!, driverName: DRIVER, fsType, csiProtoPath: components.csiProtoPath,
  });
  const online: Provisioned = await provision('xfs');
  const offline: Provisioned = await provision('ext4');
  const onlineClaim = online.pvc.metadata!.name!;
  const offlineClaim = offline.pvc.metadata!.name!;

  const base = { nodeName: env.nodeName, image: busybox };
  await admin.core.createNamespacedPod({ namespace: NAMESPACE, body: shellPod({ ...base, name: 'online-writer', claimName: onlineClaim, script: writeScript('idle') }) });
  await admin.core.createNamespacedPod({ namespace: NAMESPACE, body: shellPod({ ...base, name: 'offline-writer', claimName: offlineClaim, script: writeScript('exit'), restartPolicy: 'Never' }) });
  const written = Date.now();
  await Promise.all([
    eventually('online-writer to have written its files', async () => (await admin.core.readNamespacedPodLog({ name: 'online-writer', namespace: NAMESPACE })).includes('WRITTEN'), 120_000, 250),
    eventually('offline-writer to finish and its claim to be unstaged', async () => {
      const phase = await podPhase(admin, 'offline-writer');
      if (phase === 'Failed') throw new Error('offline-writer failed');
      return phase === 'Succeeded' && ended(readLoopfsLog(env.loopfsDir), offline.volumeId, 'NodeUnstageVolume').some((r) => r.result === 'ok');
    }, 120_000, 250),
  ]);
  t.diagnostic(`files written and the ext4 claim unstaged ${since(written)} after the writers were created`);
  assertView(await podView(env, 'online-writer'), quantityBytes('1Gi'), 'online-writer before the resize');

  const asked = Date.now();
  await requestPvcSize(admin, NAMESPACE, onlineClaim, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await requestPvcSize(admin, NAMESPACE, offlineClaim, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await Promise.all([
    (async () => {
      await eventually('the xfs claim to report 2Gi with no resize in progress', () => resizeDone(admin, onlineClaim, '2Gi'), 90_000, 250);
      t.diagnostic(`xfs claim grown online ${since(asked)} after the request`);
    })(),
    (async () => {
      // The reader starts once the controller has grown the file, so its staging grows the filesystem.
      await eventually('the ext4 PV to be 2Gi', async () => (await admin.core.readPersistentVolume({ name: offline.pv.metadata!.name! })).spec?.capacity?.['storage'] === '2Gi', 180_000, 250);
      await admin.core.createNamespacedPod({ namespace: NAMESPACE, body: shellPod({ ...base, name: 'offline-reader', claimName: offlineClaim, script: IDLE }) });
      await eventually('offline-reader Running', async () => (await podPhase(admin, 'offline-reader')) === 'Running', 120_000, 250);
      await eventually('the ext4 claim to report 2Gi with no resize in progress', () => resizeDone(admin, offlineClaim, '2Gi'), 90_000, 250);
      t.diagnostic(`ext4 claim grown and mounted by a new pod ${since(asked)} after the request`);
    })(),
  ]);

  const twoGi = quantityBytes('2Gi');
  assertView(await podView(env, 'online-writer'), twoGi, 'online-writer after the resize, still running');
  assertView(await podView(env, 'offline-reader'), twoGi, 'offline-reader, a new pod on the grown ext4 claim');

  // Each claim grown exactly once in each layer, by whom the design says.
  const log = readLoopfsLog(env.loopfsDir);
  for (const [claim, fsOp, fsOnline] of [[online, 'NodeExpandVolume', true], [offline, 'NodeStageVolume', false]] as const) {
    const id = claim.volumeId;
    const files = growths(log, id, 'file');
    assert.equal(files.length, 1, `${id}: file growths ${JSON.stringify(files)}`);
    assert.deepEqual([files[0]!.op, BigInt(files[0]!.sizeBefore!), BigInt(files[0]!.sizeAfter!)], ['ControllerExpandVolume', quantityBytes('1Gi'), twoGi]);
    const filesystems = growths(log, id, 'filesystem');
    assert.equal(filesystems.length, 1, `${id}: filesystem growths ${JSON.stringify(filesystems)}`);
    assert.deepEqual([filesystems[0]!.op, filesystems[0]!.online, BigInt(filesystems[0]!.sizeBefore!), BigInt(filesystems[0]!.sizeAfter!)], [fsOp, fsOnline, quantityBytes('1Gi'), twoGi]);
    const expands = ended(log, id, 'NodeExpandVolume');
    assert.ok(expands.length >= 1 && expands.every((r) => r.result !== 'error'), `${id}: kubelet's NodeExpandVolume calls ${JSON.stringify(expands)}`);
  }
  const errors = log.filter((r) => r.phase === 'end' && r.result === 'error');
  assert.deepEqual(errors, [], 'no driver call failed');

  // Kubelet reports the volume's real usage, from NodeGetVolumeStats (its stats period is 10 s here).
  const written64 = FILES * FILE_MIB * 2 ** 20;
  const stats = Date.now();
  const seen = await eventually('kubelet to report the grown xfs claim and the bytes written', async () => {
    const view = await kubeletView(env, onlineClaim);
    const s = view.summary;
    const grown = (bytes: number | undefined) => bytes !== undefined && bytes >= (Number(twoGi) * 92) / 100 && bytes <= Number(twoGi);
    return s && grown(s.capacityBytes) && (s.usedBytes ?? 0) >= written64 && grown(view.metricCapacity) ? view : undefined;
  }, 60_000, 1000);
  t.diagnostic(`kubelet's stats caught up ${since(stats)} later: capacity ${seen.summary?.capacityBytes}, used ${seen.summary?.usedBytes}, inodes used ${seen.summary?.inodesUsed}`);

  const events = await admin.core.listNamespacedEvent({ namespace: NAMESPACE });
  for (const claim of [onlineClaim, offlineClaim]) {
    const reasons = events.items.filter((e) => e.involvedObject.name === claim).map((e) => `${e.source?.component ?? e.reportingComponent ?? '?'}:${e.reason}`);
    t.diagnostic(`${claim} events: ${reasons.join(', ')}`);
    assert.ok(reasons.some((r) => r.endsWith(':FileSystemResizeSuccessful')), `kubelet reported no FileSystemResizeSuccessful for ${claim}: ${reasons.join(', ')}`);
  }
  const resizerLog = await admin.core.readNamespacedPodLog({ name: driverPod.metadata!.name!, namespace: NAMESPACE, container: 'csi-resizer' });
  assert.match(resizerLog, /"Version" version=/, 'the resizer container is our csi-resizer');
  t.diagnostic(`test body ${since(t0)} after the node was Ready`);

  // The teardown unmounts what is still mounted and detaches the loop devices; node.sh checks both.
  const code = await node.stop();
  assert.equal(code, 0, `e2e/node.sh left something behind (exit ${code}); see ${logDir}/node.log`);
});
