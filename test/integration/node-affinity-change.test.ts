// A PV whose node affinity changes (mutable PV node affinity, KEP-5381: alpha in Kubernetes 1.35,
// the API server's MutablePVNodeAffinity gate, which test/cluster/cluster.ts turns on) moves to
// the right --node-deployment replica without a restart: the replica of the node it left stops
// caching it and acting on it, the replica of the node it went to picks it up, claim included.
//
// What each replica caches is read from its resize-state gauges (csi_resizer_pvcs): they count the
// claims of the replica's caches whose PV the replica acts on, so a claim counted by the new
// node's replica and not by the old one's shows both caches moved (docs/differences/node-deployment.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig, patchAs } from '../cluster/kube.js';
import { createNamespace, createNode, createStorageClass, deletePv, deletePvc, provisionVolume, requestPvcSize, uniqueName } from '../cluster/fixtures.js';
import { applyRbac } from '../cluster/rbac.js';
import { loadComponents, repoRoot } from '../cluster/components.js';
import { apiserverFeatureGates } from '../cluster/cluster.js';
import { FaultDriver } from '../fakes/fault-driver.js';
import { eventually, startResizer, type RunningResizer } from '../support/in-process-resizer.js';
import { readPvc } from '../support/api-reads.js';
import { GiB } from '../support/fault-scenario.js';
import { join } from 'node:path';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);
await applyRbac(admin, join(repoRoot, 'deploy', 'kubernetes', 'node-local', 'rbac-node.yaml'));

// Before 1.35 (scripts/test-matrix.sh runs older API servers) a PV's node affinity cannot change at all.
const { k8sVersion } = await loadComponents();
const mutableAffinity = apiserverFeatureGates(k8sVersion).some((flag) => flag.includes('MutablePVNodeAffinity=true'));

const onNode = (node: string) => ({
  required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] },
});

/** The claims with an unfinished resize the replica counts (csi_resizer_pvcs, every state). */
async function unfinishedCounted(replica: RunningResizer): Promise<number> {
  const gauge = replica.metrics.registry.getSingleMetric('csi_resizer_pvcs');
  if (!gauge) throw new Error('no csi_resizer_pvcs on the replica');
  return (await gauge.get()).values.reduce((sum, v) => sum + v.value, 0);
}

test(
  "a PV whose node affinity moves to another node is dropped by the old node's replica and finished by the new one's, without a restart",
  { skip: mutableAffinity ? false : `kube-apiserver ${k8sVersion} has no mutable PV node affinity` },
  async (t) => {
    const driverName = uniqueName('lvm.csi');
    // The old node's driver fails every expansion (a final error: the resize stays in progress there,
    // retried with backoff); the new node's driver, which now holds the volume, succeeds.
    const drivers = {
      a: await FaultDriver.start({ name: driverName, expandLimit: { bytes: GiB, code: GrpcStatus.INTERNAL, details: 'volume is being moved' } }),
      b: await FaultDriver.start({ name: driverName }),
    };
    t.after(() => Promise.all([drivers.a.stop(), drivers.b.stop()]));
    const nodes = { a: uniqueName('node-a'), b: uniqueName('node-b') };
    for (const name of Object.values(nodes)) {
      await createNode(admin, t, name);
    }
    const namespace = await createNamespace(admin, 'rz-node-move');
    const storageClassName = uniqueName('rz-sc');
    await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: driverName });
    const id = uniqueName('vol');
    drivers.a.createVolume(id, GiB);
    drivers.b.createVolume(id, GiB);
    const v = await provisionVolume(admin, drivers.a.address, {
      namespace,
      size: '1Gi',
      storageClassName,
      driverName,
      existingVolumeId: id,
      nodeAffinity: onNode(nodes.a),
    });
    const claim = v.pvc.metadata!.name!;
    const pvName = v.pv.metadata!.name!;
    t.after(async () => {
      await deletePvc(admin, namespace, claim);
      await deletePv(admin, pvName);
    });

    const replica = (driver: FaultDriver, node: string) =>
      startResizer({ kubeconfig: cluster.resizerKubeconfigPath, csiAddress: driver.address, args: ['--node-deployment'], env: { NODE_NAME: node } });
    const replicas = { a: await replica(drivers.a, nodes.a), b: await replica(drivers.b, nodes.b) };
    t.after(() => Promise.all([replicas.a.stop(), replicas.b.stop()]));

    // On node A: A's replica takes the resize and keeps retrying it; B's has nothing of it.
    await requestPvcSize(admin, namespace, claim, '2Gi', { retryUntilAdmittedMs: 10_000 });
    await eventually('two failed attempts on node A', () => drivers.a.callsOf('ControllerExpandVolume').length >= 2);
    await eventually("A's replica counting the unfinished resize", async () => (await unfinishedCounted(replicas.a)) === 1);
    assert.equal(await unfinishedCounted(replicas.b), 0, "B's replica caches nothing of A's volume");
    assert.equal(drivers.b.callsOf('ControllerExpandVolume').length, 0);

    // The volume moves to node B: only its node affinity changes.
    await admin.core.patchPersistentVolume({ name: pvName, body: { spec: { nodeAffinity: onNode(nodes.b) } } }, patchAs());
    await eventually("the PV and its claim leaving A's replica's caches", async () => (await unfinishedCounted(replicas.a)) === 0);
    const attemptsOnA = drivers.a.callsOf('ControllerExpandVolume').length;
    const grown = await eventually('the claim grown on node B', async () => {
      const pvc = await readPvc(admin, namespace, claim);
      return pvc.status?.capacity?.['storage'] === '2Gi' ? pvc : undefined;
    });
    assert.equal(grown.status?.allocatedResourceStatuses, undefined);
    assert.deepEqual(grown.status?.conditions ?? [], [], 'the old node’s error condition is gone');
    assert.deepEqual(
      drivers.b
        .callsOf('ControllerExpandVolume')
        .map((c) => [c.request['volume_id'], (c.request['capacity_range'] as { required_bytes?: string }).required_bytes]),
      [[id, String(2n * GiB)]],
    );
    assert.equal(drivers.b.volumeBytes(id), 2n * GiB);

    // B's replica acts on it from now on, and A's not at all: a second resize goes to B alone.
    await requestPvcSize(admin, namespace, claim, '3Gi');
    await eventually('the claim grown to 3Gi on node B', async () => (await readPvc(admin, namespace, claim)).status?.capacity?.['storage'] === '3Gi');
    assert.equal(drivers.b.callsOf('ControllerExpandVolume').length, 2);
    assert.equal(drivers.a.callsOf('ControllerExpandVolume').length, attemptsOnA, "no call on node A's driver after the move");
    assert.equal(await unfinishedCounted(replicas.a), 0);
  },
);
