// The engine's run, with fake informers and a fake clock: when handlers are registered, that no key
// is reconciled before every cache has synced, and the order of the lifecycle calls for both ways
// upstream's controllers announce themselves, including a sync cut short by shutdown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../observability/log/logger.js';
import { ItemExponentialFailureRateLimiter, RateLimitingQueue } from '../queue/rate-limiters.js';
import type { Outcome } from '../queue/workers.js';
import { FakeClock, flushMicrotasks } from '../../test/fakes/fake-clock.js';
import { ControllerEngine, type ControllerLifecycle, type WatchedInformer } from './engine.js';

/** An informer whose first sync happens when the test says so (or fails when the signal aborts first). */
function fakeInformer(name: string, trace: string[]) {
  let synced = false;
  const waiters: (() => void)[] = [];
  const informer: WatchedInformer = {
    register: () => trace.push(`register ${name}`),
    waitForSync: (signal) =>
      new Promise<void>((resolve, reject) => {
        if (synced) return resolve();
        waiters.push(resolve);
        signal.addEventListener('abort', () => reject(new Error(`${name}: wait aborted`)), { once: true });
      }),
  };
  return {
    informer,
    sync() {
      synced = true;
      for (const resolve of waiters.splice(0)) resolve();
    },
  };
}

function setup(announce: ControllerLifecycle['announce']) {
  const trace: string[] = [];
  const pvcs = fakeInformer('pvcs', trace);
  const pvs = fakeInformer('pvs', trace);
  const queue = new RateLimitingQueue<string>({
    clock: new FakeClock(),
    rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 1000, maxDelayMs: 60_000 }),
  });
  let finishReconcile: (() => void) | undefined;
  const engine = new ControllerEngine({
    name: 'test-controller',
    informers: [pvcs.informer, pvs.informer],
    queue,
    workers: 2,
    reconcile: (key) => {
      trace.push(`reconcile ${key}`);
      return new Promise<Outcome>((resolve) => {
        finishReconcile = () => {
          trace.push(`finished ${key}`);
          resolve({ kind: 'done' });
        };
      });
    },
    lifecycle: {
      announce,
      starting: () => trace.push('starting'),
      stopping: () => trace.push('stopping'),
      cachesNotSynced: () => trace.push('caches not synced'),
      synced: () => trace.push('synced'),
      reconcileFailed: (err, key) => trace.push(`failed ${key}: ${err instanceof Error ? err.message : String(err)}`),
    },
    log: silentLogger,
  });
  return { engine, trace, pvcs, pvs, queue, finish: () => finishReconcile?.() };
}

test('handlers are registered once, when the engine is constructed', () => {
  const s = setup('beforeSync');
  assert.deepEqual(s.trace, ['register pvcs', 'register pvs']);
  assert.equal(s.engine.name, 'test-controller');
});

for (const announce of ['beforeSync', 'afterSync'] as const) {
  test(`${announce}: no key is reconciled before every cache synced; the stop is said after the reconcile in flight finished`, async () => {
    const s = setup(announce);
    s.trace.length = 0;
    const stop = new AbortController();
    const running = s.engine.run(stop.signal);
    s.queue.add('ns/a');
    s.pvcs.sync();
    await flushMicrotasks();
    assert.deepEqual(s.trace, announce === 'beforeSync' ? ['starting'] : [], 'the PV cache has not synced yet');
    s.pvs.sync();
    await flushMicrotasks();
    assert.deepEqual(s.trace, announce === 'beforeSync' ? ['starting', 'synced', 'reconcile ns/a'] : ['synced', 'starting', 'reconcile ns/a']);
    stop.abort();
    await flushMicrotasks();
    assert.equal(s.trace.at(-1), 'reconcile ns/a', 'waits for the reconcile in flight');
    s.finish();
    await running;
    assert.deepEqual(s.trace.slice(-2), ['finished ns/a', 'stopping']);
    assert.equal(s.queue.shuttingDown(), true);
  });
}

test('shutdown before the caches synced: beforeSync says it stops after the sync error, afterSync says nothing but the sync error', async () => {
  for (const [announce, expected] of [
    ['beforeSync', ['starting', 'caches not synced', 'stopping']],
    ['afterSync', ['caches not synced']],
  ] as const) {
    const s = setup(announce);
    s.trace.length = 0;
    const stop = new AbortController();
    s.queue.add('ns/a');
    const running = s.engine.run(stop.signal);
    s.pvcs.sync();
    stop.abort();
    await running;
    assert.deepEqual(s.trace, expected, announce);
  }
});

test('a cache that fails to sync while the signal is live is an error, after the stop is said', async () => {
  const trace: string[] = [];
  const queue = new RateLimitingQueue<string>({
    clock: new FakeClock(),
    rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 1, maxDelayMs: 1 }),
  });
  const broken: WatchedInformer = {
    register: () => {},
    waitForSync: async () => {
      throw new Error('informer stopped');
    },
  };
  const engine = new ControllerEngine({
    name: 'test-controller',
    informers: [broken],
    queue,
    workers: 1,
    reconcile: async () => ({ kind: 'done' }),
    log: silentLogger,
    lifecycle: {
      announce: 'beforeSync',
      starting: () => trace.push('starting'),
      stopping: () => trace.push('stopping'),
      cachesNotSynced: () => trace.push('caches not synced'),
      reconcileFailed: () => trace.push('reconcile failed'),
    },
  });
  await assert.rejects(engine.run(new AbortController().signal), /informer stopped/);
  assert.deepEqual(trace, ['starting', 'stopping']);
});

test("a reconcile that throws is reported in the controller's words, with its key, and the key backs off", async () => {
  const trace: string[] = [];
  const clock = new FakeClock();
  const queue = new RateLimitingQueue<string>({ clock, rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 1000, maxDelayMs: 60_000 }) });
  const engine = new ControllerEngine({
    name: 'test-controller',
    informers: [],
    queue,
    workers: 1,
    log: silentLogger,
    reconcile: async (key) => {
      throw new Error(`${key} is broken`);
    },
    lifecycle: {
      announce: 'beforeSync',
      starting: () => {},
      stopping: () => {},
      cachesNotSynced: () => {},
      reconcileFailed: (err, key) => trace.push(`${key}: ${err instanceof Error ? err.message : String(err)}`),
    },
  });
  const stop = new AbortController();
  const running = engine.run(stop.signal);
  queue.add('ns/a');
  await flushMicrotasks();
  assert.deepEqual(trace, ['ns/a: ns/a is broken']);
  assert.equal(queue.numRequeues('ns/a'), 1);
  stop.abort();
  await running;
});
