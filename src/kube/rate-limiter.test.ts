import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TokenBucket } from './rate-limiter.js';

test('burst is available at once, then tokens arrive at qps', () => {
  let now = 0;
  const b = new TokenBucket({ qps: 5, burst: 10, now: () => now });
  for (let i = 0; i < 10; i++) assert.equal(b.tryTake(), true);
  assert.equal(b.tryTake(), false);
  now += 200; // one token at 5 qps
  assert.equal(b.tryTake(), true);
  assert.equal(b.tryTake(), false);
});

test('take() waits for a reserved token, in order', async () => {
  const b = new TokenBucket({ qps: 50, burst: 1 });
  const start = performance.now();
  await b.take(AbortSignal.timeout(1000));
  await b.take(AbortSignal.timeout(1000));
  await b.take(AbortSignal.timeout(1000));
  const elapsed = performance.now() - start;
  assert.ok(elapsed >= 35, `two waits of 20 ms, took ${elapsed}`);
});

test('an aborted waiter rejects and hands its reservation back', async () => {
  let now = 0;
  const b = new TokenBucket({ qps: 1, burst: 1, now: () => now });
  await b.take(AbortSignal.timeout(100));
  const ctl = new AbortController();
  const waiting = b.take(ctl.signal);
  ctl.abort(new Error('stop'));
  await assert.rejects(waiting, /stop/);
  now += 1000;
  assert.equal(b.tryTake(), true, 'the token is not lost to the aborted waiter');
});

test('qps 0 means no limit', async () => {
  const b = new TokenBucket({ qps: 0, burst: 1 });
  for (let i = 0; i < 100; i++) await b.take(AbortSignal.timeout(100));
});
