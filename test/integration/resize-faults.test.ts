// The resize controller against the real API server and a scripted CSI driver
// (test/fakes/fault-driver.ts) for the answers a real driver gives only rarely: infeasible sizes,
// final and non-final errors, volumes in use, offline-only drivers, slow calls, bogus replies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig, patchAs } from '../cluster/kube.js';
import { createNamespace, createStorageClass, deletePvc, provisionVolume, requestPvcSize, uniqueName } from '../cluster/fixtures.js';
import { FaultDriver } from '../fakes/fault-driver.js';
import { startResizer, eventually } from '../support/in-process-resizer.js';
import { faultScenario, GiB, type FaultScenario, type FaultScenarioOptions, type TestContextLike } from '../support/fault-scenario.js';
import { readPv, readPvc, eventsFor, reasons } from '../support/api-reads.js';
import { asApiBody, pod, pv as volume, pvc as claim } from '../support/builders.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);

type Scenario = FaultScenario;

const expandCalls = (s: Scenario) =>
  s.driver.callsOf('ControllerExpandVolume').map((c) => ({
    requiredBytes: BigInt((c.request['capacity_range'] as { required_bytes: string }).required_bytes),
    request: c.request,
  }));

const scenario = (t: TestContextLike, opts: FaultScenarioOptions = {}) => faultScenario(t, cluster, admin, opts);

const grow = (s: Scenario, size: string) => requestPvcSize(admin, s.namespace, s.pvcName, size, { retryUntilAdmittedMs: 10_000 });
const pvcOf = (s: Scenario) => readPvc(admin, s.namespace, s.pvcName);
const capacityReaches = (s: Scenario, size: string) =>
  eventually(`PVC capacity ${size}`, async () => ((await pvcOf(s)).status?.capacity?.['storage'] === size ? pvcOf(s) : undefined));

async function createPodUsing(namespace: string, claimName: string): Promise<string> {
  const name = uniqueName('rz-pod');
  await admin.core.createNamespacedPod({ namespace, body: asApiBody(pod({ name, namespace, claims: [claimName] })) });
  return name;
}

test('block volume: capability Block with SINGLE_NODE_WRITER, secrets from controllerExpandSecretRef, never logged', async (t) => {
  const namespace = await createNamespace(admin, 'rz-secret');
  await admin.core.createNamespacedSecret({ namespace, body: { metadata: { name: 'expand-creds' }, stringData: { password: 'hunter2-very-secret' } } });
  const s = await scenario(t, { namespace, volume: { volumeMode: 'Block', controllerExpandSecretRef: { name: 'expand-creds', namespace } } });
  await grow(s, '2Gi');
  await capacityReaches(s, '2Gi');
  const [call] = expandCalls(s);
  assert.ok(call);
  assert.equal(call.requiredBytes, 2n * GiB);
  assert.deepEqual(call.request['volume_capability'], { block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' }, access_type: 'block' });
  assert.deepEqual(call.request['secrets'], { password: 'hunter2-very-secret' });
  assert.ok(!s.resizer.logs.some((l) => l.includes('hunter2')), 'a secret reached the logs');
});

test('infeasible size: ControllerResizeInfeasible and an error condition, then recovery by lowering the request', async (t) => {
  const s = await scenario(t, {
    driver: { expandLimit: { bytes: 5n * GiB, code: GrpcStatus.OUT_OF_RANGE, details: 'requested capacity exceeds maximum' } },
    resizerArgs: ['--retry-interval-max=1m'],
  });
  await grow(s, '10Gi');
  const failed = await eventually('ControllerResizeInfeasible', async () => {
    const p = await pvcOf(s);
    return p.status?.allocatedResourceStatuses?.['storage'] === 'ControllerResizeInfeasible' ? p : undefined;
  });
  assert.deepEqual(failed.status?.allocatedResources, { storage: '10Gi' });
  const condition = failed.status?.conditions?.find((c) => c.type === 'ControllerResizeError');
  assert.equal(condition?.message, 'failed to expand pvc with rpc error: code = OutOfRange desc = requested capacity exceeds maximum');
  const warning = (await eventsFor(admin, s.namespace, s.pvcName)).find((e) => e.reason === 'VolumeResizeFailed');
  assert.match(warning?.message ?? '', new RegExp(`resize volume "${s.pvName}" by resizer "${s.driver.name}" failed: rpc error: code = OutOfRange`));
  assert.equal((await readPv(admin, s.pvName)).spec.capacity?.['storage'], '1Gi');

  // The slow set holds further attempts at the same size (retention 1m): at most the one immediate retry.
  // The resizer says when it holds one; after that line, no more calls can have been made for this size.
  await eventually('the slow set holding a retry', () =>
    s.resizer.logs.some((l) =>
      l.includes(`skipping volume expansion for pvc ${s.namespace}/${s.pvcName}, because expansion previously failed with infeasible error`),
    ),
  );
  assert.ok(expandCalls(s).length <= 2, `expected at most 2 attempts, saw ${expandCalls(s).length}`);

  await grow(s, '3Gi');
  const done = await capacityReaches(s, '3Gi');
  assert.deepEqual(done.status?.allocatedResources, { storage: '3Gi' });
  assert.equal(done.status?.allocatedResourceStatuses, undefined);
  assert.deepEqual(done.status?.conditions ?? [], []);
  assert.equal(expandCalls(s).at(-1)?.requiredBytes, 3n * GiB);
  assert.equal((await readPv(admin, s.pvName)).spec.capacity?.['storage'], '3Gi');
});

test('final error: the status stays in progress with an error condition; lowering the request recovers', async (t) => {
  const s = await scenario(t, { driver: { expandLimit: { bytes: 5n * GiB, code: GrpcStatus.INTERNAL, details: 'backend said no' } } });
  await grow(s, '10Gi');
  const failed = await eventually('ControllerResizeError', async () => {
    const p = await pvcOf(s);
    return p.status?.conditions?.some((c) => c.type === 'ControllerResizeError') ? p : undefined;
  });
  assert.equal(failed.status?.allocatedResourceStatuses?.['storage'], 'ControllerResizeInProgress');
  await grow(s, '4Gi');
  const done = await capacityReaches(s, '4Gi');
  assert.deepEqual(done.status?.allocatedResources, { storage: '4Gi' });
  assert.equal(expandCalls(s).at(-1)?.requiredBytes, 4n * GiB);
});

test('non-final error: the same target is retried until it succeeds, even if the user lowers the request', async (t) => {
  const s = await scenario(t);
  s.driver.script('ControllerExpandVolume', { code: GrpcStatus.UNAVAILABLE }, { code: GrpcStatus.UNAVAILABLE }, { code: GrpcStatus.UNAVAILABLE });
  await grow(s, '10Gi');
  await eventually('first failure', async () => expandCalls(s).length >= 1);
  await grow(s, '3Gi');
  const done = await capacityReaches(s, '10Gi');
  assert.deepEqual(done.status?.allocatedResources, { storage: '10Gi' });
  assert.ok(expandCalls(s).length >= 4);
  assert.ok(
    expandCalls(s).every((c) => c.requiredBytes === 10n * GiB),
    'an uncertain target must not change',
  );
  assert.equal(
    (done.status?.conditions ?? []).some((c) => c.type === 'ControllerResizeError'),
    false,
  );
});

test('volume in use: after FailedPrecondition no call while a pod uses the claim; expansion once the pod is gone', async (t) => {
  const s = await scenario(t);
  const pod = await createPodUsing(s.namespace, s.pvcName);
  s.driver.script('ControllerExpandVolume', { code: GrpcStatus.FAILED_PRECONDITION, details: 'volume is published' });
  await grow(s, '2Gi');
  await eventually('in-use warning', async () =>
    (await eventsFor(admin, s.namespace, s.pvcName)).some((e) => e.message.includes('only supports offline expansion and volume is currently in-use')),
  );
  // Two retries refused by the in-use guard: the retries after the FailedPrecondition ran and did not call the driver.
  await eventually(
    'two retries refused while the pod lives',
    () => s.resizer.logs.filter((l) => l.includes('Error syncing PVC') && l.includes(`Unable to expand ${s.namespace}/${s.pvcName} because`)).length >= 2,
  );
  assert.equal(expandCalls(s).length, 1, 'the driver must not be called again while the pod lives');
  const inUse = (await eventsFor(admin, s.namespace, s.pvcName)).find((e) => e.message.includes('currently in-use'));
  assert.equal(
    inUse?.message,
    `Unable to expand ${s.namespace}/${s.pvcName} because CSI driver ${s.driver.name} only supports offline expansion and volume is currently in-use`,
  );

  await admin.core.deleteNamespacedPod({ namespace: s.namespace, name: pod, gracePeriodSeconds: 0 });
  await capacityReaches(s, '2Gi');
  assert.equal(expandCalls(s).length, 2);
});

test('offline-only driver: no call at all while a live pod uses the claim (upstream waits for a FailedPrecondition first)', async (t) => {
  const s = await scenario(t, { driver: { volumeExpansion: 'OFFLINE' } });
  const pod = await createPodUsing(s.namespace, s.pvcName);
  await grow(s, '2Gi');
  await eventually('in-use warning', async () =>
    (await eventsFor(admin, s.namespace, s.pvcName)).some((e) => e.reason === 'VolumeResizeFailed' && e.message.includes('currently in-use')),
  );
  assert.equal(expandCalls(s).length, 0);
  await admin.core.deleteNamespacedPod({ namespace: s.namespace, name: pod, gracePeriodSeconds: 0 });
  await capacityReaches(s, '2Gi');
  assert.equal(expandCalls(s).length, 1);
});

test('PVC deleted mid-resize: nothing crashes, the PV keeps what the driver did, other PVCs still resize', async (t) => {
  const s = await scenario(t);
  s.driver.script('ControllerExpandVolume', { delayMs: 1500 });
  await grow(s, '2Gi');
  await eventually('call in flight', async () => expandCalls(s).length === 1);
  await deletePvc(admin, s.namespace, s.pvcName);
  await eventually('PV grown by the finished call', async () => (await readPv(admin, s.pvName)).spec.capacity?.['storage'] === '2Gi');
  // The resizer has taken the key again after the call ended and found the PVC gone: nothing left to retry.
  await eventually('the deleted PVC processed', () =>
    s.resizer.logs.some((l) => l.includes('"PVC is deleted or does not exist"') && l.includes(`${s.namespace}/${s.pvcName}`)),
  );
  assert.equal(expandCalls(s).length, 1, 'a deleted PVC is not retried');

  const control = await provisionVolume(admin, s.driver.address, {
    namespace: s.namespace,
    size: '1Gi',
    storageClassName: s.storageClassName,
    driverName: s.driver.name,
    existingVolumeId: 'control',
  });
  s.driver.createVolume('control', GiB);
  await requestPvcSize(admin, s.namespace, control.pvc.metadata!.name!, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await eventually('control PVC resized', async () => (await readPvc(admin, s.namespace, control.pvc.metadata!.name!)).status?.capacity?.['storage'] === '2Gi');
});

test('conflict on the status patch: retried, the write lands, a concurrent condition survives', async (t) => {
  const s = await scenario(t);
  s.driver.script('ControllerExpandVolume', { delayMs: 1500 });
  await grow(s, '2Gi');
  await eventually('call in flight', async () => expandCalls(s).length === 1);
  // Someone else writes the status meanwhile: the resizer's cached resourceVersion is now stale.
  await admin.core.patchNamespacedPersistentVolumeClaimStatus(
    { namespace: s.namespace, name: s.pvcName, body: { status: { conditions: [{ type: 'ExampleOther', status: 'True' }] } } },
    patchAs(),
  );
  const done = await capacityReaches(s, '2Gi');
  assert.ok(
    s.resizer.logs.some((l) => l.includes('Error syncing PVC') && l.includes('the object has been modified')),
    'the stale write must have met a 409 Conflict',
  );
  assert.ok(
    done.status?.conditions?.some((c) => c.type === 'ExampleOther'),
    "the other writer's condition is kept",
  );
  assert.equal(
    (done.status?.conditions ?? []).some((c) => c.type === 'Resizing'),
    false,
  );
  assert.equal((await readPv(admin, s.pvName)).spec.capacity?.['storage'], '2Gi');
});

test('restart in the middle of an operation: the new resizer resumes the same target', async (t) => {
  const s = await scenario(t);
  s.driver.script('ControllerExpandVolume', { hang: true });
  await grow(s, '2Gi');
  await eventually('call in flight', async () => expandCalls(s).length === 1);
  const inFlight = await pvcOf(s);
  assert.equal(inFlight.status?.allocatedResourceStatuses?.['storage'], 'ControllerResizeInProgress');
  await s.restartResizer();
  await capacityReaches(s, '2Gi');
  assert.equal(expandCalls(s).at(-1)?.requiredBytes, 2n * GiB);
});

test('node-only driver: the trivial resizer marks node expansion without calling the driver', async (t) => {
  const s = await scenario(t, { driver: { capabilities: { controllerExpand: false, nodeExpand: true } } });
  await grow(s, '2Gi');
  const pvc = await eventually('NodeResizePending', async () => {
    const p = await pvcOf(s);
    return p.status?.allocatedResourceStatuses?.['storage'] === 'NodeResizePending' ? p : undefined;
  });
  assert.ok(pvc.status?.conditions?.some((c) => c.type === 'FileSystemResizePending'));
  assert.equal((await readPv(admin, s.pvName)).spec.capacity?.['storage'], '2Gi');
  assert.equal(expandCalls(s).length, 0);
  assert.deepEqual(reasons(await eventsFor(admin, s.namespace, s.pvcName)), ['Resizing', 'FileSystemResizeRequired']);
});

test('bogus capacity reply: a zero size is a failed expansion with a warning, never written to the PV', async (t) => {
  const s = await scenario(t);
  s.driver.script('ControllerExpandVolume', { response: { capacity_bytes: '0', node_expansion_required: false } });
  await grow(s, '2Gi');
  const warning = await eventually('warning', async () => (await eventsFor(admin, s.namespace, s.pvcName)).find((e) => e.reason === 'VolumeResizeFailed'));
  assert.match(warning.message, /CSI driver reported capacity 0 bytes, less than the requested 2147483648 bytes/);
  // The next attempt gets a proper answer.
  const done = await capacityReaches(s, '2Gi');
  assert.equal((await readPv(admin, s.pvName)).spec.capacity?.['storage'], '2Gi');
  assert.ok(expandCalls(s).length >= 2);
  assert.equal(
    (done.status?.conditions ?? []).some((c) => c.type === 'ControllerResizeError'),
    false,
  );
});

/** A bound claim annotated for `driverName` (a migration target) whose PV has `inTreeSource` and no spec.csi. */
async function migratedClaim(driverName: string, inTreeSource: Record<string, unknown>): Promise<{ namespace: string; pvcName: string; pvName: string }> {
  const namespace = await createNamespace(admin, 'rz-migrated');
  const storageClassName = uniqueName('rz-sc');
  await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: 'kubernetes.io/aws-ebs' });
  const pvcName = uniqueName('rz-pvc');
  const pvName = uniqueName('rz-pv');
  const pvc = await admin.core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: asApiBody(
      claim({
        name: pvcName,
        namespace,
        annotations: { 'volume.kubernetes.io/storage-resizer': driverName },
        phase: null,
        accessModes: ['ReadWriteOnce'],
        request: '1Gi',
        storageClassName,
        volumeName: pvName,
      }),
    ),
  });
  await admin.core.createPersistentVolume({
    body: asApiBody(
      volume({
        name: pvName,
        capacity: '1Gi',
        accessModes: ['ReadWriteOnce'],
        storageClassName,
        inTreeSource,
        claim: { namespace, name: pvcName, uid: pvc.metadata!.uid! },
      }),
    ),
  });
  await admin.core.patchPersistentVolumeStatus({ name: pvName, body: { status: { phase: 'Bound' } } }, patchAs());
  await admin.core.patchNamespacedPersistentVolumeClaimStatus(
    { namespace, name: pvcName, body: { status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } } } },
    patchAs(),
  );
  return { namespace, pvcName, pvName };
}

test('an in-tree volume migrated to the driver is expanded through its translated CSI handle', async (t) => {
  const driver = await FaultDriver.start({ name: 'ebs.csi.aws.com' });
  t.after(() => driver.stop());
  driver.createVolume('vol-0abc', GiB);
  const { namespace, pvcName, pvName } = await migratedClaim(driver.name, { awsElasticBlockStore: { volumeID: 'aws://us-east-1a/vol-0abc', fsType: 'xfs' } });
  const resizer = await startResizer({ kubeconfig: cluster.resizerKubeconfigPath, csiAddress: driver.address });
  t.after(() => resizer.stop());

  await requestPvcSize(admin, namespace, pvcName, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await eventually('capacity 2Gi', async () => (await readPvc(admin, namespace, pvcName)).status?.capacity?.['storage'] === '2Gi');
  const [call] = driver.callsOf('ControllerExpandVolume');
  assert.equal(call?.request['volume_id'], 'vol-0abc');
  assert.deepEqual((call?.request['volume_capability'] as { mount?: { fs_type?: string } }).mount?.fs_type, 'xfs');
  assert.equal((await readPv(admin, pvName)).spec.capacity?.['storage'], '2Gi');
});

test("a PV with no CSI translation (hostPath) annotated for the driver: upstream's VolumeResizeFailed text, no driver call", async (t) => {
  const driver = await FaultDriver.start({ name: 'ebs.csi.aws.com' });
  t.after(() => driver.stop());
  const { namespace, pvcName, pvName } = await migratedClaim(driver.name, { hostPath: { path: '/var/data' } });
  const resizer = await startResizer({ kubeconfig: cluster.resizerKubeconfigPath, csiAddress: driver.address });
  t.after(() => resizer.stop());

  await requestPvcSize(admin, namespace, pvcName, '2Gi', { retryUntilAdmittedMs: 10_000 });
  const warning = await eventually('VolumeResizeFailed', async () =>
    (await eventsFor(admin, namespace, pvcName)).find((e) => e.reason === 'VolumeResizeFailed'),
  );
  assert.equal(
    warning.message,
    `resize volume "${pvName}" by resizer "${driver.name}" failed: failed to translate persistent volume: could not find in-tree plugin translation logic for "${pvName}"`,
  );
  assert.equal(driver.callsOf('ControllerExpandVolume').length, 0);
  assert.equal((await readPv(admin, pvName)).spec.capacity?.['storage'], '1Gi');
});

test('graceful stop: no new work is taken, the expansion in flight finishes and is recorded', async (t) => {
  const s = await scenario(t);
  s.driver.script('ControllerExpandVolume', { delayMs: 1500 });
  await grow(s, '2Gi');
  await eventually('call in flight', async () => expandCalls(s).length === 1);
  await s.resizer.stop({ graceful: true });
  const pvc = await pvcOf(s);
  assert.equal(pvc.status?.capacity?.['storage'], '2Gi', 'the in-flight expansion completed before the stop returned');
  assert.equal((await readPv(admin, s.pvName)).spec.capacity?.['storage'], '2Gi');
});
