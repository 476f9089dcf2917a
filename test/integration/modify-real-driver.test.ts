// The modify controller end to end against the real API server and the real CSI driver
// (Kubernetes' e2e CSI mock driver, whose ControllerModifyVolume always succeeds): the happy paths,
// a class that doesn't exist yet, a foreign PV, and a resize at the same time as a modify.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig, patchAs } from '../cluster/kube.js';
import { createNamespace, createStorageClass, deletePvc, provisionVolume, uniqueName } from '../cluster/fixtures.js';
import { startMockDriver } from '../cluster/mock-driver.js';
import { startResizer, eventually, type RunningResizer } from '../support/in-process-resizer.js';
import { eventsFor, readPv, readPvc, reasons } from '../support/api-reads.js';
import { conditionOf, conflictLines, createVac, deleteVac, modifiedTo, pvcWhen, setClass } from './modify-fixtures.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);
// A driver of this file's own, so no other test's resizer acts on these volumes.
const driver = await startMockDriver({ name: `${uniqueName('modify')}.mock.csi.k8s.io` });
process.once('beforeExit', () => void driver.stop());
const namespace = await createNamespace(admin, 'rz-modify');
const storageClassName = uniqueName('rz-sc');
await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: driver.name });

type T = { after(fn: () => unknown): void };

async function volume(t: T, driverName = driver.name) {
  const v = await provisionVolume(admin, driver.address, {
    namespace,
    size: '1Gi',
    storageClassName,
    driverName,
    ...(driverName === driver.name ? {} : { existingVolumeId: uniqueName('foreign') }),
  });
  const pvcName = v.pvc.metadata!.name!;
  t.after(() => deletePvc(admin, namespace, pvcName));
  return { pvcName, pvName: v.pv.metadata!.name! };
}

async function resizer(t: T, args: string[] = []): Promise<RunningResizer> {
  const r = await startResizer({ kubeconfig: cluster.resizerKubeconfigPath, csiAddress: driver.address, args });
  t.after(() => r.stop());
  return r;
}

async function vac(t: T, parameters: Record<string, string>, driverName = driver.name): Promise<string> {
  const name = await createVac(admin, driverName, parameters);
  t.after(() => deleteVac(admin, name));
  return name;
}

const modifyEvents = async (pvcName: string, count: number) =>
  eventually(`${count} events`, async () => {
    const e = (await eventsFor(admin, namespace, pvcName)).filter((x) => x.reason.startsWith('VolumeModify'));
    return e.length >= count ? e : undefined;
  });

test('a PVC without a class is modified to one: PV first, then the PVC status, events as upstream', async (t) => {
  const gold = await vac(t, { iops: '3000', throughput: '125' });
  const v = await volume(t);
  await resizer(t);
  await setClass(admin, namespace, v.pvcName, gold);

  const pvc = await pvcWhen(admin, namespace, v.pvcName, `current class ${gold}`, modifiedTo(gold));
  assert.equal(pvc.spec.volumeAttributesClassName, gold);
  assert.deepEqual(
    (pvc.status?.conditions ?? []).map((c) => c.type),
    [],
  );
  assert.equal((await readPv(admin, v.pvName)).spec.volumeAttributesClassName, gold);

  const events = await modifyEvents(v.pvcName, 2);
  assert.deepEqual(reasons(events), ['VolumeModify', 'VolumeModifySuccessful']);
  assert.equal(events[0]?.type, 'Normal');
  assert.equal(events[0]?.message, `external resizer is modifying volume ${v.pvcName} with vac ${gold}`);
  assert.equal(events[1]?.message, `external resizer modified volume ${v.pvcName} with vac ${gold} successfully`);
  assert.equal(events[0]?.source, `external-resizer ${driver.name}`);
});

test('from one class to another, and back to the first', async (t) => {
  const gold = await vac(t, { iops: '3000' });
  const silver = await vac(t, { iops: '1000' });
  const v = await volume(t);
  await resizer(t);

  await setClass(admin, namespace, v.pvcName, gold);
  await pvcWhen(admin, namespace, v.pvcName, `current class ${gold}`, modifiedTo(gold));
  await setClass(admin, namespace, v.pvcName, silver);
  await pvcWhen(admin, namespace, v.pvcName, `current class ${silver}`, modifiedTo(silver));
  assert.equal((await readPv(admin, v.pvName)).spec.volumeAttributesClassName, silver);
  await setClass(admin, namespace, v.pvcName, gold);
  await pvcWhen(admin, namespace, v.pvcName, `current class ${gold} again`, modifiedTo(gold));
  assert.equal((await readPv(admin, v.pvName)).spec.volumeAttributesClassName, gold);

  // The same event again within 10 minutes is aggregated into the first one (count 2), as client-go does.
  const events = await eventually('gold events counted twice', async () => {
    const e = (await eventsFor(admin, namespace, v.pvcName)).filter((x) => x.reason.startsWith('VolumeModify'));
    return e.filter((x) => x.count === 2).length === 2 ? e : undefined;
  });
  assert.deepEqual(
    events.map((e) => [e.reason, e.message, e.count]),
    [
      ['VolumeModify', `external resizer is modifying volume ${v.pvcName} with vac ${gold}`, 2],
      ['VolumeModifySuccessful', `external resizer modified volume ${v.pvcName} with vac ${gold} successfully`, 2],
      ['VolumeModify', `external resizer is modifying volume ${v.pvcName} with vac ${silver}`, 1],
      ['VolumeModifySuccessful', `external resizer modified volume ${v.pvcName} with vac ${silver} successfully`, 1],
    ],
  );
});

test('the API server forbids clearing the class once the PVC has a current class', async (t) => {
  const gold = await vac(t, { iops: '3000' });
  const v = await volume(t);
  await resizer(t);
  await setClass(admin, namespace, v.pvcName, gold);
  await pvcWhen(admin, namespace, v.pvcName, `current class ${gold}`, modifiedTo(gold));
  await assert.rejects(setClass(admin, namespace, v.pvcName, null), /update to nil is forbidden when status.currentVolumeAttributesClassName is not nil/);
});

test('a class that does not exist yet: Warning and Pending; creating it later finishes the modify without any PVC edit', async (t) => {
  const v = await volume(t);
  await resizer(t);
  const later = uniqueName('rz-vac-later');
  await setClass(admin, namespace, v.pvcName, later);

  const pending = await pvcWhen(admin, namespace, v.pvcName, 'Pending', (p) => p.status?.modifyVolumeStatus?.status === 'Pending');
  assert.equal(pending.status?.modifyVolumeStatus?.targetVolumeAttributesClassName, undefined);
  assert.equal(pending.status?.currentVolumeAttributesClassName, undefined);
  const [warning] = await modifyEvents(v.pvcName, 1);
  assert.equal(warning?.type, 'Warning');
  assert.equal(warning?.reason, 'VolumeModifyFailed');
  assert.equal(warning?.message, `VAC "${later}" does not exist.`);
  const generation = pending.metadata.generation;

  await createVac(admin, driver.name, { iops: '500' }, later);
  t.after(() => deleteVac(admin, later));
  const done = await pvcWhen(admin, namespace, v.pvcName, `current class ${later}`, modifiedTo(later));
  assert.equal(done.metadata.generation, generation, 'the PVC spec was not edited');
  assert.equal((await readPv(admin, v.pvName)).spec.volumeAttributesClassName, later);
  assert.deepEqual(reasons(await modifyEvents(v.pvcName, 3)), ['VolumeModifyFailed', 'VolumeModify', 'VolumeModifySuccessful']);
});

test('a PV of another driver is left alone', async (t) => {
  const foreignClass = await vac(t, { iops: '3000' }, 'other.example.com');
  const ownClass = await vac(t, { iops: '3000' });
  const foreign = await volume(t, 'other.example.com');
  const own = await volume(t);
  // --v=7 for the line that says a PV of another driver was skipped.
  const r = await resizer(t, ['--v=7']);
  const skipped = (l: string) => l.includes('"Skipping PV provisioned by different driver"') && l.includes(foreign.pvName);
  // The resizer is past its initial sync and has looked at the foreign PVC once, so the class
  // change below reaches it as an update.
  await eventually('the foreign PVC skipped once', () => r.logs.some(skipped));
  const from = r.logs.length;
  await setClass(admin, namespace, foreign.pvcName, foreignClass);
  await setClass(admin, namespace, own.pvcName, ownClass);
  await pvcWhen(admin, namespace, own.pvcName, `current class ${ownClass}`, modifiedTo(ownClass));
  // The class change of the foreign PVC was enqueued and its reconcile ended at the driver check:
  // whatever it would have written, it would have written by then.
  await eventually('the foreign PVC skipped after its class change', () => {
    const later = r.logs.slice(from);
    const enqueued = later.findIndex((l) => l.includes('"Enqueueing PVC for modify"') && l.includes(`${namespace}/${foreign.pvcName}`));
    return enqueued >= 0 && later.slice(enqueued).some(skipped);
  });

  const pvc = await readPvc(admin, namespace, foreign.pvcName);
  assert.equal(pvc.status?.modifyVolumeStatus, undefined);
  assert.equal(pvc.status?.currentVolumeAttributesClassName, undefined);
  assert.equal((await readPv(admin, foreign.pvName)).spec.volumeAttributesClassName, undefined);
  assert.deepEqual(await eventsFor(admin, namespace, foreign.pvcName), []);
});

test('resize and modify of the same PVC at once: both complete, with no Conflict and no failed sync', async (t) => {
  const gold = await vac(t, { iops: '3000' });
  const v = await volume(t);
  const r = await resizer(t);
  // One edit asks for both; the resize admission may lag behind the new StorageClass for a moment.
  await eventually(
    'resize admitted',
    async () => {
      await admin.core.patchNamespacedPersistentVolumeClaim(
        {
          namespace,
          name: v.pvcName,
          body: { spec: { resources: { requests: { storage: '2Gi' } }, volumeAttributesClassName: gold } },
        },
        patchAs(),
      );
      return true;
    },
    10_000,
  );

  const pvc = await pvcWhen(admin, namespace, v.pvcName, 'resized and modified', (p) => modifiedTo(gold)(p) && p.status?.capacity?.['storage'] === '2Gi');
  assert.equal(conditionOf(pvc, 'Resizing'), undefined);
  const pv = await readPv(admin, v.pvName);
  assert.equal(pv.spec.capacity?.['storage'], '2Gi');
  assert.equal(pv.spec.volumeAttributesClassName, gold);
  const events = await eventually('all four events', async () => {
    const e = reasons(await eventsFor(admin, namespace, v.pvcName));
    return e.length >= 4 ? e : undefined;
  });
  assert.deepEqual([...events].sort(), ['Resizing', 'VolumeModify', 'VolumeModifySuccessful', 'VolumeResizeSuccessful']);
  assert.deepEqual(conflictLines(r.logs), []);
});
