import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ItemExponentialFailureRateLimiter, RateLimitingQueue } from './rate-limiters.js';
import { FakeClock } from '../../test/fakes/fake-clock.js';

test('per-item exponential: base × 2^failures, capped, per key, reset by forget', () => {
  const limiter = new ItemExponentialFailureRateLimiter<string>({ baseDelayMs: 1000, maxDelayMs: 300_000 });
  const delays = Array.from({ length: 11 }, () => limiter.when('a'));
  assert.deepEqual(delays, [1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000]);
  assert.equal(limiter.numRequeues('a'), 11);
  assert.equal(limiter.when('b'), 1000, 'keys are independent');
  limiter.forget('a');
  assert.equal(limiter.numRequeues('a'), 0);
  assert.equal(limiter.when('a'), 1000);
});

test('per-item exponential does not overflow after many failures', () => {
  const limiter = new ItemExponentialFailureRateLimiter<string>({ baseDelayMs: 5, maxDelayMs: 1_000_000 });
  let last = 0;
  for (let i = 0; i < 2000; i++) last = limiter.when('k');
  assert.equal(last, 1_000_000);
});

test('rate-limiting queue: addRateLimited waits the limiter delay; forget resets', () => {
  const clock = new FakeClock();
  const q = new RateLimitingQueue<string>({ clock, rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: 100, maxDelayMs: 1000 }) });
  q.addRateLimited('a');
  assert.equal(q.numRequeues('a'), 1);
  clock.advance(99);
  assert.equal(q.len(), 0);
  clock.advance(1);
  assert.equal(q.len(), 1);
  q.addRateLimited('b');
  q.addRateLimited('b');
  assert.equal(q.numRequeues('b'), 2);
  q.forget('b');
  assert.equal(q.numRequeues('b'), 0);
  q.shutDown();
});
