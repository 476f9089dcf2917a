import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeApiServer } from '../../../test/fakes/fake-apiserver.js';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { eventually } from '../../../test/support/eventually.js';
import { MemoryLeases } from '../../../test/fakes/memory-leases.js';
import { createLogger, silentLogger } from '../../observability/log/logger.js';
import { createMetrics } from '../../observability/metrics.js';
import { microTime } from '../../model/time.js';
import { HttpKubeClient } from '../wire/http-client.js';
import { LeaderElectionConfigError, LeaderElector, leaderIdentity, leaseNameForDriver, leaseNamespace, sanitizeName } from './leader-election.js';

const LEASES = 'coordination.k8s.io/v1/leases';

test('lease name sanitizing matches csi-lib-utils', () => {
  assert.equal(leaseNameForDriver('hostpath.csi.k8s.io'), 'external-resizer-hostpath-csi-k8s-io');
  assert.equal(sanitizeName('a_b/c.'), 'a-b-c-X');
  assert.equal(sanitizeName('ok-name'), 'ok-name');
});

function elector(server: FakeApiServer, identity: string, events: string[], extra: Partial<ConstructorParameters<typeof LeaderElector>[0]> = {}) {
  const client = new HttpKubeClient({ kubeConfig: server.kubeConfig(), qps: 0, burst: 1 });
  const metrics = createMetrics();
  const le = new LeaderElector({
    client,
    namespace: 'kube-system',
    name: 'external-resizer-x',
    identity,
    leaseDurationMs: 1000,
    renewDeadlineMs: 600,
    retryPeriodMs: 100,
    labels: { app: 'resizer' },
    callbacks: {
      onStartedLeading: () => {
        events.push(`${identity} started`);
      },
      onStoppedLeading: () => {
        events.push(`${identity} stopped`);
      },
      onNewLeader: (id) => {
        events.push(`${identity} sees ${id}`);
      },
    },
    log: silentLogger,
    metrics,
    ...extra,
  });
  return { le, client, metrics };
}

test('two electors: exactly one leads; releasing hands over to the other', async (t) => {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  const events: string[] = [];
  const a = elector(server, 'a', events, { releaseOnCancel: true });
  const bLines: string[] = [];
  const b = elector(server, 'b', events, { releaseOnCancel: true, log: createLogger({ verbosity: 4, format: 'text', write: (l) => bLines.push(l) }) });
  t.after(() => {
    a.client.close();
    b.client.close();
  });
  const ctlA = new AbortController();
  const runA = a.le.run(ctlA.signal);
  await eventually('a leads', () => a.le.isLeader());
  const ctlB = new AbortController();
  const runB = b.le.run(ctlB.signal);
  t.after(async () => {
    ctlA.abort();
    ctlB.abort();
    await Promise.all([runA, runB]);
  });
  await eventually('b sees a', () => events.includes('b sees a'));
  // b has tried twice since and found the lease held: it had its chances and did not take over.
  await eventually('b refused twice', () => bLines.filter((l) => l.includes('"Failed to acquire lease"')).length >= 2);
  assert.equal(b.le.isLeader(), false);

  const lease = server.get(LEASES, 'kube-system', 'external-resizer-x')!;
  assert.equal(lease.spec.holderIdentity, 'a');
  assert.equal(lease.spec.leaseDurationSeconds, 1);
  assert.match(lease.spec.renewTime, /\.\d{6}Z$/);
  assert.match(lease.spec.acquireTime, /\.\d{6}Z$/);
  assert.equal(lease.spec.leaseTransitions, 0);
  assert.equal(lease.metadata.labels.app, 'resizer');
  assert.match(await a.metrics.registry.metrics(), /leader_election_master_status\{name=""\} 1/);

  ctlA.abort();
  await runA;
  assert.ok(events.includes('a stopped'));
  assert.match(await a.metrics.registry.metrics(), /leader_election_master_status\{name=""\} 0/);
  // Released: b takes over well before the 1 s lease would have expired... at the next retry.
  await eventually('b leads', () => b.le.isLeader(), 3000);
  const after = server.get(LEASES, 'kube-system', 'external-resizer-x')!;
  assert.equal(after.spec.holderIdentity, 'b');
  assert.equal(after.spec.leaseTransitions, 1);
});

test('a leader that cannot renew within the renew deadline stops leading; health turns bad only when overdue', async (t) => {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  const events: string[] = [];
  const a = elector(server, 'a', events);
  t.after(() => a.client.close());
  const ctl = new AbortController();
  const run = a.le.run(ctl.signal);
  t.after(async () => {
    ctl.abort();
    await run;
  });
  await eventually('a leads', () => a.le.isLeader());
  assert.deepEqual(a.le.healthCheck(0), { ok: true });
  server.failNext({ status: 500, times: 1000 });
  await eventually('a stops', () => events.includes('a stopped'), 3000);
  await run;
  assert.equal(a.le.isLeader(), false);
  assert.deepEqual(a.le.healthCheck(0), { ok: true }, 'not leader → healthy');
  assert.match(await a.metrics.registry.metrics(), /leader_election_slowpath_total\{name=""\} [1-9]/);
});

test('a lease held by someone else is taken only after it expires by our clock', async (t) => {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  server.put(LEASES, {
    kind: 'Lease',
    metadata: { name: 'external-resizer-x', namespace: 'kube-system' },
    spec: { holderIdentity: 'ghost', leaseDurationSeconds: 1, renewTime: microTime(Date.now()), leaseTransitions: 4 },
  });
  const events: string[] = [];
  const b = elector(server, 'b', events);
  t.after(() => b.client.close());
  const ctl = new AbortController();
  const started = Date.now();
  const run = b.le.run(ctl.signal);
  t.after(async () => {
    ctl.abort();
    await run;
  });
  await eventually('b leads', () => b.le.isLeader(), 4000);
  assert.ok(Date.now() - started >= 900, 'waited for the ghost lease to expire');
  assert.ok(events.includes('b sees ghost'));
  assert.equal(server.get(LEASES, 'kube-system', 'external-resizer-x')!.spec.leaseTransitions, 5);
});

test('healthCheck fails when leading and renewal is overdue beyond lease duration + tolerance', async (t) => {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  const clock = new FakeClock();
  const lines: string[] = [];
  const a = elector(server, 'a', [], {
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 5_000,
    clock,
    log: createLogger({ verbosity: 5, format: 'text', write: (l) => lines.push(l) }),
  });
  t.after(() => a.client.close());
  const ctl = new AbortController();
  const run = a.le.run(ctl.signal);
  t.after(async () => {
    ctl.abort();
    await run;
  });
  // Leading, and renewed once at the fake clock's now; the next renewal is 5 s of real time away,
  // so the clock below moves while the renewal loop waits: a renewal that is overdue.
  await eventually('a leads and renewed', () => a.le.isLeader() && lines.some((l) => l.includes('"Successfully renewed lease"')));
  clock.advance(15_000 + 20_000);
  assert.deepEqual(a.le.healthCheck(20_000), { ok: true });
  clock.advance(1);
  // client-go names LeaderElectionConfig.Name, which csi-lib-utils leaves empty.
  assert.deepEqual(a.le.healthCheck(20_000), { ok: false, message: 'failed election to renew leadership on lease ' });
});

test('metrics carry the name client-go reports: empty, as csi-lib-utils sets no LeaderElectionConfig.Name', async () => {
  const metrics = createMetrics();
  const base = {
    client: {} as never,
    namespace: 'n',
    name: 'external-resizer-x',
    identity: 'i',
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 5_000,
    callbacks: { onStartedLeading() {}, onStoppedLeading() {} },
    log: silentLogger,
    metrics,
  };
  new LeaderElector(base);
  assert.match(await metrics.registry.metrics(), /^leader_election_master_status\{name=""\} 0$/m);
  const named = createMetrics();
  new LeaderElector({ ...base, metrics: named, reportedName: 'mine' });
  assert.match(await named.registry.metrics(), /^leader_election_master_status\{name="mine"\} 0$/m);
});

test("durations client-go's NewLeaderElector refuses, with its texts", () => {
  const base = {
    client: {} as never,
    namespace: 'n',
    name: 'l',
    identity: 'i',
    callbacks: { onStartedLeading() {}, onStoppedLeading() {} },
    log: silentLogger,
  };
  const table: Array<[lease: number, renew: number, retry: number, message: string | undefined]> = [
    [15_000, 10_000, 5_000, undefined],
    [10_000, 10_000, 5_000, 'leaseDuration must be greater than renewDeadline'],
    [15_000, 6_000, 5_000, 'renewDeadline must be greater than retryPeriod*JitterFactor'], // 6 s ≤ 1.2 × 5 s
    [15_000, 6_001, 5_000, undefined],
    [15_000, 10_000, 0, 'retryPeriod must be greater than zero'],
    [0, -1, -2, 'leaseDuration must be greater than zero'],
  ];
  for (const [leaseDurationMs, renewDeadlineMs, retryPeriodMs, message] of table) {
    const make = () => new LeaderElector({ ...base, leaseDurationMs, renewDeadlineMs, retryPeriodMs });
    if (message === undefined) make();
    else
      assert.throws(
        make,
        (err: unknown) => err instanceof LeaderElectionConfigError && err.message === message,
        `${leaseDurationMs}/${renewDeadlineMs}/${retryPeriodMs}`,
      );
  }
});

// Standby take-over after a leader dies without releasing the Lease, on a fake clock and an
// in-memory Lease API (no request latency): 15 s lease, 10 s renew deadline, 5 s retry period.
const LEASE_MS = 15_000;
const RETRY_MS = 5_000;
const STEP_MS = 50;

function fakeClockElector(leases: MemoryLeases, clock: FakeClock, identity: string, ledAt: number[]) {
  const le = new LeaderElector({
    client: leases,
    namespace: 'kube-system',
    name: 'external-resizer-x',
    identity,
    leaseDurationMs: LEASE_MS,
    renewDeadlineMs: 10_000,
    retryPeriodMs: RETRY_MS,
    callbacks: {
      onStartedLeading: () => {
        ledAt.push(clock.now());
      },
      onStoppedLeading: () => {},
    },
    log: silentLogger,
    clock,
  });
  const stop = new AbortController();
  const running = le.run(stop.signal);
  return { le, stop: () => stop.abort(), running };
}

/** Moves the fake clock in small steps, letting the electors' promise chains run after each. */
async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += STEP_MS) await clock.advanceAsync(Math.min(STEP_MS, ms - done));
}

test('a standby takes over a lease its leader left unreleased within lease duration + one retry period of the kill, never before the lease expired', async (t) => {
  // The largest jitter client-go's acquire loop can draw: the worst case of a jittered wait.
  t.mock.method(Math, 'random', () => 0.999);
  const late: string[] = [];
  // The standby starts at several phases of the leader's renewals, the leader dies at several
  // points between two renewals, and a read of the Lease answers at once or 400 ms later (the
  // Lease as it is when the answer leaves).
  for (const readMs of [0, 400]) {
    for (const standbyPhaseMs of [0, 1_250, 2_500, 3_750, 4_950]) {
      for (const killAfterRenewMs of [100, 2_500, 4_900]) {
        const clock = new FakeClock(0);
        const leases = new MemoryLeases(clock);
        leases.getDelayMs = readMs;
        const bLed: number[] = [];
        const a = fakeClockElector(leases, clock, 'a', []);
        await advance(clock, readMs + STEP_MS);
        assert.equal(a.le.isLeader(), true);
        await advance(clock, standbyPhaseMs);
        const b = fakeClockElector(leases, clock, 'b', bLed);
        // Both run a while: a renews every retry period, b reads the lease and finds it held.
        await advance(clock, 30_000 - standbyPhaseMs + killAfterRenewMs);
        a.stop(); // killed: no release
        await a.running;
        const killedAt = clock.now();
        const lastRenewal = Math.max(...leases.history.filter((w) => w.holder === 'a').map((w) => w.atMs));
        const writesByA = leases.history.length;
        assert.equal(bLed.length, 0, 'b took over a live leader');
        await advance(clock, 45_000);
        b.stop();
        await b.running;
        const name = `read ${readMs} ms, standby phase ${standbyPhaseMs} ms, killed ${killAfterRenewMs} ms after a renewal`;
        assert.equal(bLed.length, 1, `${name}: b never took over`);
        assert.ok(bLed[0]! >= lastRenewal + LEASE_MS, `${name}: b took over ${bLed[0]! - lastRenewal} ms after the last renewal, before the lease expired`);
        // The lease is held for a lease duration from when b *saw* the last renewal: the answer
        // of its first read that carried it, not the moment that read was asked.
        const sawIt = leases.reads.find((r) => (r.writesSeen ?? 0) >= writesByA)!;
        const decided = Math.max(...leases.reads.filter((r) => r.askedMs <= bLed[0]!).map((r) => r.askedMs));
        assert.ok(decided >= sawIt.answeredMs! + LEASE_MS, `${name}: b decided ${decided - sawIt.answeredMs!} ms after it saw the last renewal`);
        // Allowed beyond the bound: the requests' own latency (two reads and the take-over) and the test's step.
        const tookOverAfterKill = bLed[0]! - killedAt;
        if (tookOverAfterKill > LEASE_MS + RETRY_MS + 3 * readMs + STEP_MS) late.push(`${name}: ${tookOverAfterKill} ms`);
      }
    }
  }
  assert.deepEqual(late, [], `later than lease duration + retry period (${LEASE_MS + RETRY_MS} ms) after the kill`);
});

test("a standby's read that hangs is given up after one retry period, and the next one starts then", async () => {
  const clock = new FakeClock(0);
  const leases = new MemoryLeases(clock);
  const a = fakeClockElector(leases, clock, 'a', []);
  await advance(clock, STEP_MS);
  const b = fakeClockElector(leases, clock, 'b', []);
  await advance(clock, 2 * RETRY_MS);
  leases.hangGets = 1;
  const askedBefore = leases.reads.length;
  await advance(clock, 3 * RETRY_MS);
  const reads = leases.reads.slice(askedBefore).map((r) => r.askedMs);
  assert.ok(reads.length >= 2, `reads after the hang: ${reads.join(', ')}`);
  // The hung read, then the next a retry period after it (not after a 10 s renew deadline and a
  // jittered wait); the test's clock moves in steps of STEP_MS.
  const gapMs = reads[1]! - reads[0]!;
  assert.ok(gapMs >= RETRY_MS && gapMs <= RETRY_MS + STEP_MS, `next read ${gapMs} ms after the hung one`);
  a.stop();
  b.stop();
  await Promise.all([a.running, b.running]);
});

test('lease namespace: flag, then POD_NAMESPACE, then the service account file, then default', () => {
  const noFile = () => {
    throw new Error('ENOENT');
  };
  assert.equal(
    leaseNamespace('flag-ns', { POD_NAMESPACE: 'pod-ns' }, () => 'sa-ns'),
    'flag-ns',
  );
  assert.equal(
    leaseNamespace('', { POD_NAMESPACE: 'pod-ns' }, () => 'sa-ns'),
    'pod-ns',
  );
  assert.equal(
    leaseNamespace('', {}, () => 'sa-ns\n'),
    'sa-ns',
  );
  assert.equal(leaseNamespace('', {}, noFile), 'default');
  assert.equal(
    leaseNamespace('', { POD_NAMESPACE: '' }, () => ''),
    'default',
  );
});

test('identity: the sanitized hostname, or the override', () => {
  assert.equal(
    leaderIdentity({}, () => 'node-1.example.com'),
    'node-1-example-com',
  );
  assert.equal(
    leaderIdentity({}, () => 'pod_'),
    'pod-X',
  );
  assert.equal(
    leaderIdentity({ CSI_RESIZER_LEADER_ELECTION_IDENTITY: 'replica.b' }, () => 'host'),
    'replica-b',
  );
});

test('Lease requests refused for want of the rule are said once, not at every retry, and their end once', async (t) => {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  const events: string[] = [];
  const heard: string[] = [];
  const lines: string[] = [];
  const leaseRequests = (r: { path: string }) => r.path.includes('/leases');
  const { le, client } = elector(server, 'a', events, {
    log: createLogger({ verbosity: 0, format: 'text', write: (l) => lines.push(l) }),
    access: { refused: (err) => heard.push(`refused ${err.status}`), allowed: () => heard.push('allowed') },
  });
  t.after(() => client.close());
  server.failNext({ status: 403, reason: 'Forbidden', times: 4, match: leaseRequests });
  const ctl = new AbortController();
  const run = le.run(ctl.signal);
  t.after(async () => {
    ctl.abort();
    await run;
  });
  await eventually('a leads once the rule is granted', () => le.isLeader(), 5000);
  assert.equal(server.requests.filter((r) => leaseRequests(r)).length >= 5, true);
  assert.deepEqual(heard, ['refused 403', 'allowed']);
  // client-go's per-retry lines are not written for the refusals.
  assert.deepEqual(
    lines.filter((l) => /Error retrieving lease lock|Error initially creating lease lock|Failed to update lease/.test(l)),
    [],
  );
});

test('without a listener, a run of refused Lease requests is one error line', async (t) => {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  const lines: string[] = [];
  const leaseRequests = (r: { path: string }) => r.path.includes('/leases');
  const { le, client } = elector(server, 'a', [], { log: createLogger({ verbosity: 0, format: 'text', write: (l) => lines.push(l) }) });
  t.after(() => client.close());
  server.failNext({ status: 403, reason: 'Forbidden', times: 3, match: leaseRequests });
  const ctl = new AbortController();
  const run = le.run(ctl.signal);
  t.after(async () => {
    ctl.abort();
    await run;
  });
  await eventually('a leads', () => le.isLeader(), 5000);
  assert.equal(lines.filter((l) => l.includes('Lease requests forbidden, retrying quietly until they are allowed')).length, 1);
  assert.equal(lines.filter((l) => l.includes('Lease requests allowed again')).length, 1);
});
