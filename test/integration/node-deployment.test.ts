// --node-deployment against the real API server: two node replicas, each beside its own copy of a
// node-local driver (same driver name, its own socket, as a DaemonSet would run them), grow only
// their own node's volumes; a volume without node affinity is left to no one and each replica
// says so; the central resizer's behaviour is unchanged (other tests).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig } from '../cluster/kube.js';
import { createNamespace, createStorageClass, deletePv, deletePvc, provisionVolume, requestPvcSize, uniqueName } from '../cluster/fixtures.js';
import { FaultDriver } from '../fakes/fault-driver.js';
import { eventually, startResizer } from '../support/in-process-resizer.js';
import { readPv, readPvc } from '../support/api-reads.js';
import { GiB } from '../support/fault-scenario.js';
import { applyRbac } from '../cluster/rbac.js';
import { join } from 'node:path';
import { repoRoot } from '../cluster/components.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);
// What a node replica needs beyond rbac.yaml, from the manifest an operator applies.
await applyRbac(admin, join(repoRoot, 'deploy', 'kubernetes', 'node-local', 'rbac-node.yaml'));

test('two node replicas never touch each other\'s volumes; a PV without node affinity is left to no one', async (t) => {
  const driverName = uniqueName('lvm.csi');
  const drivers = { a: await FaultDriver.start({ name: driverName }), b: await FaultDriver.start({ name: driverName }) };
  t.after(() => Promise.all([drivers.a.stop(), drivers.b.stop()]));
  const nodes = { a: uniqueName('node-a'), b: uniqueName('node-b') };
  for (const name of Object.values(nodes)) {
    await admin.core.createNode({ body: { metadata: { name, labels: { 'kubernetes.io/hostname': name } } } });
    t.after(() => admin.core.deleteNode({ name }).then(() => undefined, () => undefined));
  }
  const namespace = await createNamespace(admin, 'rz-node');
  const storageClassName = uniqueName('rz-sc');
  await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: driverName });

  const volume = async (driver: FaultDriver, node: string | undefined) => {
    const id = uniqueName('vol');
    driver.createVolume(id, GiB);
    const v = await provisionVolume(admin, driver.address, {
      namespace, size: '1Gi', storageClassName, driverName, existingVolumeId: id,
      ...(node ? { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] } } } : {}),
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

  const replica = (driver: FaultDriver, node: string) => startResizer({
    kubeconfig: cluster.resizerKubeconfigPath, csiAddress: driver.address, args: ['--node-deployment'], env: { NODE_NAME: node },
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
      r.logs.some((l) => l.includes('PV has no node affinity; node-local resizers leave it alone') && l.includes(`pv="${nowhere.pv}"`)));
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
      /--node-deployment needs the node name in the NODE_NAME environment variable/);
    await assert.rejects(
      startResizer({ kubeconfig: cluster.resizerKubeconfigPath, csiAddress: driver.address, args: ['--node-deployment'], env: { NODE_NAME: 'no-such-node' } }),
      (err: unknown) => err instanceof Error && /Failed to get node no-such-node for --node-deployment/.test(err.message) && /not found/.test(String((err as { cause?: unknown }).cause)));
  } finally {
    await driver.stop();
  }
});
