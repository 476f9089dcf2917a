// The resize controller end to end against the real API server and the real CSI driver
// (Kubernetes' e2e CSI mock driver): a PVC grows, and the PVC, the PV and the events say so the
// way upstream's resizer would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig, patchAs } from '../cluster/kube.js';
import { createNamespace, createStorageClass, provisionVolume, requestPvcSize, uniqueName } from '../cluster/fixtures.js';
import { startMockDriver } from '../cluster/mock-driver.js';
import { startResizer, eventually } from '../support/in-process-resizer.js';
import { readPv, readPvc, eventsFor, reasons } from '../support/api-reads.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);

async function scenario(t: { after(fn: () => unknown): void }, driver: { address: string; name: string }, size = '1Gi') {
  const namespace = await createNamespace(admin, 'rz-resize');
  const storageClassName = uniqueName('rz-sc');
  await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: driver.name });
  const volume = await provisionVolume(admin, driver.address, { namespace, size, storageClassName, driverName: driver.name });
  const resizer = await startResizer({ kubeconfig: cluster.resizerKubeconfigPath, csiAddress: driver.address });
  t.after(() => resizer.stop());
  return { namespace, pvcName: volume.pvc.metadata!.name!, pvName: volume.pv.metadata!.name!, resizer };
}

test('controller-only expansion: PV and PVC grow, status is clean, events as upstream', async (t) => {
  const s = await scenario(t, { address: cluster.csiAddress, name: cluster.driverName });
  await requestPvcSize(admin, s.namespace, s.pvcName, '2Gi', { retryUntilAdmittedMs: 10_000 });

  const pvc = await eventually('PVC capacity 2Gi', async () => {
    const p = await readPvc(admin, s.namespace, s.pvcName);
    return p.status?.capacity?.['storage'] === '2Gi' ? p : undefined;
  });
  const pv = await readPv(admin, s.pvName);
  assert.equal(pv.spec.capacity?.['storage'], '2Gi');
  assert.equal(pv.metadata.annotations?.['volume.alpha.kubernetes.io/pre-resize-capacity'], undefined);
  assert.deepEqual(pvc.status?.allocatedResources, { storage: '2Gi' });
  assert.equal(pvc.status?.allocatedResourceStatuses, undefined);
  assert.deepEqual(
    (pvc.status?.conditions ?? []).map((c) => c.type),
    [],
  );
  assert.equal(pvc.metadata.annotations?.['volume.kubernetes.io/node-expansion-not-required'], 'true');

  const events = await eventually('both events', async () => {
    const e = await eventsFor(admin, s.namespace, s.pvcName);
    return e.length >= 2 ? e : undefined;
  });
  assert.deepEqual(reasons(events), ['Resizing', 'VolumeResizeSuccessful']);
  assert.equal(events[0]?.message, `External resizer is resizing volume ${s.pvName}`);
  assert.equal(events[1]?.message, 'Resize volume succeeded');
  assert.equal(events[0]?.source, `external-resizer ${cluster.driverName}`);
});

test('expansion that needs the node: FileSystemResizePending, then kubelet finishes and the annotation goes', async (t) => {
  const driver = await startMockDriver({ name: 'node.mock.csi.k8s.io', nodeExpansionRequired: true });
  t.after(() => driver.stop());
  const s = await scenario(t, driver);
  await requestPvcSize(admin, s.namespace, s.pvcName, '3Gi', { retryUntilAdmittedMs: 10_000 });

  const pvc = await eventually('NodeResizePending', async () => {
    const p = await readPvc(admin, s.namespace, s.pvcName);
    return p.status?.allocatedResourceStatuses?.['storage'] === 'NodeResizePending' ? p : undefined;
  });
  assert.equal(pvc.status?.capacity?.['storage'], '1Gi', 'capacity waits for kubelet');
  assert.deepEqual(pvc.status?.allocatedResources, { storage: '3Gi' });
  const pending = pvc.status?.conditions?.find((c) => c.type === 'FileSystemResizePending');
  assert.equal(pending?.status, 'True');
  assert.equal(pending?.message, 'Waiting for user to (re-)start a pod to finish file system resize of volume on node.');
  const pv = await readPv(admin, s.pvName);
  assert.equal(pv.spec.capacity?.['storage'], '3Gi');
  assert.equal(pv.metadata.annotations?.['volume.alpha.kubernetes.io/pre-resize-capacity'], '1Gi');
  assert.deepEqual(reasons(await eventsFor(admin, s.namespace, s.pvcName)), ['Resizing', 'FileSystemResizeRequired']);

  // Play kubelet: the file system grew, capacity reaches the PV, the node conditions clear.
  await admin.core.patchNamespacedPersistentVolumeClaimStatus(
    {
      namespace: s.namespace,
      name: s.pvcName,
      body: { status: { capacity: { storage: '3Gi' }, conditions: null, allocatedResourceStatuses: null } },
    },
    patchAs(),
  );
  await eventually('pre-resize annotation removed', async () => {
    const p = await readPv(admin, s.pvName);
    return p.metadata.annotations?.['volume.alpha.kubernetes.io/pre-resize-capacity'] === undefined;
  });
});

test('a PV of another driver and a PV with a foreign claimRef are left alone', async (t) => {
  const s = await scenario(t, { address: cluster.csiAddress, name: cluster.driverName });
  // Same driver, but the PV claims a different PVC UID.
  const foreign = await provisionVolume(admin, cluster.csiAddress, {
    namespace: s.namespace,
    size: '1Gi',
    storageClassName: (await readPvc(admin, s.namespace, s.pvcName)).spec.storageClassName!,
    driverName: cluster.driverName,
  });
  const foreignPv = foreign.pv.metadata!.name!;
  await admin.core.patchPersistentVolume({ name: foreignPv, body: { spec: { claimRef: { uid: 'not-this-claim' } } } }, patchAs());
  // Another driver's PV for the first PVC's neighbour.
  const otherSc = uniqueName('rz-sc');
  await createStorageClass(admin, { name: otherSc, allowVolumeExpansion: true, provisioner: 'other.csi.example.com' });
  const other = await provisionVolume(admin, cluster.csiAddress, {
    namespace: s.namespace,
    size: '1Gi',
    storageClassName: otherSc,
    driverName: 'other.csi.example.com',
  });

  await requestPvcSize(admin, s.namespace, foreign.pvc.metadata!.name!, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await requestPvcSize(admin, s.namespace, other.pvc.metadata!.name!, '2Gi', { retryUntilAdmittedMs: 10_000 });
  // A control PVC proves the resizer was running meanwhile.
  await requestPvcSize(admin, s.namespace, s.pvcName, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await eventually('control PVC resized', async () => (await readPvc(admin, s.namespace, s.pvcName)).status?.capacity?.['storage'] === '2Gi');

  for (const p of [foreign, other]) {
    const pvc = await readPvc(admin, s.namespace, p.pvc.metadata!.name!);
    assert.equal(pvc.status?.capacity?.['storage'], '1Gi');
    assert.equal(pvc.status?.allocatedResources, undefined);
    assert.equal((await readPv(admin, p.pv.metadata!.name!)).spec.capacity?.['storage'], '1Gi');
    assert.deepEqual(await eventsFor(admin, s.namespace, p.pvc.metadata!.name!), []);
  }
});

test('a v2.2 manifest with RecoverVolumeExpansionFailure=true resizes as without it: the recovery-aware path, allocation written', async (t) => {
  const namespace = await createNamespace(admin, 'rz-removed-gate');
  const storageClassName = uniqueName('rz-sc');
  await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: cluster.driverName });
  const volume = await provisionVolume(admin, cluster.csiAddress, { namespace, size: '1Gi', storageClassName, driverName: cluster.driverName });
  const resizer = await startResizer({
    kubeconfig: cluster.resizerKubeconfigPath,
    csiAddress: cluster.csiAddress,
    args: ['--feature-gates=RecoverVolumeExpansionFailure=true'],
  });
  t.after(() => resizer.stop());
  const name = volume.pvc.metadata!.name!;
  await requestPvcSize(admin, namespace, name, '2Gi', { retryUntilAdmittedMs: 10_000 });
  const pvc = await eventually('capacity 2Gi', async () => {
    const p = await readPvc(admin, namespace, name);
    return p.status?.capacity?.['storage'] === '2Gi' ? p : undefined;
  });
  assert.deepEqual(pvc.status?.allocatedResources, { storage: '2Gi' });
  assert.equal(pvc.status?.allocatedResourceStatuses, undefined);
  assert.equal(pvc.metadata.annotations?.['volume.kubernetes.io/node-expansion-not-required'], 'true');
  assert.equal((await readPv(admin, volume.pv.metadata!.name!)).spec.capacity?.['storage'], '2Gi');
  assert.deepEqual(reasons(await eventsFor(admin, namespace, name)), ['Resizing', 'VolumeResizeSuccessful']);
});
