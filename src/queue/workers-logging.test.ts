// The worker's error path hands whatever a reconcile throws (circular values, null prototypes,
// BigInt, symbols, errors whose getters throw) to the caller, which logs it as the controllers do,
// without throwing: the key is requeued and the worker goes on with the next key, in both log formats.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runWorkers, type Outcome } from './workers.js';
import { ItemExponentialFailureRateLimiter, RateLimitingQueue } from './rate-limiters.js';
import { createLogger } from '../observability/log/logger.js';
import { FakeClock, flushMicrotasks } from '../../test/fakes/fake-clock.js';

const doneOutcome: Outcome = { kind: 'done' };

function thrownValues(): Record<string, unknown> {
  const circular: Record<string, unknown> = { reason: 'loop' };
  circular['self'] = circular;
  const circularCause = new Error('outer');
  (circularCause as { cause?: unknown }).cause = circularCause;
  const errorWithCircularCause = new Error('patch failed', { cause: circular });
  const nullProto = Object.assign(Object.create(null) as object, { code: 500 });
  const hostileError = new Error('x');
  Object.defineProperty(hostileError, 'message', {
    get: () => {
      throw new Error('no message for you');
    },
  });
  return {
    circular,
    circularCause,
    errorWithCircularCause,
    nullProto,
    bigint: 10n ** 20n,
    symbol: Symbol('boom'),
    hostileError,
    undefinedValue: undefined,
  };
}

for (const format of ['text', 'json'] as const) {
  test(`${format}: every kind of thrown value is logged, requeued, and the worker carries on`, async () => {
    const clock = new FakeClock();
    const queue = new RateLimitingQueue<string>({ clock, rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 1000, maxDelayMs: 60_000 }) });
    const lines: string[] = [];
    const log = createLogger({ verbosity: 0, format, write: (l) => lines.push(l) });
    const controller = new AbortController();
    const values = thrownValues();
    const done: string[] = [];
    const running = runWorkers({
      queue,
      workers: 1,
      log,
      signal: controller.signal,
      onError: (err) => log.error('Error syncing PVC', { err }),
      reconcile: async (key) => {
        if (key in values) throw values[key];
        done.push(key);
        return doneOutcome;
      },
    });
    for (const key of Object.keys(values)) queue.add(key);
    queue.add('healthy');
    await flushMicrotasks();
    assert.deepEqual(done, ['healthy'], 'the worker went on after every failure');
    for (const key of Object.keys(values)) assert.equal(queue.numRequeues(key), 1, `${key} requeued`);
    const errors = lines.filter((l) => l.includes('Error syncing PVC'));
    assert.equal(errors.length, Object.keys(values).length, lines.join('\n'));
    if (format === 'json') for (const line of lines) JSON.parse(line);
    controller.abort();
    await running;
  });
}
