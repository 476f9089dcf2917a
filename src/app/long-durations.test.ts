// Every flag that holds a Go duration, set to 600h (beyond Node's 2^31-1 ms timer limit), and the
// component that schedules a timer from it, built the way build.ts and main.ts build it, on the
// real clock under Node's mock timers. The mock reproduces Node's overflow (a delay above the limit
// runs after 1 ms), so each test fails with a plain setTimeout (the lease duration is compared, not
// timed, and is here as a guard); none waits in real time. The mock runs a callback at the end of
// the tick that reached it, so a long timer's later steps start up to a tick late: each test checks
// "nothing at 599h" and "done a few hours after 600h".
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { parseConfig } from '../flags/config.js';
import { settleWithin } from '../base/settle-within.js';
import { realClock } from '../base/clock.js';
import { Informer } from '../kube/cache/informer.js';
import type { KubeList, ListWatcher } from '../kube/api/client.js';
import type { KubeObject } from '../model/objects.js';
import { Resources } from '../kube/api/resources.js';
import type { WatchEvent } from '../kube/api/watch.js';
import { LeaderElector } from '../kube/api/leader-election.js';
import { ItemExponentialFailureRateLimiter, RateLimitingQueue } from '../queue/rate-limiters.js';
import { DriverChannel } from '../csi/driver-channel.js';
import { DriverCalls } from '../csi/driver-calls.js';
import { Controller } from '../csi/proto/gen/csi_pb.js';
import { silentLogger } from '../observability/log/logger.js';
import { MemoryLeases } from '../../test/fakes/memory-leases.js';
import { createLogOutput } from '../observability/log/output.js';
import { runSubcommand, subcommandDeadline } from '../diagnose/subcommands.js';
import { createMetrics } from '../observability/metrics.js';

const HOUR_MS = 3_600_000;
const H600_MS = 600 * HOUR_MS;

/** Moves mock time forward an hour at a time, letting promise continuations run after each step. */
async function advanceHours(t: TestContext, hours: number): Promise<void> {
  for (let i = 0; i < hours; i++) {
    t.mock.timers.tick(HOUR_MS);
    await flush();
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

function mockTime(t: TestContext): void {
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: 1_700_000_000_000 });
}

test('--resync-period=600h: the informer resyncs after 600h, not before', async (t) => {
  const config = parseConfig(['--resync-period=600h']);
  assert.equal(config.resyncPeriodMs, H600_MS);
  mockTime(t);
  const pvc: KubeObject = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { namespace: 'ns', name: 'a', resourceVersion: '1' } };
  const listWatcher: ListWatcher = {
    resource: Resources.persistentVolumeClaims,
    list: async (): Promise<KubeList> => ({ metadata: { resourceVersion: '1' }, items: [pvc] }),
    watch: async (_options, signal) => quietWatch(signal),
  };
  const informer = new Informer({
    listWatcher,
    log: silentLogger,
    resyncPeriodMs: config.resyncPeriodMs,
    watchList: false,
    inactivityTimeoutMs: 10 * H600_MS,
  });
  let resyncs = 0;
  informer.addEventHandler({ update: () => resyncs++ });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  t.after(async () => {
    stop.abort();
    await running.catch(() => {});
  });
  await informer.waitForSync(stop.signal);
  await advanceHours(t, 599);
  assert.equal(resyncs, 0, 'resynced before 600h');
  await advanceHours(t, 5);
  assert.equal(resyncs, 1);
});

test('--retry-interval-start=600h: a failed key comes back after 600h, not before', async (t) => {
  const config = parseConfig(['--retry-interval-start=600h', '--retry-interval-max=1000h']);
  mockTime(t);
  const queue = rateLimitedQueue(config.retryIntervalStartMs, config.retryIntervalMaxMs);
  t.after(() => queue.shutDown());
  queue.addRateLimited('ns/a');
  await advanceHours(t, 599);
  assert.equal(queue.len(), 0, 'requeued before 600h');
  await advanceHours(t, 5);
  assert.equal(queue.len(), 1);
});

test('--retry-interval-max=600h: a key that failed often comes back after 600h, not before', async (t) => {
  const config = parseConfig(['--retry-interval-max=600h']);
  assert.equal(config.retryIntervalMaxMs, H600_MS);
  mockTime(t);
  const rateLimiter = new ItemExponentialFailureRateLimiter<string>({ baseDelayMs: config.retryIntervalStartMs, maxDelayMs: config.retryIntervalMaxMs });
  const queue = new RateLimitingQueue<string>({ name: 'test', clock: realClock, rateLimiter });
  t.after(() => queue.shutDown());
  // 1 s doubled 40 times is far beyond the cap: the next delay is the cap.
  for (let i = 0; i < 40; i++) rateLimiter.when('ns/a');
  queue.addRateLimited('ns/a');
  await advanceHours(t, 599);
  assert.equal(queue.len(), 0, 'requeued before 600h');
  await advanceHours(t, 5);
  assert.equal(queue.len(), 1);
});

test('--leader-election-retry-period=600h: the leader renews after 600h, not in a loop', async (t) => {
  const config = parseConfig(['--leader-election-retry-period=600h', '--leader-election-renew-deadline=1200h', '--leader-election-lease-duration=1800h']);
  mockTime(t);
  const leases = new MemoryLeases();
  const { elector, stop } = startElector(t, leases, 'a', config);
  await until(() => elector.isLeader());
  const writesAfterAcquire = leases.writes;
  await advanceHours(t, 599);
  assert.equal(leases.writes, writesAfterAcquire, 'renewed before 600h');
  await advanceHours(t, 5);
  assert.equal(leases.writes, writesAfterAcquire + 1);
  stop();
});

test('--leader-election-renew-deadline=600h: a renewal that hangs is given up after 600h, not before', async (t) => {
  const config = parseConfig(['--leader-election-renew-deadline=600h', '--leader-election-lease-duration=1200h']);
  mockTime(t);
  const leases = new MemoryLeases();
  const { elector, stopped } = startElector(t, leases, 'a', config);
  await until(() => elector.isLeader());
  leases.hangUpdates = true; // every renewal from now on waits until its deadline cancels it
  await advanceHours(t, 599);
  assert.equal(elector.isLeader(), true, 'gave up renewing before the 600h deadline');
  assert.equal(stopped(), false);
  await advanceHours(t, 5);
  assert.equal(stopped(), true);
});

test('--leader-election-lease-duration=600h: a standby waits the whole 600h before taking an unrenewed lease', async (t) => {
  const config = parseConfig(['--leader-election-lease-duration=600h', '--leader-election-renew-deadline=300h', '--leader-election-retry-period=1h']);
  mockTime(t);
  const leases = new MemoryLeases();
  const a = startElector(t, leases, 'a', config);
  await until(() => a.elector.isLeader());
  a.stop(); // a dies without releasing the lease
  await flush();
  const b = startElector(t, leases, 'b', config);
  await advanceHours(t, 599);
  assert.equal(b.elector.isLeader(), false, 'took the lease over before it expired');
  await advanceHours(t, 3);
  assert.equal(b.elector.isLeader(), true);
});

test('--timeout=600h: a CSI call is ended at 600h, not before, and the driver is told the whole deadline', async (t) => {
  const config = parseConfig(['--timeout=600h']);
  // A driver that accepts every call and never answers (an HTTP/2 server is all gRPC needs).
  const dir = mkdtempSync(join(tmpdir(), 'long-timeout-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const socket = join(dir, 'csi.sock');
  const timeoutHeaders: string[] = [];
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => sessions.add(session));
  server.on('stream', (_stream, headers) => timeoutHeaders.push(String(headers['grpc-timeout'])));
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  t.after(() => {
    for (const session of sessions) session.destroy();
    server.close();
  });
  const channel = await DriverChannel.connect({ address: socket, log: silentLogger }, new AbortController().signal);
  const calls = new DriverCalls(channel, { log: silentLogger, metrics: createMetrics() });
  t.after(() => calls.close());

  mockTime(t);
  let outcome: unknown = 'pending';
  const call = calls
    .unary(
      Controller.method.controllerExpandVolume,
      { volumeId: 'v', capacityRange: { requiredBytes: 1n } },
      { timeoutMs: config.timeoutMs },
      new AbortController().signal,
    )
    .then(
      () => {
        outcome = 'answered';
      },
      (err: unknown) => {
        outcome = err;
      },
    );
  // grpc-js starts a call from zero-delay timers, which the mock runs only when told.
  await until(
    () => timeoutHeaders.length === 1,
    () => t.mock.timers.tick(0),
  );
  assert.equal(timeoutHeaders[0], '2160000S');
  await advanceHours(t, 599);
  assert.equal(outcome, 'pending', 'the call ended before its 600h deadline');
  await advanceHours(t, 5);
  await call;
  assert.equal((outcome as { code?: number }).code, status.DEADLINE_EXCEEDED, String(outcome));
});

test('--timeout=600h: shutdown waits up to 600h for work in flight, not less', async (t) => {
  const config = parseConfig(['--timeout=600h']);
  mockTime(t);
  let result: string | undefined;
  const waiting = settleWithin(new Promise(() => {}), config.timeoutMs).then((r) => {
    result = r;
  });
  await advanceHours(t, 599);
  assert.equal(result, undefined);
  await advanceHours(t, 5);
  await waiting;
  assert.equal(result, 'timedOut');
});

test('--log-flush-frequency=600h: buffered info lines are written after 600h, not before', async (t) => {
  const config = parseConfig(['--log-flush-frequency=600h']);
  assert.equal(config.logFlushFrequencyMs, H600_MS);
  mockTime(t);
  const stdout: string[] = [];
  const output = createLogOutput({
    splitStream: true,
    infoBufferBytes: 1024,
    flushIntervalMs: config.logFlushFrequencyMs,
    stdout: (text) => stdout.push(text),
    stderr: () => {},
  });
  t.after(() => output.close());
  output.write('held back', true);
  await advanceHours(t, 599);
  assert.deepEqual(stdout, [], 'flushed before 600h');
  await advanceHours(t, 5);
  assert.deepEqual(stdout, ['held back\n']);
});

test('doctor --timeout=600h: runs its checks under a deadline of 3 x 600h, not before', async (t) => {
  const config = parseConfig(['--timeout=600h']);
  // The whole command with nothing to reach: it reports, it does not throw.
  const out: string[] = [];
  const code = await runSubcommand('doctor', ['--timeout=600h', '--kubeconfig=/nonexistent/kubeconfig', '--csi-address=/nonexistent/csi.sock'], {
    program: 'csi-resizer',
    out: (s) => out.push(s),
    err: (s) => out.push(s),
  });
  assert.equal(code, 1, out.join(''));
  assert.match(out.join(''), /\[FAIL\] API server: no client configuration/);
  assert.match(out.join(''), /\[FAIL\] CSI socket: no socket at \/nonexistent\/csi\.sock/);

  mockTime(t);
  const deadline = subcommandDeadline(config);
  t.after(() => deadline.dispose());
  await advanceHours(t, 1799);
  assert.equal(deadline.signal.aborted, false, 'the deadline passed before 1800h');
  await advanceHours(t, 5);
  assert.equal(deadline.signal.aborted, true);
});

function rateLimitedQueue(baseDelayMs: number, maxDelayMs: number): RateLimitingQueue<string> {
  return new RateLimitingQueue<string>({ name: 'test', clock: realClock, rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs, maxDelayMs }) });
}

async function* quietWatch(signal: AbortSignal): AsyncGenerator<WatchEvent> {
  await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

function startElector(t: TestContext, leases: MemoryLeases, identity: string, config: ReturnType<typeof parseConfig>) {
  let stoppedLeading = false;
  const elector = new LeaderElector({
    client: leases as never,
    namespace: 'ns',
    name: 'lease',
    identity,
    leaseDurationMs: config.leaderElectionLeaseDurationMs,
    renewDeadlineMs: config.leaderElectionRenewDeadlineMs,
    retryPeriodMs: config.leaderElectionRetryPeriodMs,
    callbacks: {
      onStartedLeading: () => {},
      onStoppedLeading: () => {
        stoppedLeading = true;
      },
    },
    log: silentLogger,
  });
  const controller = new AbortController();
  const running = elector.run(controller.signal).catch(() => {});
  t.after(async () => {
    controller.abort();
    await running;
  });
  return { elector, stop: () => controller.abort(), stopped: () => stoppedLeading };
}

async function until(cond: () => boolean, step: () => void = () => {}): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) {
    step();
    await flush();
  }
  assert.ok(cond(), 'condition not met');
}
