// Leader election with real replicas of the command on the real cluster (§5.1): exactly one
// replica acts; SIGKILL of the leader hands over once the lease expires; SIGTERM releases the
// Lease so the next replica takes over at once; and across the hand-overs no volume is expanded
// twice (every ControllerExpandVolume a replica sends is in its -v=5 log).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freePort } from '../cluster/cluster.js';
import { expandableClaims, requestPvcSize, type Provisioned } from '../cluster/fixtures.js';
import { adminClients, useCluster } from '../cluster/test-cluster.js';
import { CliProcess } from './cli-harness.js';
import { eventually } from '../support/eventually.js';

const LEASE_MS = 6_000;
const RENEW_MS = 4_000;
const RETRY_MS = 1_000;

const until = <T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000) => eventually(what, fn, timeoutMs);

test('two replicas: one leader, hand-over on SIGKILL and SIGTERM, no double expansion', { timeout: 400_000 }, async (t) => {
  const cluster = await useCluster();
  const admin = adminClients(cluster);
  const driver = cluster.driverName;
  const leaseName = `external-resizer-${driver.replace(/[^a-zA-Z0-9-]/g, '-')}`;
  const { namespace, provision } = await expandableClaims(admin, cluster);

  const replicas: CliProcess[] = [];
  const ports = new Map<CliProcess, number>();
  const start = async (identity: string) => {
    const port = await freePort();
    const proc = new CliProcess(
      [
        `--kubeconfig=${cluster.resizerKubeconfigPath}`,
        `--csi-address=${cluster.csiAddress}`,
        '--v=5',
        '--leader-election',
        '--leader-election-namespace=default',
        `--leader-election-lease-duration=${LEASE_MS}ms`,
        `--leader-election-renew-deadline=${RENEW_MS}ms`,
        `--leader-election-retry-period=${RETRY_MS}ms`,
        '--leader-election-labels=app:csi-resizer-test',
        `--http-endpoint=127.0.0.1:${port}`,
      ],
      { env: { CSI_RESIZER_LEADER_ELECTION_IDENTITY: identity } },
    );
    t.after(() => proc.destroy());
    replicas.push(proc);
    ports.set(proc, port);
    return proc;
  };
  const leading = (p: CliProcess) => /Became leader, starting/i.test(p.stderr) && !p.hasExited;
  const lease = () => admin.coordination.readNamespacedLease({ namespace: 'default', name: leaseName });
  const volumeField = (p: Provisioned) => `"volume_id":${JSON.stringify(p.volumeId)}`;
  const expandCalls = (p: Provisioned) =>
    replicas.reduce(
      (n, r) =>
        n +
        r.stderr.split('\n').filter((l) => l.includes('"GRPC call"') && l.includes('/csi.v1.Controller/ControllerExpandVolume') && l.includes(volumeField(p)))
          .length,
      0,
    );
  const mentions = (r: CliProcess, p: Provisioned) => r.stderr.includes(volumeField(p));
  const resizeAndWait = async (p: Provisioned, size: string) => {
    await requestPvcSize(admin, namespace, p.pvc.metadata!.name!, size, { retryUntilAdmittedMs: 10_000 });
    await until(`${p.pvc.metadata!.name} at ${size}`, async () => {
      const pvc = await admin.core.readNamespacedPersistentVolumeClaim({ namespace, name: p.pvc.metadata!.name! });
      return pvc.status?.capacity?.['storage'] === size ? true : undefined;
    });
  };

  const a = await start('replica-a');
  const b = await start('replica-b');
  const [v1, v2, v3] = await Promise.all([provision(), provision(), provision()]);

  // Exactly one leads; the Lease names it and carries the labels.
  const first = await until('a leader', () => replicas.find(leading), 120_000);
  const standby = first === a ? b : a;
  const firstId = first === a ? 'replica-a' : 'replica-b';
  const held = await lease();
  assert.equal(held.spec?.holderIdentity, firstId);
  assert.equal(held.metadata?.labels?.['app'], 'csi-resizer-test');
  // Logged once its HTTP server is up.
  await standby.waitForLog(/Attempting to acquire leader lease/, 60_000);
  assert.equal(leading(standby), false);
  // Both serve /metrics and a healthy probe; only the leader reports leadership.
  for (const r of [first, standby]) {
    const health = await fetch(`http://127.0.0.1:${ports.get(r)}/healthz/leader-election`);
    assert.equal(health.status, 200);
    assert.equal(await health.text(), 'ok');
  }
  const masterStatus = async (r: CliProcess) => {
    const text = await (await fetch(`http://127.0.0.1:${ports.get(r)}/metrics`)).text();
    // The Go sidecar's label value: csi-lib-utils sets no LeaderElectionConfig.Name, so name="".
    return /^leader_election_master_status\{name=""\} (\d)$/m.exec(text)?.[1];
  };
  assert.equal(await masterStatus(first), '1');
  assert.equal(await masterStatus(standby), '0');

  await resizeAndWait(v1, '2Gi');
  assert.equal(expandCalls(v1), 1);
  assert.ok(mentions(first, v1), 'the leader expanded it');
  assert.ok(!mentions(standby, v1), 'the standby did nothing');

  // SIGKILL: nothing is released; the standby takes over once the lease has expired.
  const killedAt = Date.now();
  first.kill('SIGKILL');
  await first.exited;
  await until('the standby to lead', () => (leading(standby) ? true : undefined), 60_000);
  const killHandoverMs = Date.now() - killedAt;
  // Expiry is judged from the standby's last observation of a renewal (≤ one retry period before
  // the kill), plus up to 2.2 retry periods of jittered polling.
  assert.ok(killHandoverMs <= LEASE_MS + 3.2 * RETRY_MS + 2_000, `hand-over took ${killHandoverMs}ms`);
  assert.ok(killHandoverMs >= LEASE_MS - RETRY_MS - 500, `hand-over came before the lease expired (${killHandoverMs}ms)`);

  await resizeAndWait(v2, '2Gi');
  assert.equal(expandCalls(v1), 1, 'the new leader did not expand the finished volume again');
  assert.equal(expandCalls(v2), 1);

  // SIGTERM: the leader drains, releases the Lease and exits 0; a waiting replica takes over at
  // once rather than after the lease duration.
  const c = await start('replica-c');
  await c.waitForLog(/Attempting to acquire leader lease/, 90_000);
  const termAt = Date.now();
  standby.kill('SIGTERM');
  assert.deepEqual(await standby.exited, { code: 0, signal: null });
  assert.doesNotMatch(standby.stderr, /Failed to release lease/);
  await until('replica-c to lead', () => (leading(c) ? true : undefined), 30_000);
  const termHandoverMs = Date.now() - termAt;
  assert.ok(termHandoverMs < LEASE_MS, `SIGTERM hand-over took ${termHandoverMs}ms, not faster than expiry`);
  assert.equal((await lease()).spec?.holderIdentity, 'replica-c');
  t.diagnostic(`hand-over after SIGKILL ${killHandoverMs} ms, after SIGTERM ${termHandoverMs} ms (lease ${LEASE_MS} ms)`);

  await resizeAndWait(v3, '3Gi');
  for (const v of [v1, v2, v3]) assert.equal(expandCalls(v), 1, `${v.volumeId} expanded exactly once`);
});

// client-go uses the renewal fast path only while the observed holder is itself; so must we.
test(
  'a leader that loses its Lease to another holder logs "Stopped leading" and exits 1',
  {
    timeout: 200_000,
  },
  async (t) => {
    const cluster = await useCluster();
    const admin = adminClients(cluster);
    const namespace = 'default';
    const name = `external-resizer-${cluster.driverName.replace(/[^a-zA-Z0-9-]/g, '-')}`;
    const proc = new CliProcess(
      [
        `--kubeconfig=${cluster.resizerKubeconfigPath}`,
        `--csi-address=${cluster.csiAddress}`,
        '--v=2',
        '--leader-election',
        `--leader-election-namespace=${namespace}`,
        `--leader-election-lease-duration=${LEASE_MS}ms`,
        `--leader-election-renew-deadline=${RENEW_MS}ms`,
        `--leader-election-retry-period=${RETRY_MS}ms`,
      ],
      { env: { CSI_RESIZER_LEADER_ELECTION_IDENTITY: 'replica-lost' } },
    );
    t.after(() => proc.destroy());
    // Whatever holds the Lease at the end (the intruder below) must not block later tests.
    t.after(() => admin.coordination.deleteNamespacedLease({ namespace, name }).catch(() => undefined));
    await proc.waitForLog(/Became leader, starting/i, 120_000);

    // Someone else takes the Lease for a long time: renewals fail until the renew deadline passes.
    // Read-modify-write races the leader's own renewals: retry on 409 Conflict.
    for (let attempt = 0; ; attempt++) {
      const current = await admin.coordination.readNamespacedLease({ namespace, name });
      try {
        await admin.coordination.replaceNamespacedLease({
          namespace,
          name,
          body: { ...current, spec: { ...current.spec, holderIdentity: 'intruder', leaseDurationSeconds: 60 } },
        });
        break;
      } catch (err) {
        if ((err as { code?: number }).code !== 409 || attempt >= 20) throw err;
      }
    }
    const takenAt = Date.now();
    const boundMs = RENEW_MS + 3 * RETRY_MS + 15_000;
    const exit = await Promise.race([proc.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), boundMs))]);
    assert.ok(
      exit,
      `still running ${boundMs} ms after losing the Lease; holder now ${(await admin.coordination.readNamespacedLease({ namespace, name })).spec?.holderIdentity}`,
    );
    assert.deepEqual(exit, { code: 1, signal: null });
    assert.match(proc.stderr, /"Stopped leading"/);
    assert.ok(Date.now() - takenAt < RENEW_MS + 3 * RETRY_MS + 5_000, 'gave up within the renew deadline');
  },
);
