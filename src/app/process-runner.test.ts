// The process runner in process, with fakes: a signal source, an app whose controllers hold
// reconciles in flight, and an elector the test elects and deposes. Each case runs the runner to
// its end and reports that end as main does (endProcess), so the exit code is what the process
// would exit with.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { App } from './build.js';
import type { Elector } from './build/elector.js';
import { parseConfig } from '../flags/config.js';
import { endProcess, type ProcessEnd } from './exit.js';
import type { ProcessSignals } from './os-signals.js';
import { runProcess, type PermissionCheckTiming, type ProcessParts } from './process-runner.js';
import type { LeaderCallbacks } from '../kube/api/leader-election.js';
import { createLogger } from '../observability/log/logger.js';
import { createMetrics } from '../observability/metrics.js';
import { StartupError } from './startup-error.js';
import { eventually } from '../../test/support/eventually.js';

/** A process whose SIGTERM/SIGINT the test sends; records what the runner does to it. */
class FakeProcess extends EventEmitter {
  readonly pid = 4242;
  readonly calls: string[] = [];
  kill(pid: number, signal: string): boolean {
    this.calls.push(`kill ${pid} ${signal}`);
    return true;
  }
  exit(code?: number): never {
    this.calls.push(`exit ${code}`);
    return undefined as never;
  }
  send(signal: NodeJS.Signals): void {
    this.emit(signal, signal);
  }
}

/** One reconcile in flight: ends when the test finishes it or its cancel signal aborts. */
class InFlight {
  outcome: Promise<'finished' | 'cancelled'> | undefined;
  private finishNow = () => {};
  start(cancel: AbortSignal, events: string[]): Promise<unknown> {
    this.outcome = new Promise((resolve) => {
      this.finishNow = () => resolve('finished');
      if (cancel.aborted) resolve('cancelled');
      cancel.addEventListener('abort', () => resolve('cancelled'), { once: true });
    });
    return this.outcome.then((how) => events.push(`reconcile ${how}`));
  }
  finish(): void {
    this.finishNow();
  }
}

/** Leadership the test controls: elected on run; `lose()` ends it the way a failed renewal does. */
class FakeElector implements Elector {
  private leading = new AbortController();
  private lost = () => {};
  constructor(
    private readonly callbacks: LeaderCallbacks,
    private readonly events: string[],
  ) {}
  run(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const stop = (how: string) => {
        signal.removeEventListener('abort', onAbort);
        this.leading.abort(new Error(how));
        this.events.push(how);
        this.callbacks.onStoppedLeading();
        resolve();
      };
      const onAbort = () => stop('lease released');
      this.lost = () => stop('leadership lost');
      signal.addEventListener('abort', onAbort, { once: true });
      this.events.push('elected');
      void this.callbacks.onStartedLeading(this.leading.signal);
    });
  }
  lose(): void {
    this.lost();
  }
  healthCheck(): { ok: true } {
    return { ok: true };
  }
}

/** The app: controllers that start one reconcile and, once told to stop taking work, wait for it. */
class FakeApp implements App {
  readonly driverName = 'fake.csi.example.com';
  readonly events: string[] = [];
  readonly reconcile = new InFlight();
  elector: FakeElector | undefined;
  closed = false;
  /** How many times the controllers were started. */
  runs = 0;
  private fatal: ((err: Error) => void) | undefined;
  private failRun: (err: Error) => void = () => {};
  private runStarted = () => {};
  /** Resolves once the controllers run and their reconcile is in flight. */
  readonly running = new Promise<void>((resolve) => {
    this.runStarted = resolve;
  });

  async run(signal: AbortSignal, cancelSignal: AbortSignal = signal): Promise<void> {
    this.runs++;
    const done = this.reconcile.start(cancelSignal, this.events);
    const failed = new Promise<never>((_resolve, reject) => {
      this.failRun = reject;
    });
    this.runStarted();
    await Promise.race([
      failed,
      new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        signal.addEventListener('abort', () => resolve(), { once: true });
      }),
    ]);
    this.events.push('stopped taking work');
    await done;
  }
  onFatal(listener: (err: Error) => void): void {
    this.fatal = listener;
  }
  private cachesSettled = () => {};
  private readonly settled = new Promise<void>((resolve) => {
    this.cachesSettled = resolve;
  });
  /** The test's stand-in for the informers' first lists (or refusals). */
  syncCaches(): void {
    this.cachesSettled();
  }
  /** How many times the runner has asked to wait for the caches. */
  cacheWaits = 0;
  whenCachesSettled(signal: AbortSignal): Promise<void> {
    this.cacheWaits++;
    return new Promise((resolve, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      void this.settled.then(resolve);
    });
  }
  async checkPermissions(): Promise<void> {
    this.events.push('permissions checked');
  }
  createElector(callbacks: LeaderCallbacks): Elector {
    this.elector = new FakeElector(callbacks, this.events);
    return this.elector;
  }
  close(): void {
    this.closed = true;
    this.events.push('app closed');
  }
  driverRenamed(err: Error): void {
    this.fatal?.(err);
  }
  controllersFail(err: Error): void {
    this.failRun(err);
  }
}

/** Long enough that no test meets the RBAC check unless it asks for it. */
const NO_PERMISSION_CHECK: PermissionCheckTiming = { afterSyncMs: 3_600_000, latestMs: 3_600_000 };

function setup(
  t: TestContext,
  args: string[],
  options: {
    startApp?: ProcessParts['startApp'];
    startHttpServer?: ProcessParts['startHttpServer'];
    permissionCheckTiming?: PermissionCheckTiming;
  } = {},
) {
  const config = parseConfig(args);
  const logs: string[] = [];
  const log = createLogger({ verbosity: 0, format: 'text', write: (line) => logs.push(line) });
  const app = new FakeApp();
  const proc = new FakeProcess();
  const processMetrics = { registered: 0 };
  const parts: ProcessParts = {
    createMetrics: () => createMetrics(),
    registerProcessMetrics: async () => {
      processMetrics.registered++;
      app.events.push('process metrics');
    },
    startApp: options.startApp ?? (async () => app),
    startHttpServer: options.startHttpServer ?? (() => Promise.reject(new Error('no HTTP server in these tests'))),
    isStartupError: (err): err is StartupError => err instanceof StartupError,
  };
  const ended = runProcess({
    config,
    log,
    version: 'test',
    signals: proc as unknown as ProcessSignals,
    parts,
    permissionCheckTiming: options.permissionCheckTiming ?? NO_PERMISSION_CHECK,
  });
  // A case that failed half-way leaves no runner behind (its keep-alive timer would hold the test process).
  t.after(() => {
    app.reconcile.finish();
    app.controllersFail(new Error('test over'));
  });
  /** What main would exit with, and the lines it would log. */
  const exit = async () => {
    const end: ProcessEnd = await ended;
    return { end: end.kind, code: endProcess(end, { log, stdout: () => {}, stderr: () => {} }) };
  };
  return { app, proc, logs, ended, exit, processMetrics };
}

/**
 * Lets promise continuations and I/O callbacks run, a bounded number of event-loop turns (under
 * mock timers, where eventually's own timer would never fire); with `until`, fails unless it holds by then.
 */
async function turns(until?: () => boolean): Promise<void> {
  for (let i = 0; i < 50 && !until?.(); i++) await new Promise((resolve) => setImmediate(resolve));
  if (until) assert.ok(until(), 'condition not met');
}

/** Waits (bounded) until the fake app has logged `event`. */
const seen = (app: FakeApp, event: string) => eventually(event, () => app.events.includes(event), 5_000, 1);

const LEADER = ['--leader-election', '--leader-election-lease-duration=15s', '--leader-election-renew-deadline=10s', '--leader-election-retry-period=2s'];

test('leader, first signal: stops taking work, lets the reconcile in flight finish, then releases the Lease and exits 0', async (t) => {
  const { app, proc, logs, exit } = setup(t, [...LEADER, '--timeout=1h']);
  await app.running;
  proc.send('SIGTERM');
  assert.ok(logs.some((l) => l.endsWith('] Received SIGTERM or SIGINT signal, shutting down controller.')));
  await seen(app, 'stopped taking work');
  // Draining: the reconcile is still running and the Lease still held.
  assert.deepEqual(app.events, ['elected', 'stopped taking work']);
  app.reconcile.finish();
  assert.deepEqual(await exit(), { end: 'stopped', code: 0 });
  assert.deepEqual(app.events, ['elected', 'stopped taking work', 'reconcile finished', 'lease released', 'app closed']);
  assert.ok(!logs.some((l) => l.includes('In-flight operations did not finish')));
});

test('leader, first signal, a reconcile that outlives --timeout: cancelled at the bound, Lease released, exit 0', async (t) => {
  const { app, proc, logs, exit } = setup(t, [...LEADER, '--timeout=50ms']);
  await app.running;
  proc.send('SIGINT');
  assert.deepEqual(await exit(), { end: 'stopped', code: 0 });
  // At the bound the root signal cancels the reconcile and releases the Lease in one step.
  assert.deepEqual(new Set(app.events), new Set(['elected', 'stopped taking work', 'reconcile cancelled', 'lease released', 'app closed']));
  assert.equal(app.events.at(-1), 'app closed');
  assert.ok(logs.some((l) => l.includes('"In-flight operations did not finish within --timeout; exiting anyway" timeoutMs=50')));
});

test('a second signal while draining exits 1 at once, without waiting for the reconcile or releasing the Lease', async (t) => {
  const { app, proc, logs, exit } = setup(t, [...LEADER, '--timeout=1h']);
  await app.running;
  proc.send('SIGTERM');
  await seen(app, 'stopped taking work');
  proc.send('SIGINT');
  assert.deepEqual(await exit(), { end: 'forced', code: 1 });
  assert.deepEqual(app.events, ['elected', 'stopped taking work']);
  assert.ok(logs.some((l) => l.includes('"Received second signal, exiting immediately" signal="SIGINT"')));
});

test('leadership lost: the work in flight is cancelled, not waited for, and the process exits 1 without touching the Lease', async (t) => {
  const { app, exit } = setup(t, [...LEADER, '--timeout=1h']);
  await app.running;
  app.elector!.lose();
  assert.deepEqual(await exit(), { end: 'leadershipLost', code: 1 });
  // Losing the Lease stops the work and cancels what is in flight at once (another replica may
  // take over), and the process ends without waiting for the cancelled reconcile to unwind.
  for (const event of ['elected', 'leadership lost', 'stopped taking work', 'app closed']) assert.ok(app.events.includes(event), event);
});

test('without leader election, the first signal drains the same way and exits 0', async (t) => {
  const { app, proc, exit } = setup(t, ['--timeout=1h']);
  await app.running;
  proc.send('SIGTERM');
  await seen(app, 'stopped taking work');
  assert.deepEqual(app.events, ['stopped taking work']);
  app.reconcile.finish();
  assert.deepEqual(await exit(), { end: 'stopped', code: 0 });
  assert.deepEqual(app.events, ['stopped taking work', 'reconcile finished', 'app closed']);
});

test("ReleaseLeaderElectionOnExit=false: a signal re-raises itself, then exits 2 (Go's runtime as PID 1)", async (t) => {
  const { app, proc } = setup(t, [...LEADER, '--feature-gates=ReleaseLeaderElectionOnExit=false']);
  await app.running;
  proc.send('SIGTERM');
  assert.deepEqual(proc.calls, ['kill 4242 SIGTERM', 'exit 2']);
  assert.deepEqual(app.events, ['elected'], 'no drain');
});

test('the controllers failing on their own exit 1 at once', async (t) => {
  const { app, logs, exit } = setup(t, ['--timeout=1h']);
  await app.running;
  app.controllersFail(new Error('informer gave up'));
  assert.deepEqual(await exit(), { end: 'controllersFailed', code: 1 });
  assert.ok(logs.some((l) => l.includes('"Controllers stopped unexpectedly" err="informer gave up"')));
});

test('the driver coming back under another name exits 1 at once', async (t) => {
  const { app, logs, exit } = setup(t, ['--timeout=1h']);
  await app.running;
  app.driverRenamed(new Error('driver name changed from a to b'));
  assert.deepEqual(await exit(), { end: 'driverRenamed', code: 1 });
  assert.ok(logs.some((l) => l.includes('"CSI driver name changed, exiting" err="driver name changed from a to b"')));
});

test("typed startup failures end with their own exit code and upstream's line", async (t) => {
  const cases = [
    {
      error: new StartupError('CSI driver does not support resize nor modify', 255),
      code: 255,
      line: /^F\d{4} .*\] CSI driver does not support resize nor modify$/,
    },
    {
      error: new StartupError('Failed to create CSI client', 1, { cause: new Error('no socket') }),
      code: 1,
      line: /^E\d{4} .*\] "Failed to create CSI client" err="no socket"$/,
    },
  ];
  for (const c of cases) {
    await t.test(c.error.message, async (t) => {
      const { logs, exit } = setup(t, [], { startApp: () => Promise.reject(c.error) });
      assert.deepEqual(await exit(), { end: 'startupFailed', code: c.code });
      assert.match(logs.at(-1)!, c.line);
    });
  }
});

test('an elector the flags make invalid is a startup failure with its code (2, a Go panic)', async (t) => {
  const app = Object.assign(new FakeApp(), {
    createElector: () => {
      throw new StartupError('Invalid leader election configuration', 2, { cause: new Error('leaseDuration must be greater than renewDeadline') });
    },
  });
  const { logs, exit } = setup(t, LEADER, { startApp: async () => app });
  assert.deepEqual(await exit(), { end: 'startupFailed', code: 2 });
  assert.match(logs.at(-1)!, /"Invalid leader election configuration" err="leaseDuration must be greater than renewDeadline"$/);
  assert.equal(app.closed, false, 'ends at once');
});

test('a signal during startup ends with 0, whatever startup then says', async (t) => {
  let proc: FakeProcess | undefined;
  const { exit, proc: p } = setup(t, [], {
    startApp: async (_config, _deps, signal) => {
      await Promise.resolve(); // setup() has returned the fake process
      proc!.send('SIGTERM');
      assert.equal(signal.aborted, true, 'startup is cancelled by the work signal');
      throw new StartupError('Failed to create CSI client', 1, { cause: signal.reason });
    },
  });
  proc = p;
  assert.deepEqual(await exit(), { end: 'stopped', code: 0 });
});

test('an error nobody classified is a bug: the runner rejects with it', async (t) => {
  const { ended } = setup(t, [], { startApp: () => Promise.reject(new TypeError('bug')) });
  await assert.rejects(ended, /bug/);
});

test('the RBAC check waits for the caches to sync, then afterSyncMs more, so the first resizes go first', async (t) => {
  // The runner's timers on mock time: the waits are stepped, never slept through.
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
  const { app } = setup(t, ['--timeout=1h'], { permissionCheckTiming: { afterSyncMs: 20, latestMs: 3_600_000 } });
  await app.running;
  await turns(() => app.cacheWaits > 0);
  // The controllers run and the runner waits for their caches: however long that takes (a minute
  // here, short of latestMs), no review.
  t.mock.timers.tick(60_000);
  await turns();
  assert.ok(!app.events.includes('permissions checked'), 'checked before the caches synced');
  app.syncCaches();
  await turns();
  t.mock.timers.tick(19);
  await turns();
  assert.ok(!app.events.includes('permissions checked'), 'checked before afterSyncMs');
  t.mock.timers.tick(1);
  await turns(() => app.events.includes('permissions checked'));
});

test('the RBAC check runs at latestMs when the caches never settle (a standby replica)', async (t) => {
  const { app } = setup(t, [...LEADER, '--timeout=1h'], { permissionCheckTiming: { afterSyncMs: 3_600_000, latestMs: 50 } });
  await seen(app, 'permissions checked');
});

test('a shutdown before the RBAC check is due skips it', async (t) => {
  const { app, proc, exit } = setup(t, ['--timeout=1h'], { permissionCheckTiming: { afterSyncMs: 3_600_000, latestMs: 3_600_000 } });
  await app.running;
  app.syncCaches();
  proc.send('SIGTERM');
  app.reconcile.finish();
  assert.deepEqual(await exit(), { end: 'stopped', code: 0 });
  assert.ok(!app.events.includes('permissions checked'));
});

/** A diagnostics server that serves nothing; `scrape()` does what a scrape does first. */
function fakeServer(): { start: ProcessParts['startHttpServer']; scrape: () => void } {
  let beforeScrape: (() => void) | undefined;
  return {
    start: async (options) => {
      beforeScrape = options.beforeScrape;
      return { port: 0, host: '127.0.0.1', close: async () => {} };
    },
    scrape: () => beforeScrape?.(),
  };
}

test('process metrics (process_*, nodejs_*): set up with the RBAC check after start-up, and only with an endpoint', async (t) => {
  const timing = { afterSyncMs: 0, latestMs: 3_600_000 };
  for (const args of [['--http-endpoint=127.0.0.1:0'], ['--metrics-address=127.0.0.1:0']]) {
    await t.test(args[0]!, async (t) => {
      const server = fakeServer();
      const { app, processMetrics } = setup(t, args, { startHttpServer: server.start, permissionCheckTiming: timing });
      await app.running;
      assert.equal(processMetrics.registered, 0, 'not on the way to the first resizes');
      app.syncCaches();
      await seen(app, 'permissions checked');
      assert.deepEqual(
        app.events.filter((e) => e !== 'stopped taking work'),
        ['process metrics', 'permissions checked'],
      );
      server.scrape();
      assert.equal(processMetrics.registered, 1, 'once');
    });
  }
  await t.test('no endpoint: never (nothing could read them)', async (t) => {
    const { app, processMetrics } = setup(t, [], { permissionCheckTiming: timing });
    await app.running;
    app.syncCaches();
    await seen(app, 'permissions checked');
    assert.equal(processMetrics.registered, 0);
  });
});

test('a scrape before start-up is over sets the process metrics up first, so every scrape has them', async (t) => {
  const server = fakeServer();
  const { app, processMetrics } = setup(t, ['--http-endpoint=127.0.0.1:0'], { startHttpServer: server.start });
  await app.running;
  server.scrape();
  assert.equal(processMetrics.registered, 1);
  server.scrape();
  assert.equal(processMetrics.registered, 1);
});
