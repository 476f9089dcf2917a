// --node-deployment against the real API server: two node replicas, each beside its own copy of a
// node-local driver (same driver name, its own socket, as a DaemonSet would run them), grow only
// their own node's volumes; a volume without node affinity is left to no one and each replica
// says so; a replica among many other nodes' claims, which it does not cache, grows its own claims
// whatever order each claim and its volume arrive in; the central resizer's behaviour is
// unchanged (other tests).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig, patchAs } from '../cluster/kube.js';
import { createNamespace, createNode, createStorageClass, deletePv, deletePvc, provisionVolume, requestPvcSize, uniqueName } from '../cluster/fixtures.js';
import { asApiBody, pod, pv, pvc } from '../support/builders.js';
import type { NodeSelectorTerm } from '../../src/model/node-affinity.js';
import { FaultDriver } from '../fakes/fault-driver.js';
import { eventually, startResizer } from '../support/in-process-resizer.js';
import { eventsFor, readPv, readPvc } from '../support/api-reads.js';
import { GiB } from '../support/fault-scenario.js';
import { applyRbac } from '../cluster/rbac.js';
import { join } from 'node:path';
import { repoRoot } from '../cluster/components.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);
// What a node replica needs beyond rbac.yaml, from the manifest an operator applies.
await applyRbac(admin, join(repoRoot, 'deploy', 'kubernetes', 'node-local', 'rbac-node.yaml'));

test("two node replicas never touch each other's volumes; a PV without node affinity is left to no one", async (t) => {
  const driverName = uniqueName('lvm.csi');
  const drivers = { a: await FaultDriver.start({ name: driverName }), b: await FaultDriver.start({ name: driverName }) };
  t.after(() => Promise.all([drivers.a.stop(), drivers.b.stop()]));
  const nodes = { a: uniqueName('node-a'), b: uniqueName('node-b') };
  for (const name of Object.values(nodes)) {
    await createNode(admin, t, name);
  }
  const namespace = await createNamespace(admin, 'rz-node');
  const storageClassName = uniqueName('rz-sc');
  await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: driverName });

  const volume = async (driver: FaultDriver, node: string | undefined) => {
    const id = uniqueName('vol');
    driver.createVolume(id, GiB);
    const v = await provisionVolume(admin, driver.address, {
      namespace,
      size: '1Gi',
      storageClassName,
      driverName,
      existingVolumeId: id,
      ...(node
        ? { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] } } }
        : {}),
    });
    const names = { id, pvc: v.pvc.metadata!.name!, pv: v.pv.metadata!.name! };
    t.after(async () => {
      await deletePvc(admin, namespace, names.pvc);
      await deletePv(admin, names.pv);
    });
    return names;
  };
  const onA = await volume(drivers.a, nodes.a);
  const onB = await volume(drivers.b, nodes.b);
  const nowhere = await volume(drivers.a, undefined);

  const replica = (driver: FaultDriver, node: string) =>
    startResizer({
      kubeconfig: cluster.resizerKubeconfigPath,
      csiAddress: driver.address,
      args: ['--node-deployment'],
      env: { NODE_NAME: node },
    });
  const replicas = { a: await replica(drivers.a, nodes.a), b: await replica(drivers.b, nodes.b) };
  t.after(() => Promise.all([replicas.a.stop(), replicas.b.stop()]));

  for (const v of [onA, onB, nowhere]) await requestPvcSize(admin, namespace, v.pvc, '2Gi', { retryUntilAdmittedMs: 10_000 });
  for (const v of [onA, onB]) {
    await eventually(`${v.pvc} grown`, async () => (await readPvc(admin, namespace, v.pvc)).status?.capacity?.['storage'] === '2Gi');
    assert.equal((await readPv(admin, v.pv)).spec.capacity?.['storage'], '2Gi');
  }
  const expanded = (d: FaultDriver) => d.callsOf('ControllerExpandVolume').map((c) => c.request['volume_id']);
  assert.deepEqual(expanded(drivers.a), [onA.id]);
  assert.deepEqual(expanded(drivers.b), [onB.id]);

  // Both replicas have looked at the volume without node affinity (each logs it once) and left it.
  for (const r of [replicas.a, replicas.b]) {
    await eventually('the no-affinity log line', async () =>
      r.logs.some((l) => l.includes('PV has no node affinity; node-local resizers leave it alone') && l.includes(`pv="${nowhere.pv}"`)),
    );
  }
  const untouched = await readPvc(admin, namespace, nowhere.pvc);
  assert.equal(untouched.status?.capacity?.['storage'], '1Gi');
  assert.equal(untouched.status?.allocatedResourceStatuses, undefined);
  assert.equal((await readPv(admin, nowhere.pv)).spec.capacity?.['storage'], '1Gi');
});

test('--node-deployment without NODE_NAME, or for a node that does not exist, does not start', async () => {
  const driver = await FaultDriver.start({ name: uniqueName('lvm.csi') });
  try {
    await assert.rejects(
      startResizer({ kubeconfig: cluster.resizerKubeconfigPath, csiAddress: driver.address, args: ['--node-deployment'], env: {} }),
      /--node-deployment needs the node name in the NODE_NAME environment variable/,
    );
    await assert.rejects(
      startResizer({ kubeconfig: cluster.resizerKubeconfigPath, csiAddress: driver.address, args: ['--node-deployment'], env: { NODE_NAME: 'no-such-node' } }),
      (err: unknown) =>
        err instanceof Error &&
        /Failed to get node no-such-node for --node-deployment/.test(err.message) &&
        /not found/.test(String((err as { cause?: unknown }).cause)),
    );
  } finally {
    await driver.stop();
  }
});

test("a replica among many other nodes' claims grows its own, whatever order each claim and its volume arrive in, and no other", async (t) => {
  const driverName = uniqueName('lvm.csi');
  const driver = await FaultDriver.start({ name: driverName });
  t.after(() => driver.stop());
  const mine = uniqueName('node-mine');
  const others = [uniqueName('node-o1'), uniqueName('node-o2'), uniqueName('node-o3')];
  for (const name of [mine, ...others]) {
    await createNode(admin, t, name);
  }
  const namespace = await createNamespace(admin, 'rz-node-many');
  const storageClassName = uniqueName('rz-sc');
  await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: driverName });
  const on = (node: string): NodeSelectorTerm[] => [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }];

  /** A claim named `name` that names `pvName` as its volume, already Bound at 1Gi (asking for `request`); returns its UID. */
  const makeClaim = async (name: string, pvName: string, request = '1Gi'): Promise<string> => {
    const created = await admin.core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: asApiBody(
        pvc({ name, namespace, phase: null, request, storageClassName, volumeName: pvName, accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem' }),
      ),
    });
    t.after(() => deletePvc(admin, namespace, name));
    await admin.core.patchNamespacedPersistentVolumeClaimStatus(
      { name, namespace, body: { status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } } } },
      patchAs(),
    );
    return created.metadata!.uid!;
  };
  /** A volume of the driver on `node`, claimed by `claim` (its UID may come later); returns its volume id. */
  const makeVolume = async (name: string, node: string, claim: { name: string; uid?: string }): Promise<string> => {
    const id = uniqueName('vol');
    driver.createVolume(id, GiB);
    await admin.core.createPersistentVolume({
      body: asApiBody(
        pv({
          name,
          capacity: '1Gi',
          accessModes: ['ReadWriteOnce'],
          reclaimPolicy: 'Retain',
          storageClassName,
          volumeMode: 'Filesystem',
          driver: driverName,
          volumeHandle: id,
          nodeAffinity: on(node),
          claim: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace, ...claim },
        }),
      ),
    });
    t.after(() => deletePv(admin, name));
    await admin.core.patchPersistentVolumeStatus({ name, body: { status: { phase: 'Bound' } } }, patchAs());
    return id;
  };
  const bindVolume = (name: string, claim: { name: string; uid: string }) =>
    admin.core.patchPersistentVolume(
      { name, body: { spec: { claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace, ...claim } } } },
      patchAs(),
    );

  // Before the replica starts: 24 claims on the other nodes and 2 on its own.
  const elsewhere: string[] = [];
  for (let i = 0; i < 24; i++) {
    const pvName = uniqueName('pv-else');
    const claimName = uniqueName('else');
    await makeVolume(pvName, others[i % others.length]!, { name: claimName, uid: await makeClaim(claimName, pvName) });
    elsewhere.push(claimName);
  }
  const ownIds = new Map<string, string>();
  for (let i = 0; i < 2; i++) {
    const pvName = uniqueName('pv-own');
    const claimName = uniqueName('own');
    ownIds.set(claimName, await makeVolume(pvName, mine, { name: claimName, uid: await makeClaim(claimName, pvName) }));
  }
  const [rebound, recreated] = [...ownIds.keys()] as [string, string];

  const replica = await startResizer({
    kubeconfig: cluster.resizerKubeconfigPath,
    csiAddress: driver.address,
    args: ['--node-deployment'],
    env: { NODE_NAME: mine },
  });
  t.after(() => replica.stop());
  // Synced once an own claim grows.
  await requestPvcSize(admin, namespace, rebound, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await eventually(`${rebound} grown`, async () => (await readPvc(admin, namespace, rebound)).status?.capacity?.['storage'] === '2Gi');
  const expandedBefore = driver.callsOf('ControllerExpandVolume').length;

  // Claim first, asking for 3Gi already, then its volume: the claim does not change once the
  // volume exists, so it is grown only if it was read again when the volume arrived.
  const claimFirst = uniqueName('claim-first');
  const claimFirstPv = uniqueName('pv-cf');
  ownIds.set(claimFirst, await makeVolume(claimFirstPv, mine, { name: claimFirst, uid: await makeClaim(claimFirst, claimFirstPv, '3Gi') }));
  // Volume first (claimed by name, as a provisioner does), then the claim, then the volume's claimRef gets its UID.
  const volumeFirst = uniqueName('volume-first');
  const volumeFirstPv = uniqueName('pv-vf');
  ownIds.set(volumeFirst, await makeVolume(volumeFirstPv, mine, { name: volumeFirst }));
  await bindVolume(volumeFirstPv, { name: volumeFirst, uid: await makeClaim(volumeFirst, volumeFirstPv) });
  // A volume bound again: its claim deleted, a new claim bound to it.
  const reboundPv = (await readPvc(admin, namespace, rebound)).spec!.volumeName!;
  await deletePvc(admin, namespace, rebound);
  const rebinding = uniqueName('rebinding');
  await bindVolume(reboundPv, { name: rebinding, uid: await makeClaim(rebinding, reboundPv) });
  ownIds.set(rebinding, ownIds.get(rebound)!);
  ownIds.delete(rebound);
  // A claim deleted and made again under its name (asking for 3Gi), bound to a new volume made after it.
  const recreatedOldPv = (await readPvc(admin, namespace, recreated)).spec!.volumeName!;
  await deletePvc(admin, namespace, recreated);
  await deletePv(admin, recreatedOldPv);
  const recreatedPv = uniqueName('pv-again');
  ownIds.set(recreated, await makeVolume(recreatedPv, mine, { name: recreated, uid: await makeClaim(recreated, recreatedPv, '3Gi') }));

  for (const name of [volumeFirst, rebinding, ...elsewhere]) await requestPvcSize(admin, namespace, name, '3Gi');
  for (const name of ownIds.keys()) {
    await eventually(`${name} grown`, async () => (await readPvc(admin, namespace, name)).status?.capacity?.['storage'] === '3Gi');
  }
  // The claims made before their volumes were grown without a change after the volume came: the
  // replica read them again when their volumes arrived.
  const expanded = driver
    .callsOf('ControllerExpandVolume')
    .slice(expandedBefore)
    .map((c) => c.request['volume_id']);
  assert.deepEqual(expanded.sort(), [...ownIds.values()].sort());
  for (const name of elsewhere) {
    const untouched = await readPvc(admin, namespace, name);
    assert.equal(untouched.status?.capacity?.['storage'], '1Gi', name);
    assert.equal(untouched.status?.allocatedResourceStatuses, undefined, name);
    assert.equal(untouched.status?.conditions, undefined, name);
  }
});

test("offline-only node-local driver: a pod on the replica's node holds its claim's expansion until it is gone", async (t) => {
  const driverName = uniqueName('lvm.csi');
  const driver = await FaultDriver.start({ name: driverName, volumeExpansion: 'OFFLINE' });
  t.after(() => driver.stop());
  const node = uniqueName('node-pods');
  await createNode(admin, t, node);
  const namespace = await createNamespace(admin, 'rz-node-pods');
  const storageClassName = uniqueName('rz-sc');
  await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: driverName });
  const id = uniqueName('vol');
  driver.createVolume(id, GiB);
  const v = await provisionVolume(admin, driver.address, {
    namespace,
    size: '1Gi',
    storageClassName,
    driverName,
    existingVolumeId: id,
    nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] } },
  });
  const claimName = v.pvc.metadata!.name!;
  t.after(async () => {
    await deletePvc(admin, namespace, claimName);
    await deletePv(admin, v.pv.metadata!.name!);
  });
  // Scheduled on the node (spec.nodeName): the replica's pod informer asks for this node's pods only.
  const podName = uniqueName('rz-pod');
  await admin.core.createNamespacedPod({ namespace, body: asApiBody(pod({ name: podName, namespace, claims: [claimName], nodeName: node })) });

  const replica = await startResizer({
    kubeconfig: cluster.resizerKubeconfigPath,
    csiAddress: driver.address,
    args: ['--node-deployment'],
    env: { NODE_NAME: node },
  });
  t.after(() => replica.stop());
  await requestPvcSize(admin, namespace, claimName, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await eventually('in-use warning', async () =>
    (await eventsFor(admin, namespace, claimName)).some((e) => e.reason === 'VolumeResizeFailed' && e.message.includes('currently in-use')),
  );
  assert.equal(driver.callsOf('ControllerExpandVolume').length, 0);
  await admin.core.deleteNamespacedPod({ namespace, name: podName, gracePeriodSeconds: 0 });
  await eventually('grown once the pod is gone', async () => (await readPvc(admin, namespace, claimName)).status?.capacity?.['storage'] === '2Gi');
  assert.equal(driver.callsOf('ControllerExpandVolume').length, 1);
});
