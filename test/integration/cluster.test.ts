// The local control plane behaves like a real cluster where the resizer's tests depend on it:
// PVC expansion admission, API validation of shrinking, the RBAC of deploy/kubernetes/rbac.yaml,
// and a CSI driver on a unix socket.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getPluginInfo } from '../cluster/csi-proto.js';
import { createNamespace, createStorageClass, deleteProvisioned, provisionVolume, requestPvcSize, uniqueName, type Provisioned } from '../cluster/fixtures.js';
import { messageOf, patchAs, statusOf } from '../cluster/kube.js';
import { adminClients, resizerClients, useCluster, type ClusterHandle, type KubeClients } from '../cluster/test-cluster.js';

let cluster: ClusterHandle;
let admin: KubeClients;
let resizer: KubeClients;
let namespace: string;
let expandable: string;
let fixed: string;

before(async () => {
  cluster = await useCluster();
  admin = adminClients(cluster);
  resizer = resizerClients(cluster);
  namespace = await createNamespace(admin);
  expandable = (await createStorageClass(admin, { allowVolumeExpansion: true, provisioner: cluster.driverName })).metadata!.name!;
  fixed = (await createStorageClass(admin, { allowVolumeExpansion: false, provisioner: cluster.driverName })).metadata!.name!;
});

after(async () => {
  await admin?.storage.deleteStorageClass({ name: expandable }).catch(() => {});
  await admin?.storage.deleteStorageClass({ name: fixed }).catch(() => {});
});

async function provision(storageClassName: string): Promise<Provisioned> {
  return provisionVolume(admin, cluster.csiAddress, {
    namespace,
    size: '1Gi',
    storageClassName,
    driverName: cluster.driverName,
    csiProtoPath: cluster.csiProtoPath,
  });
}

async function rejection(p: Promise<unknown>): Promise<{ status: number | undefined; message: string }> {
  try {
    await p;
  } catch (err) {
    return { status: statusOf(err), message: messageOf(err) };
  }
  assert.fail('the request was accepted');
}

describe('PVC expansion admission and validation', () => {
  test('growing a PVC whose StorageClass has allowVolumeExpansion=false is refused with 403', async (t) => {
    const vol = await provision(fixed);
    t.after(() => deleteProvisioned(admin, vol));
    const { status, message } = await rejection(requestPvcSize(admin, namespace, vol.pvc.metadata!.name!, '2Gi'));
    assert.equal(status, 403);
    assert.match(message, /storageclass that provisions the pvc must support resize/);
  });

  test('growing a bound PVC whose StorageClass allows expansion is accepted', async (t) => {
    const vol = await provision(expandable);
    t.after(() => deleteProvisioned(admin, vol));
    assert.equal(vol.pvc.status?.phase, 'Bound');
    assert.equal(vol.pv.status?.phase, 'Bound');
    const grown = await requestPvcSize(admin, namespace, vol.pvc.metadata!.name!, '2Gi', { retryUntilAdmittedMs: 10_000 });
    assert.equal(grown.spec?.resources?.requests?.['storage'], '2Gi');
    assert.equal(grown.status?.capacity?.['storage'], '1Gi');
  });

  test('shrinking a PVC below status.capacity is refused', async (t) => {
    const vol = await provision(expandable);
    t.after(() => deleteProvisioned(admin, vol));
    const { status, message } = await rejection(requestPvcSize(admin, namespace, vol.pvc.metadata!.name!, '512Mi'));
    assert.equal(status, 422, message);
    assert.match(message, /status\.capacity|less than/);
  });

  test('the fixture binds PV and PVC to each other and to the driver volume', async (t) => {
    const vol = await provision(expandable);
    t.after(() => deleteProvisioned(admin, vol));
    assert.equal(vol.pvc.spec?.volumeName, vol.pv.metadata!.name);
    assert.equal(vol.pv.spec?.claimRef?.uid, vol.pvc.metadata!.uid);
    assert.equal(vol.pv.spec?.csi?.driver, cluster.driverName);
    assert.equal(vol.pv.spec?.csi?.volumeHandle, vol.volumeId);
    assert.deepEqual(vol.pvc.status?.capacity, { storage: '1Gi' });
  });
});

describe('the resizer identity has exactly the RBAC of deploy/kubernetes/rbac.yaml and the opt-in secrets access', () => {
  test('lists PVCs and PVs, patches PVC status and PVs', async (t) => {
    const vol = await provision(expandable);
    t.after(() => deleteProvisioned(admin, vol));
    const pvcs = await resizer.core.listPersistentVolumeClaimForAllNamespaces();
    assert.ok(pvcs.items.some((p) => p.metadata?.uid === vol.pvc.metadata?.uid));
    const pvs = await resizer.core.listPersistentVolume();
    assert.ok(pvs.items.some((p) => p.metadata?.name === vol.pv.metadata?.name));

    const pvc = await resizer.core.patchNamespacedPersistentVolumeClaimStatus(
      { name: vol.pvc.metadata!.name!, namespace, body: { status: { allocatedResources: { storage: '1Gi' } } } },
      patchAs(),
    );
    assert.equal(pvc.status?.allocatedResources?.['storage'], '1Gi');
    const pv = await resizer.core.patchPersistentVolume({ name: vol.pv.metadata!.name!, body: { spec: { capacity: { storage: '2Gi' } } } }, patchAs());
    assert.equal(pv.spec?.capacity?.['storage'], '2Gi');
  });

  test('may watch PVCs, PVs and pods, get secrets (the opt-in) and read VolumeAttributesClasses', async () => {
    const allowed: Array<{ resource: string; verb: string; group?: string; subresource?: string }> = [
      { resource: 'persistentvolumeclaims', verb: 'watch' },
      { resource: 'persistentvolumes', verb: 'watch' },
      { resource: 'pods', verb: 'list' },
      { resource: 'pods', verb: 'watch' },
      { resource: 'secrets', verb: 'get' },
      { resource: 'events', verb: 'patch' },
      { resource: 'volumeattributesclasses', verb: 'watch', group: 'storage.k8s.io' },
    ];
    for (const attrs of allowed) {
      const review = await resizer.authz.createSelfSubjectAccessReview({
        body: { spec: { resourceAttributes: { namespace, ...attrs } } },
      });
      assert.equal(review.status?.allowed, true, `${attrs.verb} ${attrs.resource}`);
    }
  });

  test('creates events', async () => {
    const event = await resizer.core.createNamespacedEvent({
      namespace,
      body: {
        metadata: { name: uniqueName('rz-event'), namespace },
        involvedObject: { kind: 'PersistentVolumeClaim', namespace, name: 'some-claim', apiVersion: 'v1' },
        reason: 'Resizing',
        message: 'External resizer is resizing volume',
        type: 'Normal',
        source: { component: 'external-resizer' },
      },
    });
    assert.equal(event.reason, 'Resizing');
  });

  test('creates, gets and updates Leases in its namespace, and may not delete them', async (t) => {
    const name = uniqueName('rz-lease');
    const created = await resizer.coordination.createNamespacedLease({
      namespace: 'default',
      body: { metadata: { name }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } },
    });
    const got = await resizer.coordination.readNamespacedLease({ name, namespace: 'default' });
    assert.equal(got.spec?.holderIdentity, 'a');
    const updated = await resizer.coordination.replaceNamespacedLease({
      name,
      namespace: 'default',
      body: { ...created, spec: { ...created.spec, holderIdentity: 'b' } },
    });
    assert.equal(updated.spec?.holderIdentity, 'b');
    t.after(() => admin.coordination.deleteNamespacedLease({ name, namespace: 'default' }));
    assert.equal((await rejection(resizer.coordination.deleteNamespacedLease({ name, namespace: 'default' }))).status, 403);
  });

  test('is forbidden to patch a PVC spec, list secrets, or delete PVCs and PVs', async (t) => {
    const vol = await provision(expandable);
    t.after(() => deleteProvisioned(admin, vol));
    const pvcName = vol.pvc.metadata!.name!;
    const refusals = {
      'patch PVC spec': () =>
        resizer.core.patchNamespacedPersistentVolumeClaim(
          { name: pvcName, namespace, body: { spec: { resources: { requests: { storage: '2Gi' } } } } },
          patchAs(),
        ),
      'list secrets': () => resizer.core.listNamespacedSecret({ namespace }),
      'delete PVC': () => resizer.core.deleteNamespacedPersistentVolumeClaim({ name: pvcName, namespace }),
      'delete PV': () => resizer.core.deletePersistentVolume({ name: vol.pv.metadata!.name! }),
    };
    for (const [what, call] of Object.entries(refusals)) {
      const { status } = await rejection(call());
      assert.equal(status, 403, what);
    }
    const denied: Array<{ resource: string; verb: string; group?: string; namespace?: string }> = [
      { resource: 'secrets', verb: 'watch' },
      { resource: 'persistentvolumeclaims', verb: 'update' },
      // Reads come from informers: no get; events are never listed.
      { resource: 'persistentvolumeclaims', verb: 'get' },
      { resource: 'pods', verb: 'get' },
      { resource: 'events', verb: 'list' },
      { resource: 'storageclasses', verb: 'list', group: 'storage.k8s.io' },
      { resource: 'leases', verb: 'create', group: 'coordination.k8s.io', namespace: 'kube-system' },
    ];
    for (const attrs of denied) {
      const review = await resizer.authz.createSelfSubjectAccessReview({
        body: { spec: { resourceAttributes: { namespace, ...attrs } } },
      });
      assert.equal(review.status?.allowed, false, `${attrs.verb} ${attrs.resource}`);
    }
  });
});

test('the CSI mock driver answers GetPluginInfo on its unix socket', async () => {
  assert.match(cluster.csiAddress, /^unix:\/\/\//);
  const info = await getPluginInfo(cluster.csiProtoPath, cluster.csiAddress);
  assert.equal(info.name, cluster.driverName);
});
