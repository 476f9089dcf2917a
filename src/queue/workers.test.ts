import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runWorkers, type Outcome } from './workers.js';
import { ItemExponentialFailureRateLimiter, RateLimitingQueue } from './rate-limiters.js';
import { createLogger } from '../observability/log/logger.js';
import { FakeClock, flushMicrotasks } from '../../test/fakes/fake-clock.js';

const done: Outcome = { kind: 'done' };
const retryAfter = (ms: number): Outcome => ({ kind: 'retryAfter', ms });

function setup() {
  const clock = new FakeClock();
  const queue = new RateLimitingQueue<string>({ clock, rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 1000, maxDelayMs: 60_000 }) });
  const lines: string[] = [];
  const log = createLogger({ verbosity: 0, format: 'json', write: (l) => lines.push(l) });
  const controller = new AbortController();
  /** What the workers reported as failed: [key, error text]. */
  const failures: Array<[string, string]> = [];
  const onError = (err: unknown, key: string) => {
    failures.push([key, err instanceof Error ? err.message : String(err)]);
  };
  return { clock, queue, lines, log, controller, failures, onError };
}

test('outcomes: done forgets, retryAfter waits without backoff, a throw is reported and backs off', async () => {
  const { clock, queue, lines, log, controller, failures, onError } = setup();
  const plans: Record<string, Array<Outcome | Error>> = {
    ok: [done],
    later: [retryAfter(5000), done],
    flaky: [new Error('driver said no'), new Error('again'), done],
  };
  const calls: string[] = [];
  const running = runWorkers({
    queue,
    workers: 2,
    log,
    signal: controller.signal,
    onError,
    reconcile: async (key) => {
      calls.push(key);
      const next = plans[key]?.shift() ?? done;
      if (next instanceof Error) throw next;
      return next;
    },
  });
  queue.add('ok');
  queue.add('later');
  queue.add('flaky');
  await flushMicrotasks();
  assert.deepEqual(calls.sort(), ['flaky', 'later', 'ok']);
  assert.equal(queue.numRequeues('flaky'), 1);
  assert.equal(queue.numRequeues('later'), 0, 'retryAfter leaves the backoff alone');
  assert.deepEqual(failures, [['flaky', 'driver said no']], 'the caller says it in its own words');
  assert.deepEqual(lines, [], 'the workers log nothing of their own');

  await clock.advanceAsync(1000); // first backoff step of flaky
  assert.equal(calls.filter((k) => k === 'flaky').length, 2);
  assert.equal(queue.numRequeues('flaky'), 2);
  await clock.advanceAsync(2000); // second step
  assert.equal(calls.filter((k) => k === 'flaky').length, 3);
  assert.equal(queue.numRequeues('flaky'), 0, 'success forgets the backoff');

  await clock.advanceAsync(2000); // later's 5 s wait is now over
  assert.equal(calls.filter((k) => k === 'later').length, 2);

  controller.abort();
  await running;
  assert.equal(queue.shuttingDown(), true);
});

test('a key is never reconciled by two workers at once', async () => {
  const { queue, log, controller, onError } = setup();
  let active = 0;
  let maxActive = 0;
  let runs = 0;
  const running = runWorkers({
    queue,
    workers: 4,
    log,
    signal: controller.signal,
    onError,
    reconcile: async () => {
      active++;
      runs++;
      maxActive = Math.max(maxActive, active);
      await flushMicrotasks();
      active--;
      return done;
    },
  });
  for (let i = 0; i < 5; i++) {
    queue.add('same');
    await new Promise((r) => setImmediate(r));
  }
  await flushMicrotasks();
  await flushMicrotasks();
  assert.equal(maxActive, 1);
  assert.ok(runs >= 2, 're-added during processing runs again');
  controller.abort();
  await running;
});

test('shutdown waits for reconciles in flight and starts no new ones', async () => {
  const { queue, log, controller, onError } = setup();
  let release!: () => void;
  const started: string[] = [];
  const running = runWorkers({
    queue,
    workers: 1,
    log,
    signal: controller.signal,
    onError,
    reconcile: (key) => {
      started.push(key);
      return new Promise<Outcome>((resolve) => {
        release = () => resolve(done);
      });
    },
  });
  queue.add('a');
  queue.add('b');
  await flushMicrotasks();
  let finished = false;
  void running.then(() => {
    finished = true;
  });
  controller.abort();
  await flushMicrotasks();
  assert.equal(finished, false, 'waits for a');
  release();
  await running;
  assert.deepEqual(started, ['a']);
});

test('an aborted signal before start returns at once; non-Error throws are handled', async () => {
  const { queue, log, controller, failures, onError } = setup();
  controller.abort();
  await runWorkers({ queue, workers: 3, log, signal: controller.signal, onError, reconcile: async () => done });

  const s = setup();
  const running = runWorkers({
    queue: s.queue,
    workers: 1,
    log: s.log,
    signal: s.controller.signal,
    onError: s.onError,
    reconcile: async () => {
      throw 'a string';
    },
  });
  s.queue.add('k');
  await flushMicrotasks();
  assert.equal(s.queue.numRequeues('k'), 1);
  assert.deepEqual(s.failures, [['k', 'a string']]);
  s.controller.abort();
  await running;
  assert.equal(failures.length, 0);
});

test("0 or fewer workers (as the Go sidecar's `for range workers`): nothing is reconciled, run ends with the signal", async () => {
  for (const workers of [0, -3]) {
    const { queue, log, controller, onError } = setup();
    const reconciled: string[] = [];
    let finished = false;
    const running = runWorkers({
      queue,
      workers,
      log,
      signal: controller.signal,
      onError,
      reconcile: async (key) => {
        reconciled.push(key);
        return done;
      },
    }).then(() => {
      finished = true;
    });
    queue.add('a');
    await flushMicrotasks();
    assert.equal(finished, false, `${workers} workers: still running`);
    assert.deepEqual(reconciled, []);
    assert.equal(queue.len(), 1, 'the key waits in the queue');
    controller.abort();
    await running;
    assert.deepEqual(reconciled, []);
  }
});
