// How long a resize takes and which operations failed, as /metrics shows them (behavior.md §5.5),
// against the real API server: a claim grown through the e2e CSI mock driver (controller-only,
// and with node expansion finished by writing the status as kubelet would), and failed expansions
// through the scripted driver, counted by gRPC code and compared with the CSI operation histogram.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig, patchAs } from '../cluster/kube.js';
import { createNamespace, createStorageClass, provisionVolume, requestPvcSize, uniqueName } from '../cluster/fixtures.js';
import { startMockDriver } from '../cluster/mock-driver.js';
import { startResizer, eventually, type RunningResizer } from '../support/in-process-resizer.js';
import { faultScenario, GiB } from '../support/fault-scenario.js';
import { readPvc } from '../support/api-reads.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);

/** The samples of the scrape (`name{labels} value`), as Prometheus would read them. */
async function scrape(resizer: RunningResizer): Promise<Map<string, number>> {
  const samples = new Map<string, number>();
  for (const line of (await resizer.metrics.registry.metrics()).split('\n')) {
    const m = /^([a-z_]+(?:\{.*\})?) (\S+)$/.exec(line);
    if (m?.[1] && m[2]) samples.set(m[1], Number(m[2]));
  }
  return samples;
}

async function scenario(t: { after(fn: () => unknown): void }, driver: { address: string; name: string }) {
  const namespace = await createNamespace(admin, 'rz-opm');
  const storageClassName = uniqueName('rz-sc');
  await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: driver.name });
  const volume = await provisionVolume(admin, driver.address, { namespace, size: '1Gi', storageClassName, driverName: driver.name });
  const resizer = await startResizer({ kubeconfig: cluster.resizerKubeconfigPath, csiAddress: driver.address });
  t.after(() => resizer.stop());
  return { namespace, pvcName: volume.pvc.metadata!.name!, resizer };
}

test('controller-only resize: one sample in both duration histograms once the capacity is written, none before', async (t) => {
  const s = await scenario(t, { address: cluster.csiAddress, name: cluster.driverName });
  const before = await scrape(s.resizer);
  assert.equal(before.get('csi_resizer_resize_duration_seconds_count'), 0);
  assert.equal(before.get('csi_resizer_resize_controller_duration_seconds_count'), 0);

  const askedAt = Date.now();
  await requestPvcSize(admin, s.namespace, s.pvcName, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await eventually('PVC capacity 2Gi', async () => (await readPvc(admin, s.namespace, s.pvcName)).status?.capacity?.['storage'] === '2Gi');
  const after = await eventually('a resize observed', async () => {
    const samples = await scrape(s.resizer);
    return samples.get('csi_resizer_resize_duration_seconds_count') === 1 ? samples : undefined;
  });
  const elapsedSeconds = (Date.now() - askedAt) / 1000;
  assert.equal(after.get('csi_resizer_resize_controller_duration_seconds_count'), 1);
  const total = after.get('csi_resizer_resize_duration_seconds_sum') ?? -1;
  assert.ok(total > 0 && total <= elapsedSeconds, `duration ${total}s within the ${elapsedSeconds}s the test waited`);
  assert.equal(after.get('csi_resizer_resize_controller_duration_seconds_sum'), total, 'no node part: both end together');
  assert.equal(after.get('csi_resizer_resize_duration_seconds_bucket{le="86400"}'), 1);
  t.diagnostic(`controller-only resize: ${total}s (the test waited ${elapsedSeconds}s)`);
});

test('resize needing the node: the controller part is observed at NodeResizePending, the whole resize when kubelet writes the capacity', async (t) => {
  const driver = await startMockDriver({ name: 'opm.mock.csi.k8s.io', nodeExpansionRequired: true });
  t.after(() => driver.stop());
  const s = await scenario(t, driver);
  await requestPvcSize(admin, s.namespace, s.pvcName, '3Gi', { retryUntilAdmittedMs: 10_000 });
  await eventually('NodeResizePending', async () => {
    const p = await readPvc(admin, s.namespace, s.pvcName);
    return p.status?.allocatedResourceStatuses?.['storage'] === 'NodeResizePending';
  });
  const pending = await eventually('the controller part observed', async () => {
    const samples = await scrape(s.resizer);
    return samples.get('csi_resizer_resize_controller_duration_seconds_count') === 1 ? samples : undefined;
  });
  assert.equal(pending.get('csi_resizer_resize_duration_seconds_count'), 0, 'kubelet has not finished');
  const controllerSeconds = pending.get('csi_resizer_resize_controller_duration_seconds_sum') ?? -1;

  // Play kubelet once a measurable while has passed: the file system grew, capacity reaches the PV.
  const kubeletFrom = Date.now();
  await eventually('a second on the clock', async () => Date.now() - kubeletFrom >= 1_000);
  await admin.core.patchNamespacedPersistentVolumeClaimStatus(
    {
      namespace: s.namespace,
      name: s.pvcName,
      body: { status: { capacity: { storage: '3Gi' }, conditions: null, allocatedResourceStatuses: null } },
    },
    patchAs(),
  );
  const done = await eventually('the whole resize observed', async () => {
    const samples = await scrape(s.resizer);
    return samples.get('csi_resizer_resize_duration_seconds_count') === 1 ? samples : undefined;
  });
  const totalSeconds = done.get('csi_resizer_resize_duration_seconds_sum') ?? -1;
  assert.ok(totalSeconds >= controllerSeconds + 1, `the node part (${totalSeconds}s in all, ${controllerSeconds}s in the controller) includes kubelet's wait`);
  assert.equal(done.get('csi_resizer_resize_controller_duration_seconds_count'), 1, 'the controller part is observed once');
  t.diagnostic(`resize needing the node: controller part ${controllerSeconds}s, whole resize ${totalSeconds}s`);
});

const errorsOf = (samples: Map<string, number>, code: string) =>
  samples.get(`csi_resizer_operation_errors_total{operation_name="expand_volume",grpc_status_code="${code}"}`) ?? 0;
const driverCallsOf = (samples: Map<string, number>, driver: string, code: string) =>
  samples.get(
    `csi_sidecar_operations_seconds_count{driver_name="${driver}",method_name="/csi.v1.Controller/ControllerExpandVolume",grpc_status_code="${code}"}`,
  ) ?? 0;

test('failed expansions are counted by gRPC code, as many as the CSI histogram shows for the driver call', async (t) => {
  const s = await faultScenario(t, cluster, admin, {
    driver: { expandLimit: { bytes: 5n * GiB, code: GrpcStatus.OUT_OF_RANGE, details: 'too big' } },
  });
  await requestPvcSize(admin, s.namespace, s.pvcName, '10Gi', { retryUntilAdmittedMs: 10_000 });
  // A scrape may fall between a call's histogram sample and its count here: poll until they agree.
  const samples = await eventually('OutOfRange counted as often as the CSI histogram shows it', async () => {
    const got = await scrape(s.resizer);
    return errorsOf(got, 'OutOfRange') >= 1 && errorsOf(got, 'OutOfRange') === driverCallsOf(got, s.driver.name, 'OutOfRange') ? got : undefined;
  });
  assert.equal(errorsOf(samples, 'unknown-non-grpc'), 0);
  // Recovered by lowering the request: the resize completes and is timed.
  await requestPvcSize(admin, s.namespace, s.pvcName, '3Gi', { retryUntilAdmittedMs: 10_000 });
  await eventually('the recovered resize observed', async () => (await scrape(s.resizer)).get('csi_resizer_resize_duration_seconds_count') === 1);
});

test('an expansion that fails before the driver call is counted as unknown-non-grpc, where the CSI histogram has nothing', async (t) => {
  const namespace = await createNamespace(admin, 'rz-opm');
  const s = await faultScenario(t, cluster, admin, { namespace, volume: { controllerExpandSecretRef: { name: 'no-such-secret', namespace } } });
  await requestPvcSize(admin, s.namespace, s.pvcName, '2Gi', { retryUntilAdmittedMs: 10_000 });
  const samples = await eventually('a failure counted', async () => {
    const got = await scrape(s.resizer);
    return errorsOf(got, 'unknown-non-grpc') >= 1 ? got : undefined;
  });
  assert.equal(s.driver.callsOf('ControllerExpandVolume').length, 0);
  assert.equal(
    [...samples.keys()].some((k) => k.startsWith('csi_sidecar_operations_seconds_count') && k.includes('ControllerExpandVolume')),
    false,
  );
});
