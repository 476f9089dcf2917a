// `npm run demo -- --node`: the resizer on a real node. It starts the one-node cluster of
// e2e/node.sh (kubelet, containerd, the control plane, inside a network namespace with no route
// out), runs a CSI driver pod on it with our csi-resizer image as its resizer sidecar (the mock
// CSI service, node expansion required; e2e/smoke-manifests.ts), and shows two claims grow:
//
//   online    mounted by a running pod; grows in the controller (our resizer), then kubelet grows
//             it on the node (NodeExpandVolume) while the pod keeps running;
//   offline   mounted by nothing; grows in the controller, then waits for the node (no kubelet
//             has it) until a pod mounts it: kubelet stages it, finishes the resize and the pod
//             starts with the grown claim.
//
// Then auto-grow: the loopfs test driver (real XFS volumes) with our resizer running --auto-grow
// (e2e/auto-grow-manifests.ts); a pod writes into a claim until less than its threshold is free,
// and the claim grows by itself: kubelet's measurements, the claim's states and its events as
// they come, and what the pod sees afterwards.
//
// It prints one line per state change, the driver's calls (who called what) and the final
// objects, then stops everything it started (also on Ctrl-C). Needs root; a first run builds the
// node's components (docs/e2e.md says how long).
import type * as k8s from '@kubernetes/client-node';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { loadComponents } from '../test/cluster/components.js';
import { createStorageClass, provisionVolume, requestPvcSize, type Provisioned } from '../test/cluster/fixtures.js';
import { clientsFromKubeconfig, type KubeClients } from '../test/cluster/kube.js';
import { applyRbac } from '../test/cluster/rbac.js';
import { resizeProgress } from '../src/model/claim-state.js';
import type { Pvc } from '../src/model/objects.js';
import { AUTO_GROW_FLAGS, createAutoGrowClass, deployAutoGrowDriver } from './auto-grow-manifests.js';
import { fillClaim, IDLE_SCRIPT, kubeletVolumeStats, podView } from './fill.js';
import { startNode, type NodeEnv, type NodeSession } from './node-session.js';
import { resizeFinished } from './resize-status.js';
import { consumerPod, csiDriverObject, csiDriverPod, shellPod } from './smoke-manifests.js';

const t0 = Date.now();
const elapsed = (from = t0) => `${((Date.now() - from) / 1000).toFixed(1)}s`;
const say = (line: string) => process.stdout.write(`${line}\n`);
const step = (line: string) => say(`\n[${elapsed().padStart(6)}] ${line}`);

const DRIVER = 'demo.csi.k8s.io';
const AUTO_GROW_DRIVER = 'autogrow.loopfs.test.csi-resizer.local';
/** resize.topolvm.io/threshold of the auto-grow claim: high, so the fill is under 200 MiB. */
const AUTO_GROW_THRESHOLD_PCT = 80;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const NAMESPACE = 'default';

let session: NodeSession | undefined;
let stopping: Promise<void> | undefined;
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    if (session === undefined) return;
    step('stopping the node (e2e/node.sh tears down every process, mount, namespace and cgroup it made)');
    const code = await session.stop();
    say(code === 0 ? '           nothing left behind' : `           teardown reported leftovers (exit ${code}); see the node log`);
  })();
  return stopping;
}
process.once('SIGINT', () => {
  say('\ninterrupted; stopping the node');
  void stopAll().then(() => process.exit(130));
});

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function describe(pvc: Pvc): string {
  const state = resizeProgress(pvc)?.state ?? (pvc.status?.allocatedResources?.['storage'] ? 'done' : 'idle');
  const status = pvc.status?.allocatedResourceStatuses?.['storage'];
  const conditions = (pvc.status?.conditions ?? []).filter((c) => c.status === 'True').map((c) => c.type);
  const detail = [status, conditions.length ? `conditions: ${conditions.join(',')}` : ''].filter(Boolean).join('; ');
  return `${state.padEnd(12)} requested ${(pvc.spec.resources?.requests?.['storage'] ?? '-').padEnd(4)} ` +
    `allocated ${(pvc.status?.allocatedResources?.['storage'] ?? '-').padEnd(4)} capacity ${(pvc.status?.capacity?.['storage'] ?? '-').padEnd(4)} ${detail}`;
}

async function stateOf(admin: KubeClients, p: Provisioned): Promise<string> {
  const pvc = (await admin.core.readNamespacedPersistentVolumeClaim({ namespace: NAMESPACE, name: p.pvc.metadata!.name! })) as unknown as Pvc;
  return resizeProgress(pvc)?.state ?? (pvc.status?.allocatedResources?.['storage'] ? 'done' : 'idle');
}

async function podRunning(admin: KubeClients, name: string): Promise<true | undefined> {
  const pod = await admin.core.readNamespacedPod({ name, namespace: NAMESPACE });
  return pod.status?.phase === 'Running' ? true : undefined;
}

async function main(): Promise<void> {
  const logDir = mkdtempSync('/tmp/rz-demo-node-');
  step('starting the node: control plane, containerd and kubelet in a network namespace with no route out');
  say('           (a first run builds kubelet, containerd, the images and more; progress in the node log)');
  session = await startNode({
    logPath: join(logDir, 'node.log'),
    keepLogsIn: join(logDir, 'node-logs'),
    progress: (line) => {
      if (/isolation checked|imported|\[e2e\/build\] built|\[e2e\/images\] /.test(line)) say(`           ${line.replace(/^\[[^\]]*\] /, '')}`);
    },
  });
  const env = session.env;
  say(`           node ${env.nodeName} Ready (${(session.startupMs / 1000).toFixed(1)}s), API ${env.apiUrl}, node log ${logDir}/node.log`);
  const admin = clientsFromKubeconfig(env.kubeconfig);
  const components = await loadComponents();

  step(`deploying the CSI driver pod: mock CSI service (${DRIVER}, node expansion required), registrar, and our csi-resizer image`);
  await applyRbac(admin);
  await admin.storage.createCSIDriver({ body: csiDriverObject(DRIVER) });
  const ours = env.images['RESIZER_OURS_IMAGE']!;
  const driverPod = csiDriverPod({
    driverName: DRIVER, kubeletRootDir: env.kubeletRootDir, nodeName: env.nodeName,
    images: { ours, registrar: env.images['REGISTRAR_IMAGE']!, mock: env.images['HOSTPATH_IMAGE']! },
  });
  await admin.core.createNamespacedPod({ namespace: NAMESPACE, body: driverPod });
  const driverPodName = driverPod.metadata!.name!;
  await until(`kubelet to register ${DRIVER}`, async () => {
    const node = await admin.storage.readCSINode({ name: env.nodeName });
    return node.spec.drivers.some((d) => d.name === DRIVER) ? true : undefined;
  });
  say(`           ${ours} runs in pod ${NAMESPACE}/${driverPodName}; kubelet registered ${DRIVER}`);

  step('two bound 1Gi claims; a pod mounts "online"');
  const sc = await createStorageClass(admin, { name: 'demo-node', provisioner: DRIVER, allowVolumeExpansion: true });
  const socket = `unix://${env.kubeletRootDir}/plugins/${DRIVER}/csi.sock`;
  const provision = () => provisionVolume(admin, socket, {
    namespace: NAMESPACE, size: '1Gi', storageClassName: sc.metadata!.name!, driverName: DRIVER, csiProtoPath: components.csiProtoPath,
  });
  const online = await provision();
  const offline = await provision();
  const names = new Map([[online.pvc.metadata!.name!, 'online'], [offline.pvc.metadata!.name!, 'offline']]);
  const image = env.images['BUSYBOX_IMAGE']!;
  const appPod = (claim: Provisioned, name: string): k8s.V1Pod => {
    const pod = consumerPod({ claimName: claim.pvc.metadata!.name!, nodeName: env.nodeName, image, name });
    pod.spec!.containers[0]!.command = ['sh', '-c', 'echo "mounted: $(ls -d /data)"; exec sleep 3600'];
    return pod;
  };
  await admin.core.createNamespacedPod({ namespace: NAMESPACE, body: appPod(online, 'app-online') });
  await until('pod app-online to run', () => podRunning(admin, 'app-online'));
  for (const [real, label] of names) say(`           ${label.padEnd(8)} = PVC ${NAMESPACE}/${real}`);
  say('           pod app-online runs with "online" mounted at /data');

  const last = new Map<string, string>();
  const watchStart = Date.now();
  let polling = true;
  const poll = async () => {
    const list = await admin.core.listNamespacedPersistentVolumeClaim({ namespace: NAMESPACE });
    for (const pvc of list.items as unknown as Pvc[]) {
      const label = names.get(pvc.metadata.name);
      if (label === undefined) continue;
      const line = describe(pvc);
      if (last.get(label) !== line) {
        last.set(label, line);
        say(`  +${elapsed(watchStart).padStart(6)}  ${label.padEnd(8)} ${line}`);
      }
    }
  };
  const poller = (async () => {
    while (polling) {
      await poll().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();

  step('asking for more: online 1Gi→2Gi, offline 1Gi→3Gi');
  await requestPvcSize(admin, NAMESPACE, online.pvc.metadata!.name!, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await requestPvcSize(admin, NAMESPACE, offline.pvc.metadata!.name!, '3Gi', { retryUntilAdmittedMs: 10_000 });
  const asked = Date.now();
  await until('online to finish', async () => ((await stateOf(admin, online)) === 'done' ? true : undefined));
  const onlineMs = Date.now() - asked;
  await until('offline to wait for the node', async () => ((await stateOf(admin, offline)) === 'node_pending' ? true : undefined));
  say(`           online is done: our resizer grew it in the controller, kubelet on the node (${(onlineMs / 1000).toFixed(1)}s)`);
  say('           offline waits for the node: no pod mounts it, so no kubelet has grown its filesystem yet');

  step('a pod mounts "offline": kubelet stages it, finishes the resize with NodeExpandVolume, and the pod starts');
  const mountAsked = Date.now();
  await admin.core.createNamespacedPod({ namespace: NAMESPACE, body: appPod(offline, 'app-offline') });
  await until('offline to finish', async () => ((await stateOf(admin, offline)) === 'done' ? true : undefined));
  await until('pod app-offline to run', () => podRunning(admin, 'app-offline'));
  const offlineMs = Date.now() - mountAsked;
  polling = false;
  await poller;

  step('final state');
  const pvs = new Map((await admin.core.listPersistentVolume()).items.map((pv) => [pv.metadata!.name!, pv]));
  const pods = (await admin.core.listNamespacedPod({ namespace: NAMESPACE })).items;
  const rows: string[][] = [];
  for (const p of [online, offline]) {
    const pvc = await admin.core.readNamespacedPersistentVolumeClaim({ namespace: NAMESPACE, name: p.pvc.metadata!.name! });
    const user = pods.find((pod) => pod.spec?.volumes?.some((v) => v.persistentVolumeClaim?.claimName === pvc.metadata!.name));
    rows.push([names.get(pvc.metadata!.name!)!, pvc.spec!.resources!.requests!['storage']!, pvc.status?.capacity?.['storage'] ?? '-',
      pvs.get(pvc.spec!.volumeName!)?.spec?.capacity?.['storage'] ?? '-', user ? `${user.metadata!.name} ${user.status?.phase}` : '-']);
  }
  const header = ['PVC', 'REQUESTED', 'CAPACITY', 'PV SIZE', 'MOUNTED BY'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const row of [header, ...rows]) say(`  ${row.map((c, i) => c.padEnd(widths[i]!)).join('  ')}`);
  const appLog = await admin.core.readNamespacedPodLog({ name: 'app-offline', namespace: NAMESPACE });
  say(`  app-offline says: ${appLog.trim()}`);

  say('\n  the driver\'s expansion calls (its gRPCCall log lines): ControllerExpandVolume comes from our resizer, NodeExpandVolume from kubelet');
  const driverLog = await admin.core.readNamespacedPodLog({ name: driverPodName, namespace: NAMESPACE, container: 'mock' });
  for (const line of driverLog.split('\n')) {
    const at = line.indexOf('gRPCCall: ');
    if (at < 0) continue;
    const call = JSON.parse(line.slice(at + 'gRPCCall: '.length)) as { Method: string; Request?: { volume_id?: string; capacity_range?: { required_bytes?: number } }; Error?: string };
    if (!/ExpandVolume$/.test(call.Method)) continue;
    const label = [online, offline].find((p) => p.volumeId === call.Request?.volume_id) === online ? 'online' : 'offline';
    const gib = Number(call.Request?.capacity_range?.required_bytes ?? 0) / 2 ** 30;
    const time = /^[IWE]\d{4} (\d\d:\d\d:\d\d\.\d{3})/.exec(line)?.[1] ?? '';
    say(`    ${time}  ${call.Method.split('/').pop()!.padEnd(22)} ${label.padEnd(8)} ${gib}Gi ${call.Error ? `error: ${call.Error}` : 'ok'}`);
  }
  const events = await admin.core.listNamespacedEvent({ namespace: NAMESPACE });
  say('\n  events on the claims:');
  const when = (e: k8s.CoreV1Event) => new Date(e.eventTime ?? e.firstTimestamp ?? e.lastTimestamp ?? 0).getTime();
  const claimEvents = events.items.filter((e) => names.has(e.involvedObject.name ?? '')).sort((a, b) => when(a) - when(b));
  for (const e of claimEvents) {
    say(`    ${names.get(e.involvedObject.name!)!.padEnd(8)} ${(e.source?.component ?? e.reportingComponent ?? '').padEnd(22)} ${e.reason}: ${e.message}`);
  }

  const autoGrowMs = await autoGrowDemo(env, admin, components.csiProtoPath);

  await stopAll();
  say(`\ntimings: node ${(session.startupMs / 1000).toFixed(1)}s, online resize ${(onlineMs / 1000).toFixed(1)}s, ` +
    `offline finished ${(offlineMs / 1000).toFixed(1)}s after its pod was created, auto-grow ${(autoGrowMs / 1000).toFixed(1)}s from the fill ` +
    `to the grown filesystem, whole demo ${elapsed()}`);
}

/**
 * Prints, until stopped, each new kubelet measurement of the claim, each change of its state and
 * each new event on it: what auto-grow reads, what it does, and what follows.
 */
function watchClaim(env: NodeEnv, admin: KubeClients, claim: string): () => Promise<void> {
  const from = Date.now();
  let watching = true;
  let lastSample = '';
  let lastState = '';
  const seen = new Set<string>();
  const print = (line: string) => say(`  +${elapsed(from).padStart(6)}  ${line}`);
  const once = async () => {
    const stats = await kubeletVolumeStats(env, claim).catch(() => undefined);
    if (stats && stats.time !== lastSample) {
      lastSample = stats.time;
      const pct = ((100 * stats.availableBytes) / stats.capacityBytes).toFixed(0);
      print(`kubelet measured   used ${mib(stats.usedBytes)}, free ${mib(stats.availableBytes)} of ${mib(stats.capacityBytes)} (${pct}%)`);
    }
    const pvc = (await admin.core.readNamespacedPersistentVolumeClaim({ namespace: NAMESPACE, name: claim })) as unknown as Pvc;
    const state = describe(pvc);
    if (state !== lastState) {
      lastState = state;
      print(`claim              ${state}`);
    }
    const events = await admin.core.listNamespacedEvent({ namespace: NAMESPACE, fieldSelector: `involvedObject.name=${claim}` });
    for (const e of events.items) {
      if (seen.has(e.metadata!.uid!)) continue;
      seen.add(e.metadata!.uid!);
      print(`event              ${e.source?.component ?? e.reportingComponent ?? ''}: ${e.reason}: ${e.message}`);
    }
  };
  const loop = (async () => {
    while (watching) {
      await once().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return async () => {
    watching = false;
    await loop;
    await once().catch(() => undefined);
  };
}

/** Auto-grow: a claim filling up grows by itself. Returns the time from the end of the fill to the grown filesystem. */
async function autoGrowDemo(env: NodeEnv, admin: KubeClients, csiProtoPath: string): Promise<number> {
  step('auto-grow: the loopfs test driver (real XFS volumes on loop devices) with our resizer running --auto-grow');
  const driver = await deployAutoGrowDriver(admin, { mode: 'central', driverName: AUTO_GROW_DRIVER, env });
  say(`           a Deployment with deploy/kubernetes/deployment.yaml's resizer container and the auto-grow RBAC component`);
  say(`           extra flags: ${AUTO_GROW_FLAGS.join(' ')}`);
  const storageClassName = await createAutoGrowClass(admin, driver);
  const annotations = { 'resize.topolvm.io/storage_limit': '2Gi', 'resize.topolvm.io/threshold': `${AUTO_GROW_THRESHOLD_PCT}%` };
  const p = await provisionVolume(admin, driver.socket, {
    namespace: NAMESPACE, size: '1Gi', storageClassName, driverName: driver.driverName, fsType: 'xfs', csiProtoPath, pvcAnnotations: annotations,
  });
  const claim = p.pvc.metadata!.name!;
  say(`           StorageClass ${storageClassName}: resize.topolvm.io/enabled "true"; PVC ${claim}: 1Gi, ${Object.entries(annotations).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  const pod = 'app-filling';
  await admin.core.createNamespacedPod({ namespace: NAMESPACE, body: shellPod({ name: pod, claimName: claim, nodeName: env.nodeName, image: env.images['BUSYBOX_IMAGE']!, script: IDLE_SCRIPT }) });
  await until(`pod ${pod} to run`, () => podRunning(admin, pod));

  step(`pod ${pod} writes 16 MiB files of random bytes until less than ${AUTO_GROW_THRESHOLD_PCT}% of the claim is free; nobody asks for more space`);
  const stopWatching = watchClaim(env, admin, claim);
  const fillStart = Date.now();
  const filled = await fillClaim(env, pod, AUTO_GROW_THRESHOLD_PCT);
  const filledAt = Date.now();
  say(`           the pod's df after ${elapsed(fillStart)}: ${mib(filled.availableBytes)} of ${mib(filled.sizeBytes)} free`);
  await until('the claim to grow to 2Gi, filesystem included', async () => {
    const pvc = await admin.core.readNamespacedPersistentVolumeClaim({ namespace: NAMESPACE, name: claim });
    return resizeFinished(pvc, '2Gi') ? true : undefined;
  });
  const grownMs = Date.now() - filledAt;
  await stopWatching();
  const view = await podView(env, pod);
  say(`           the same pod, still running, sees ${mib(view.df.sizeBytes)} at /data (${mib(view.df.availableBytes)} free); ` +
    `sha256sum -c: ${view.files} files OK${view.failed.length ? `, FAILED: ${view.failed.join('; ')}` : ''}`);
  say(`           ${(grownMs / 1000).toFixed(1)}s from the end of the fill: kubelet's next measurement, auto-grow's next poll, ` +
    'our resizer\'s ControllerExpandVolume, kubelet\'s NodeExpandVolume (xfs_growfs, online)');
  return grownMs;
}

main().catch(async (err: unknown) => {
  say(`\ndemo failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
  await stopAll();
  process.exit(1);
});
