// The resize controller, ours and upstream's side by side, against grpc-go drivers that hang in
// ControllerExpandVolume until grpc-go's server resets the call at the --timeout: both must
// report the timeout alike, DeadlineExceeded, in the VolumeResizeFailed event and the metrics,
// and leave the PVC alike (a non-final error writes no ControllerResizeError condition, so the
// condition text cannot differ). A reset reported as grpc-js reports it would show here as a
// second event text, Canceled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig } from '../cluster/kube.js';
import { loadUpstreamResizerBin } from '../cluster/components.js';
import { createNamespace, createStorageClass, provisionVolume, requestPvcSize, uniqueName } from '../cluster/fixtures.js';
import { startGoFaultDriver, type GoFaultDriver } from '../cluster/go-fault-driver.js';
import { spawnLogged, tail } from '../cluster/process.js';
import { startResizer, eventually } from '../support/in-process-resizer.js';
import { eventsFor, readPvc, type SeenEvent } from '../support/api-reads.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);

// Both resizers: a 1 s deadline per call, quick retries.
const FLAGS = ['--timeout=1s', '--retry-interval-start=200ms', '--retry-interval-max=2s', '--v=5'];
const ATTEMPTS = 5;

async function claimOn(t: { after(fn: () => unknown): void }, namespace: string) {
  const driver = await startGoFaultDriver({ name: uniqueName('gofault.csi'), expand: 'hang' });
  t.after(() => driver.stop());
  const storageClassName = uniqueName('rz-sc');
  await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: driver.name });
  const volume = await provisionVolume(admin, driver.address, { namespace, size: '1Gi', storageClassName, driverName: driver.name });
  return { driver, pvcName: volume.pvc.metadata!.name!, pvName: volume.pv.metadata!.name! };
}

type Claim = Awaited<ReturnType<typeof claimOn>>;

const failedEvents = async (namespace: string, claim: Claim): Promise<SeenEvent[]> =>
  (await eventsFor(admin, namespace, claim.pvcName)).filter((e) => e.reason === 'VolumeResizeFailed');

/** The event texts with this claim's PV and driver names taken out, so both resizers compare. */
const templates = (events: readonly SeenEvent[], claim: Claim) =>
  [...new Set(events.map((e) => e.message.replaceAll(claim.pvName, '<pv>').replaceAll(claim.driver.name, '<driver>')))].sort();

function startUpstream(t: { after(fn: () => unknown): void }, bin: string, driver: GoFaultDriver) {
  const logPath = join(mkdtempSync('/tmp/rz-up-'), 'csi-resizer-upstream.log');
  const proc = spawnLogged({
    name: 'csi-resizer-upstream',
    command: bin,
    args: [`--kubeconfig=${cluster.resizerKubeconfigPath}`, `--csi-address=${driver.address}`, ...FLAGS],
    logPath,
  });
  t.after(() => proc.stop(5000));
  return { proc, logPath };
}

test(`a grpc-go driver reset at the --timeout: ${ATTEMPTS} attempts each, events and PVC status as upstream's`, async (t) => {
  const upstreamBin = await loadUpstreamResizerBin();
  const namespace = await createNamespace(admin, 'rz-deadline');
  const oursClaim = await claimOn(t, namespace);
  const upstreamClaim = await claimOn(t, namespace);
  const ours = await startResizer({ kubeconfig: cluster.resizerKubeconfigPath, csiAddress: oursClaim.driver.address, args: FLAGS });
  t.after(() => ours.stop());
  const upstream = startUpstream(t, upstreamBin, upstreamClaim.driver);

  await requestPvcSize(admin, namespace, oursClaim.pvcName, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await requestPvcSize(admin, namespace, upstreamClaim.pvcName, '2Gi', { retryUntilAdmittedMs: 10_000 });

  // Repeated events are counted on one Event, so the counts say how many attempts failed.
  const attempts = async (claim: Claim) => (await failedEvents(namespace, claim)).reduce((n, e) => n + e.count, 0);
  await eventually(
    `${ATTEMPTS} failed attempts of each resizer`,
    async () => {
      if (upstream.proc.hasExited()) throw new Error(`upstream's resizer exited:\n${tail(upstream.logPath)}`);
      return (await attempts(oursClaim)) >= ATTEMPTS && (await attempts(upstreamClaim)) >= ATTEMPTS;
    },
    90_000,
    250,
  );
  // Stopped before reading, so no attempt lands between the reads below. Gracefully: the attempt
  // in flight runs to its deadline (a hard stop would cancel it, Canceled, as it should).
  await ours.stop({ graceful: true });
  await upstream.proc.stop(5000);

  const expected = 'resize volume "<pv>" by resizer "<driver>" failed: rpc error: code = DeadlineExceeded desc = context deadline exceeded';
  const oursTexts = templates(await failedEvents(namespace, oursClaim), oursClaim);
  const upstreamTexts = templates(await failedEvents(namespace, upstreamClaim), upstreamClaim);
  assert.deepEqual(oursTexts, [expected], 'every attempt of ours ended DeadlineExceeded, in upstream words');
  // grpc-go words a reset it reports as DeadlineExceeded differently; the code is the same.
  for (const text of upstreamTexts) assert.match(text, /^resize volume "<pv>" by resizer "<driver>" failed: rpc error: code = DeadlineExceeded desc = /);
  assert.ok(upstreamTexts.includes(expected), `upstream's events: ${JSON.stringify(upstreamTexts)}`);

  const codes = (await ours.metrics.csiOperations.get()).values
    .filter((v) => v.metricName === 'csi_sidecar_operations_seconds_count' && v.labels['method_name'] === '/csi.v1.Controller/ControllerExpandVolume')
    .map((v) => v.labels['grpc_status_code']);
  assert.deepEqual(codes, ['DeadlineExceeded']);

  // Non-final: the claim stays ControllerResizeInProgress, Resizing, with no error condition; upstream's too.
  const statusOf = async (claim: Claim) => {
    const pvc = await readPvc(admin, namespace, claim.pvcName);
    return { allocatedResourceStatuses: pvc.status?.allocatedResourceStatuses, conditions: (pvc.status?.conditions ?? []).map((c) => c.type) };
  };
  const oursStatus = await statusOf(oursClaim);
  assert.deepEqual(oursStatus, { allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' }, conditions: ['Resizing'] });
  assert.deepEqual(await statusOf(upstreamClaim), oursStatus);
});
