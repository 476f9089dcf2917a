// SIGTERM and SIGINT with the resizer as PID 1, the way it runs as a container's entrypoint: the
// real command in a new PID namespace (`unshare --pid --fork`, needs root), leading a Lease on the
// real control plane for a scripted CSI driver. PID 1 gets no default signal action from the
// kernel, so a process that installs no handler ignores SIGTERM; each case checks the exit code
// docs/command-line.md promises and how long it took.
//   ReleaseLeaderElectionOnExit on (our default): drain, release the Lease, exit 0; a second
//     signal while draining exits 1 at once.
//   ReleaseLeaderElectionOnExit=false: end at once as the Go sidecar's runtime does: as PID 1,
//     exit 2; the Lease is left to expire.
// /metrics is scraped along the way: leader_election_master_status carries name="", the value the
// Go sidecar reports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freePort } from '../cluster/cluster.js';
import { createNamespace, createStorageClass, provisionVolume, requestPvcSize, uniqueName } from '../cluster/fixtures.js';
import { adminClients, useCluster, type ClusterHandle } from '../cluster/test-cluster.js';
import type { KubeClients } from '../cluster/kube.js';
import { FaultDriver, type ScriptedReply } from '../fakes/fault-driver.js';
import { CliProcess, type Exit } from './cli-harness.js';
import { eventually } from '../support/eventually.js';

const GiB = 1n << 30n;
const LEASE_NAMESPACE = 'default';
/**
 * How long the process may take to exit once nothing is in flight: well inside Kubernetes' 30 s
 * grace period, with room for a loaded machine (a drained exit with the Lease release takes
 * around a second).
 */
const PROMPT_EXIT_MS = 5_000;

const until = <T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 90_000) => eventually(what, fn, timeoutMs);

/** Resolves with the exit, or undefined once `ms` has passed. */
function exitWithin(proc: CliProcess, ms: number): Promise<Exit | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    proc.exited,
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

interface Leader {
  proc: CliProcess;
  driver: FaultDriver;
  leaseName: string;
  namespace: string;
  pvcName: string;
  scrape(): Promise<string>;
}

/** A bound 1Gi PVC of a fresh scripted driver, and the resizer as PID 1, leading its Lease. */
async function startLeader(t: { after(fn: () => unknown): void }, cluster: ClusterHandle, admin: KubeClients, extraArgs: string[]): Promise<Leader> {
  const driver = await FaultDriver.start({ name: uniqueName('signal.csi') });
  t.after(() => driver.stop());
  const namespace = await createNamespace(admin, 'rz-signal');
  const storageClassName = uniqueName('rz-sc');
  await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: driver.name });
  const volumeId = uniqueName('vol');
  driver.createVolume(volumeId, GiB);
  const volume = await provisionVolume(admin, driver.address, {
    namespace,
    size: '1Gi',
    storageClassName,
    driverName: driver.name,
    existingVolumeId: volumeId,
  });
  const leaseName = `external-resizer-${driver.name.replace(/[^a-zA-Z0-9-]/g, '-')}`;
  t.after(() => admin.coordination.deleteNamespacedLease({ namespace: LEASE_NAMESPACE, name: leaseName }).catch(() => undefined));

  const port = await freePort();
  const proc = new CliProcess(
    [
      `--kubeconfig=${cluster.resizerKubeconfigPath}`,
      `--csi-address=${driver.address}`,
      '--v=2',
      '--leader-election',
      `--leader-election-namespace=${LEASE_NAMESPACE}`,
      `--http-endpoint=127.0.0.1:${port}`,
      ...extraArgs,
    ],
    { pidNamespace: true, env: { CSI_RESIZER_LEADER_ELECTION_IDENTITY: uniqueName('pid1') } },
  );
  t.after(() => proc.destroy());
  const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  // Leading, as the Go sidecar's metric shows it: name="" (csi-lib-utils sets no elector name).
  await until('the resizer to lead', async () => {
    if (proc.hasExited) throw new Error(`exited: ${JSON.stringify(await proc.exited)}\n${proc.tail()}`);
    const text = await scrape().catch(() => '');
    return /^leader_election_master_status\{name=""\} 1$/m.test(text) ? true : undefined;
  });
  return { proc, driver, leaseName, namespace, pvcName: volume.pvc.metadata!.name!, scrape };
}

/** The Lease's holder; undefined once released (client-go's release writes an empty holder). */
async function leaseHolder(admin: KubeClients, name: string): Promise<string | undefined> {
  const lease = await admin.coordination.readNamespacedLease({ namespace: LEASE_NAMESPACE, name });
  const holder = lease.spec?.holderIdentity;
  return holder === undefined || holder === '' ? undefined : holder;
}

/** Grows the PVC and waits until the driver has the expansion call in hand (scripted reply). */
async function expansionInFlight(admin: KubeClients, leader: Leader, reply: ScriptedReply): Promise<void> {
  leader.driver.script('ControllerExpandVolume', reply);
  await requestPvcSize(admin, leader.namespace, leader.pvcName, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await until('ControllerExpandVolume in flight', () => (leader.driver.callsOf('ControllerExpandVolume').length > 0 ? true : undefined));
}

test('as PID 1: SIGTERM and SIGINT end the resizer as docs/command-line.md says', { timeout: 600_000 }, async (t) => {
  const cluster = await useCluster();
  const admin = adminClients(cluster);
  const timings: string[] = [];

  await t.test('default (ReleaseLeaderElectionOnExit on), idle: SIGTERM releases the Lease and exits 0', async (t) => {
    const leader = await startLeader(t, cluster, admin, []);
    assert.ok(await leaseHolder(admin, leader.leaseName), 'the Lease is held');
    const sentAt = Date.now();
    await leader.proc.signalMain('SIGTERM');
    const exit = await exitWithin(leader.proc, PROMPT_EXIT_MS);
    assert.deepEqual(exit, { code: 0, signal: null }, leader.proc.tail());
    timings.push(`on, idle, SIGTERM: exit 0 after ${Date.now() - sentAt} ms`);
    assert.equal(await leaseHolder(admin, leader.leaseName), undefined, 'the Lease was released');
  });

  await t.test('default, SIGINT with an expansion in flight: the call finishes, then exit 0', async (t) => {
    const driverDelayMs = 1_500;
    const leader = await startLeader(t, cluster, admin, []);
    await expansionInFlight(admin, leader, { delayMs: driverDelayMs });
    const sentAt = Date.now();
    await leader.proc.signalMain('SIGINT');
    const exit = await exitWithin(leader.proc, driverDelayMs + PROMPT_EXIT_MS);
    assert.deepEqual(exit, { code: 0, signal: null }, leader.proc.tail());
    timings.push(`on, expansion in flight (${driverDelayMs} ms), SIGINT: exit 0 after ${Date.now() - sentAt} ms`);
    // The drained reconcile completed its work: the PV carries the new size.
    const pvName = (await admin.core.readNamespacedPersistentVolumeClaim({ namespace: leader.namespace, name: leader.pvcName })).spec?.volumeName;
    assert.equal((await admin.core.readPersistentVolume({ name: pvName! })).spec?.capacity?.['storage'], '2Gi');
    assert.equal(await leaseHolder(admin, leader.leaseName), undefined, 'the Lease was released');
  });

  await t.test('default, a second signal while draining exits 1 at once', async (t) => {
    const leader = await startLeader(t, cluster, admin, ['--timeout=60s']);
    await expansionInFlight(admin, leader, { hang: true });
    const logFrom = leader.proc.stderr.length;
    await leader.proc.signalMain('SIGTERM');
    // Draining: the hung call holds the process (for up to --timeout) once the handler has run.
    await until('the first signal to be handled', () => (/SIGTERM/.test(leader.proc.stderr.slice(logFrom)) ? true : undefined), 10_000);
    assert.equal(await exitWithin(leader.proc, 500), undefined, 'still draining');
    const sentAt = Date.now();
    await leader.proc.signalMain('SIGINT');
    const exit = await exitWithin(leader.proc, PROMPT_EXIT_MS);
    assert.deepEqual(exit, { code: 1, signal: null }, leader.proc.tail());
    timings.push(`on, draining, second signal: exit 1 after ${Date.now() - sentAt} ms`);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    await t.test(`ReleaseLeaderElectionOnExit=false: ${signal} exits 2 at once (Go's runtime as PID 1), the Lease is not released`, async (t) => {
      const leader = await startLeader(t, cluster, admin, ['--feature-gates=ReleaseLeaderElectionOnExit=false']);
      const holder = await leaseHolder(admin, leader.leaseName);
      assert.ok(holder);
      const sentAt = Date.now();
      await leader.proc.signalMain(signal);
      const exit = await exitWithin(leader.proc, PROMPT_EXIT_MS);
      assert.deepEqual(exit, { code: 2, signal: null }, `${leader.proc.tail()}`);
      timings.push(`off, ${signal}: exit 2 after ${Date.now() - sentAt} ms`);
      assert.equal(await leaseHolder(admin, leader.leaseName), holder, 'the Lease is left to expire');
    });
  }

  t.diagnostic(timings.join('; '));
});
