// The node smoke test (`npm run e2e:smoke`): on the one-node cluster of e2e/node.sh, a pod
// mounts a claim, our csi-resizer image (running as a pod beside the CSI driver) grows it in the
// controller, and kubelet finishes the resize with NodeExpandVolume while the pod keeps running.
// The driver is the hostpathplugin stand-in serving Kubernetes' e2e mock CSI service with node
// expansion required, registered with kubelet by the node-driver-registrar stand-in; each call it
// serves is a "gRPCCall:" line in its log, which is how the test sees who called what.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type * as k8s from '@kubernetes/client-node';
import { loadComponents } from '../test/cluster/components.js';
import { createStorageClass, provisionVolume, requestPvcSize, quantityBytes } from '../test/cluster/fixtures.js';
import { clientsFromKubeconfig, type KubeClients } from '../test/cluster/kube.js';
import { applyRbac } from '../test/cluster/rbac.js';
import { eventually } from '../test/support/eventually.js';
import { startNode, type NodeEnv } from './node-session.js';
import { resizeFinished } from './resize-status.js';
import { csiDriverObject, csiDriverPod, consumerPod } from './smoke-manifests.js';

const DRIVER = 'smoke.csi.k8s.io';
const NAMESPACE = 'default';

interface Call {
  Method: string;
  Request?: { volume_id?: string; capacity_range?: { required_bytes?: number | string } };
  Error?: string;
}

/** The driver's calls, from its "gRPCCall: {json}" log lines. */
async function driverCalls(admin: KubeClients, pod: string): Promise<Call[]> {
  const text = await admin.core.readNamespacedPodLog({ name: pod, namespace: NAMESPACE, container: 'mock' });
  return text
    .split('\n')
    .filter((line) => line.includes('gRPCCall: '))
    .map((line) => JSON.parse(line.slice(line.indexOf('gRPCCall: ') + 'gRPCCall: '.length)) as Call);
}

test('node smoke: a mounted claim grows through our resizer image and kubelet NodeExpandVolume', { timeout: 75 * 60_000 }, async (t) => {
  const logDir = mkdtempSync('/tmp/rz-e2e-smoke-');
  const node = await startNode({ logPath: join(logDir, 'node.log'), keepLogsIn: join(logDir, 'node-logs'), progress: (line) => t.diagnostic(line) });
  t.after(() => node.stop());
  t.diagnostic(`node Ready ${(node.startupMs / 1000).toFixed(1)} s after start (builds included); logs in ${logDir}`);
  const env: NodeEnv = node.env;
  const admin = clientsFromKubeconfig(env.kubeconfig);
  const components = await loadComponents();

  const ours = env.images['RESIZER_OURS_IMAGE'];
  const registrar = env.images['REGISTRAR_IMAGE'];
  const mock = env.images['HOSTPATH_IMAGE'];
  const pause = env.images['PAUSE_IMAGE'];
  assert.ok(ours && registrar && mock && pause, `images.env lacks an image: ${JSON.stringify(env.images)}`);

  const t0 = Date.now();
  await applyRbac(admin);
  await admin.storage.createCSIDriver({ body: csiDriverObject(DRIVER) });
  const driverPod = csiDriverPod({ driverName: DRIVER, kubeletRootDir: env.kubeletRootDir, nodeName: env.nodeName, images: { ours, registrar, mock } });
  await admin.core.createNamespacedPod({ namespace: NAMESPACE, body: driverPod });
  const podName = driverPod.metadata!.name!;
  await eventually(`CSINode ${env.nodeName} to list ${DRIVER}`, async () => {
    const csiNode = await admin.storage.readCSINode({ name: env.nodeName });
    return csiNode.spec.drivers.some((d) => d.name === DRIVER);
  }, 120_000, 500);
  t.diagnostic(`driver pod registered with kubelet in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  const sc = await createStorageClass(admin, { name: 'smoke-expand', provisioner: DRIVER, allowVolumeExpansion: true });
  // The test runs as root on the node's host, so it reaches the driver's socket directly.
  const socket = `unix://${env.kubeletRootDir}/plugins/${DRIVER}/csi.sock`;
  const claim = await provisionVolume(admin, socket, {
    namespace: NAMESPACE, size: '1Gi', storageClassName: sc.metadata!.name!, driverName: DRIVER, csiProtoPath: components.csiProtoPath,
  });
  const pvcName = claim.pvc.metadata!.name!;
  const consumer = consumerPod({ claimName: pvcName, nodeName: env.nodeName, image: pause });
  await admin.core.createNamespacedPod({ namespace: NAMESPACE, body: consumer });
  const consumerName = consumer.metadata!.name!;
  await eventually(`pod ${consumerName} Running with the claim mounted`, async () => {
    const pod = await admin.core.readNamespacedPod({ name: consumerName, namespace: NAMESPACE });
    return pod.status?.phase === 'Running';
  }, 120_000, 500);
  const consumerUid = (await admin.core.readNamespacedPod({ name: consumerName, namespace: NAMESPACE })).metadata!.uid!;

  const asked = Date.now();
  await requestPvcSize(admin, NAMESPACE, pvcName, '2Gi', { retryUntilAdmittedMs: 10_000 });
  const grown = await eventually('the PVC to report 2Gi with no resize in progress', async () => {
    const pvc = await admin.core.readNamespacedPersistentVolumeClaim({ name: pvcName, namespace: NAMESPACE });
    return resizeFinished(pvc, '2Gi') ? pvc : undefined;
  }, 180_000, 500);
  t.diagnostic(`resize finished ${((Date.now() - asked) / 1000).toFixed(1)} s after the request`);

  assert.equal(grown.status?.allocatedResources?.['storage'], '2Gi');
  const pv = await admin.core.readPersistentVolume({ name: claim.pv.metadata!.name! });
  assert.equal(pv.spec?.capacity?.['storage'], '2Gi');
  // The same pod still runs: the volume grew online.
  const after = await admin.core.readNamespacedPod({ name: consumerName, namespace: NAMESPACE });
  assert.equal(after.metadata?.uid, consumerUid);
  assert.equal(after.status?.phase, 'Running');

  // Who did it: ControllerExpandVolume is only ever called by the resizer, NodeExpandVolume by kubelet.
  const calls = await driverCalls(admin, podName);
  const twoGi = quantityBytes('2Gi');
  const expand = (method: string) => calls.filter((c) => c.Method.endsWith(`/${method}`) && !c.Error &&
    c.Request?.volume_id === claim.volumeId && BigInt(c.Request?.capacity_range?.required_bytes ?? 0) === twoGi);
  assert.equal(expand('ControllerExpandVolume').length >= 1, true, `no successful ControllerExpandVolume to 2Gi in ${JSON.stringify(calls.map((c) => c.Method))}`);
  assert.equal(expand('NodeExpandVolume').length >= 1, true, `no successful NodeExpandVolume to 2Gi in ${JSON.stringify(calls.map((c) => c.Method))}`);
  const resizerLog = await admin.core.readNamespacedPodLog({ name: podName, namespace: NAMESPACE, container: 'csi-resizer' });
  assert.match(resizerLog, /"Version" version=/, 'the resizer container is our csi-resizer');

  const events = await admin.core.listNamespacedEvent({ namespace: NAMESPACE, fieldSelector: `involvedObject.name=${pvcName}` });
  const reasons = events.items.map((e: k8s.CoreV1Event) => `${e.source?.component ?? e.reportingComponent ?? '?'}:${e.reason}`);
  t.diagnostic(`PVC events: ${reasons.join(', ')}`);
  assert.ok(reasons.some((r) => r.endsWith(':FileSystemResizeSuccessful')), `kubelet reported no FileSystemResizeSuccessful: ${reasons.join(', ')}`);

  const code = await node.stop();
  assert.equal(code, 0, `e2e/node.sh left something behind (exit ${code}); see ${logDir}/node.log`);
});
