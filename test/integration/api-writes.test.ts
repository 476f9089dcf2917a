// What our API writes leave on the objects, read back from the real API server: the order of a
// PVC's conditions after each kind of driver answer (upstream's two-way patches carry
// `$setElementOrder/conditions`, so an added condition is appended), the status values, and the
// user-visible texts of conditions and events, as upstream v2.2.1 words them.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig } from '../cluster/kube.js';
import { createNamespace, deletePvc, requestPvcSize } from '../cluster/fixtures.js';
import { eventually } from '../support/in-process-resizer.js';
import { faultScenario, GiB, type FaultScenario, type FaultScenarioOptions, type TestContextLike } from '../support/fault-scenario.js';
import { eventsFor, readPv, readPvc } from '../support/api-reads.js';
import { createVac, deleteVac, setClass } from './modify-fixtures.js';
import { HttpKubeClient } from '../../src/kube/wire/http-client.js';
import { KubeApiError } from '../../src/kube/api/errors.js';
import { loadKubeConfig } from '../../src/kube/wire/kubeconfig.js';
import type { Pvc } from '../../src/model/objects.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);
/** Our own client as the administrator, for raw strategic merge patches (a kubelet's status write). */
const raw = new HttpKubeClient({ kubeConfig: await loadKubeConfig({ kubeconfigPath: cluster.adminKubeconfigPath }), qps: 50, burst: 100 });
after(() => raw.close());

const scenario = (t: TestContextLike, opts: FaultScenarioOptions = {}) => faultScenario(t, cluster, admin, opts);
const grow = (s: FaultScenario, size: string) => requestPvcSize(admin, s.namespace, s.pvcName, size, { retryUntilAdmittedMs: 10_000 });
const pvcOf = (s: FaultScenario) => readPvc(admin, s.namespace, s.pvcName);
const types = (pvc: Pvc) => (pvc.status?.conditions ?? []).map((c) => c.type);
const until = (s: FaultScenario, what: string, ok: (pvc: Pvc) => boolean) =>
  eventually(what, async () => {
    const p = await pvcOf(s);
    return ok(p) ? p : undefined;
  });

/** Adds a condition nobody of ours owns, as another controller would, before the resize starts. */
async function addForeignCondition(s: FaultScenario): Promise<void> {
  await raw.patchPvcStatus(s.namespace, s.pvcName, { status: { conditions: [{ type: 'ExampleOther', status: 'True' }] } }, {}, AbortSignal.timeout(10_000));
}

const failures: { code: GrpcStatus; name: string; status: string; foreign?: boolean }[] = [
  { code: GrpcStatus.OUT_OF_RANGE, name: 'OutOfRange', status: 'ControllerResizeInfeasible' },
  { code: GrpcStatus.INVALID_ARGUMENT, name: 'InvalidArgument', status: 'ControllerResizeInfeasible', foreign: true },
  { code: GrpcStatus.INTERNAL, name: 'Internal', status: 'ControllerResizeInProgress' },
  { code: GrpcStatus.PERMISSION_DENIED, name: 'PermissionDenied', status: 'ControllerResizeInProgress' },
  { code: GrpcStatus.FAILED_PRECONDITION, name: 'FailedPrecondition', status: 'ControllerResizeInProgress', foreign: true },
];

for (const f of failures) {
  test(`${f.name}: conditions end [${f.foreign ? 'ExampleOther, ' : ''}Resizing, ControllerResizeError], status ${f.status}, upstream's texts`, async (t) => {
    const details = `the backend refused (${f.name})`;
    const s = await scenario(t, { driver: { expandLimit: { bytes: 5n * GiB, code: f.code, details } } });
    if (f.foreign) await addForeignCondition(s);
    await grow(s, '10Gi');
    const failed = await until(s, 'ControllerResizeError', (p) => types(p).includes('ControllerResizeError'));
    assert.deepEqual(types(failed), [...(f.foreign ? ['ExampleOther'] : []), 'Resizing', 'ControllerResizeError']);
    assert.equal(failed.status?.allocatedResourceStatuses?.['storage'], f.status);
    assert.deepEqual(failed.status?.allocatedResources, { storage: '10Gi' });
    const rpc = `rpc error: code = ${f.name} desc = ${details}`;
    assert.equal(failed.status?.conditions?.find((c) => c.type === 'ControllerResizeError')?.message, `failed to expand pvc with ${rpc}`);
    const warning = await eventually('VolumeResizeFailed', async () =>
      (await eventsFor(admin, s.namespace, s.pvcName)).find((e) => e.reason === 'VolumeResizeFailed'),
    );
    assert.equal(warning.type, 'Warning');
    assert.equal(warning.message, `resize volume "${s.pvName}" by resizer "${s.driver.name}" failed: ${rpc}`);

    // Lowering the request recovers: capacity written, every resize condition and the status gone.
    await grow(s, '3Gi');
    const done = await until(s, 'capacity 3Gi', (p) => p.status?.capacity?.['storage'] === '3Gi');
    assert.deepEqual(types(done), f.foreign ? ['ExampleOther'] : []);
    assert.equal(done.status?.allocatedResourceStatuses, undefined);
    assert.equal(done.metadata.annotations?.['volume.kubernetes.io/node-expansion-not-required'], 'true');
  });
}

test('node expansion required: conditions end [ExampleOther, Resizing, FileSystemResizePending], NodeResizePending', async (t) => {
  const s = await scenario(t, { driver: { nodeExpansionRequired: true } });
  await addForeignCondition(s);
  await grow(s, '2Gi');
  const pending = await until(s, 'NodeResizePending', (p) => p.status?.allocatedResourceStatuses?.['storage'] === 'NodeResizePending');
  assert.deepEqual(types(pending), ['ExampleOther', 'Resizing', 'FileSystemResizePending']);
  assert.equal(pending.status?.conditions?.[2]?.message, 'Waiting for user to (re-)start a pod to finish file system resize of volume on node.');
  assert.equal(pending.status?.capacity?.['storage'], '1Gi');
  const pv = await readPv(admin, s.pvName);
  assert.equal(pv.spec.capacity?.['storage'], '2Gi');
  const events = (await eventsFor(admin, s.namespace, s.pvcName)).map((e) => `${e.type} ${e.reason}: ${e.message}`);
  assert.deepEqual(events, [
    `Normal Resizing: External resizer is resizing volume ${s.pvName}`,
    'Normal FileSystemResizeRequired: Require file system resize of volume on node',
  ]);
});

test('node-only driver (trivial resizer): conditions end [Resizing, FileSystemResizePending], no driver call', async (t) => {
  const s = await scenario(t, { driver: { capabilities: { controllerExpand: false, nodeExpand: true } } });
  await grow(s, '2Gi');
  const pending = await until(s, 'NodeResizePending', (p) => p.status?.allocatedResourceStatuses?.['storage'] === 'NodeResizePending');
  assert.deepEqual(types(pending), ['Resizing', 'FileSystemResizePending']);
  assert.equal((await readPv(admin, s.pvName)).spec.capacity?.['storage'], '2Gi');
  assert.equal(s.driver.callsOf('ControllerExpandVolume').length, 0);
});

/** kubelet's write when node expansion is infeasible: NodeResizeError appended (its own two-way patch). */
async function kubeletReportsInfeasible(s: FaultScenario): Promise<void> {
  await raw.patchPvcStatus(
    s.namespace,
    s.pvcName,
    {
      status: {
        '$setElementOrder/conditions': [{ type: 'Resizing' }, { type: 'FileSystemResizePending' }, { type: 'NodeResizeError' }],
        allocatedResourceStatuses: { storage: 'NodeResizeInfeasible' },
        conditions: [
          {
            type: 'NodeResizeError',
            status: 'True',
            lastProbeTime: null,
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
            message: 'failed to expand pvc with resize2fs failed',
          },
        ],
      },
    },
    {},
    AbortSignal.timeout(10_000),
  );
}

test("after kubelet reports NodeResizeInfeasible: the controller retries, conditions keep kubelet's order", async (t) => {
  const s = await scenario(t, { driver: { nodeExpansionRequired: true } });
  await grow(s, '2Gi');
  await until(s, 'NodeResizePending', (p) => p.status?.allocatedResourceStatuses?.['storage'] === 'NodeResizePending');
  await kubeletReportsInfeasible(s);
  const retried = await until(
    s,
    'NodeResizePending again',
    (p) => p.status?.allocatedResourceStatuses?.['storage'] === 'NodeResizePending' && s.driver.callsOf('ControllerExpandVolume').length >= 2,
  );
  assert.deepEqual(types(retried), ['Resizing', 'FileSystemResizePending', 'NodeResizeError']);
  assert.deepEqual(retried.status?.allocatedResources, { storage: '2Gi' });
});

test('node-only driver, NodeResizeInfeasible, request lowered: conditions end [Resizing, FileSystemResizePending]', async (t) => {
  const s = await scenario(t, { driver: { capabilities: { controllerExpand: false, nodeExpand: true } } });
  await grow(s, '3Gi');
  await until(s, 'NodeResizePending', (p) => p.status?.allocatedResourceStatuses?.['storage'] === 'NodeResizePending');
  // While the resizer is down, kubelet gives up on 3Gi and the user asks for less.
  await s.resizer.stop();
  await kubeletReportsInfeasible(s);
  await grow(s, '2Gi');
  await s.restartResizer();
  const recovered = await until(
    s,
    'allocated 2Gi, NodeResizePending',
    (p) => p.status?.allocatedResources?.['storage'] === '2Gi' && p.status?.allocatedResourceStatuses?.['storage'] === 'NodeResizePending',
  );
  // Resizing rewrote the allocation (dropping the other resize conditions), then FileSystemResizePending was added after it.
  assert.deepEqual(types(recovered), ['Resizing', 'FileSystemResizePending']);
  assert.equal((await readPv(admin, s.pvName)).spec.capacity?.['storage'], '2Gi');
});

test("PVC deleted while the driver works: upstream's warning, word for word", async (t) => {
  const s = await scenario(t, { driver: { nodeExpansionRequired: true } });
  s.driver.script('ControllerExpandVolume', { delayMs: 1500 });
  await grow(s, '2Gi');
  await eventually('call in flight', async () => s.driver.callsOf('ControllerExpandVolume').length === 1);
  await deletePvc(admin, s.namespace, s.pvcName);
  const warning = await eventually('VolumeResizeFailed', async () =>
    (await eventsFor(admin, s.namespace, s.pvcName)).find((e) => e.reason === 'VolumeResizeFailed'),
  );
  const key = `${s.namespace}/${s.pvcName}`;
  assert.equal(
    warning.message,
    `mark PVC "${key}" as node expansion required failed: can't patch status of  PVC ${key} with persistentvolumeclaims "${s.pvcName}" not found`,
  );
});

test('access modes that map to no CSI mode: upstream\'s "failed to get capabilities" text, no driver call', async (t) => {
  const s = await scenario(t, { volume: { accessModes: ['ReadOnlyMany', 'ReadWriteOnce'] } });
  await grow(s, '2Gi');
  const warning = await eventually('VolumeResizeFailed', async () =>
    (await eventsFor(admin, s.namespace, s.pvcName)).find((e) => e.reason === 'VolumeResizeFailed'),
  );
  assert.equal(
    warning.message,
    `resize volume "${s.pvName}" by resizer "${s.driver.name}" failed: failed to get capabilities of volume ${s.pvName} ` +
      'with CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume',
  );
  assert.equal(s.driver.callsOf('ControllerExpandVolume').length, 0);
  // Not a gRPC error, so not final: no error condition, the status stays in progress.
  const pvc = await pvcOf(s);
  assert.deepEqual(types(pvc), ['Resizing']);
  assert.equal(pvc.status?.allocatedResourceStatuses?.['storage'], 'ControllerResizeInProgress');
});

test('modify after a resize: its conditions are appended after the resize ones; success removes only its own', async (t) => {
  const s = await scenario(t, { driver: { nodeExpansionRequired: true } });
  await grow(s, '2Gi');
  await until(s, 'NodeResizePending', (p) => p.status?.allocatedResourceStatuses?.['storage'] === 'NodeResizePending');
  const bad = await createVac(admin, s.driver.name, { iops: '999999' });
  t.after(() => deleteVac(admin, bad));
  const good = await createVac(admin, s.driver.name, { iops: '3000' });
  t.after(() => deleteVac(admin, good));
  s.driver.script('ControllerModifyVolume', { code: GrpcStatus.INVALID_ARGUMENT, details: 'iops too high' });
  await setClass(admin, s.namespace, s.pvcName, bad);
  const infeasible = await until(s, 'Infeasible', (p) => p.status?.modifyVolumeStatus?.status === 'Infeasible');
  assert.deepEqual(types(infeasible), ['Resizing', 'FileSystemResizePending', 'ModifyingVolume', 'ModifyVolumeError']);
  const events = (await eventsFor(admin, s.namespace, s.pvcName)).filter((e) => e.reason.startsWith('VolumeModify'));
  assert.deepEqual(
    events.map((e) => `${e.type} ${e.reason}: ${e.message}`),
    [
      `Normal VolumeModify: external resizer is modifying volume ${s.pvcName} with vac ${bad}`,
      'Warning VolumeModifyFailed: rpc error: code = InvalidArgument desc = iops too high',
    ],
  );

  await setClass(admin, s.namespace, s.pvcName, good);
  const done = await until(s, `current class ${good}`, (p) => p.status?.currentVolumeAttributesClassName === good);
  assert.deepEqual(types(done), ['Resizing', 'FileSystemResizePending']);
  assert.equal(done.status?.modifyVolumeStatus, undefined);
  assert.equal((await readPv(admin, s.pvName)).spec.volumeAttributesClassName, good);
});

test("a failed API call reads as client-go's error: the server's Status message; our request only on err.request", async () => {
  const namespace = await createNamespace(admin, 'rz-errors');
  const missing = await raw.patchPvcStatus(namespace, 'nope', { status: {} }, {}, AbortSignal.timeout(10_000)).catch((e: unknown) => e);
  assert.ok(missing instanceof KubeApiError);
  assert.equal(missing.message, 'persistentvolumeclaims "nope" not found');
  assert.equal(missing.reason, 'NotFound');
  assert.equal(missing.request, `PATCH /api/v1/namespaces/${namespace}/persistentvolumeclaims/nope/status`);
  const pvMissing = await raw.patchPv('nope-pv', { spec: {} }, {}, AbortSignal.timeout(10_000)).catch((e: unknown) => e);
  assert.ok(pvMissing instanceof KubeApiError);
  assert.equal(pvMissing.message, 'persistentvolumes "nope-pv" not found');
});
