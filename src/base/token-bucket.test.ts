import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { TokenBucket } from './token-bucket.js';

test('burst is available at once, then tokens arrive at qps', () => {
  const clock = new FakeClock();
  const b = new TokenBucket({ qps: 5, burst: 10, clock });
  for (let i = 0; i < 10; i++) assert.equal(b.reserve(), 0);
  clock.advance(200); // one token at 5 qps
  assert.equal(b.reserve(), 0);
  assert.equal(b.reserve(), 200, 'the next one is 200 ms away');
});

test('reserve: burst free, then 1/qps apart, refilled over time', () => {
  const clock = new FakeClock();
  const b = new TokenBucket({ qps: 10, burst: 2, clock });
  assert.deepEqual([b.reserve(), b.reserve(), b.reserve(), b.reserve()], [0, 0, 100, 200]);
  clock.advance(1000);
  assert.equal(b.reserve(), 0);
});

test('tryTake: a token there now is taken; none, or one already reserved by a waiter, is left alone', () => {
  const clock = new FakeClock();
  const b = new TokenBucket({ qps: 10, burst: 2, clock });
  assert.deepEqual([b.tryTake(), b.tryTake(), b.tryTake()], [true, true, false]);
  assert.equal(b.reserve(), 100, 'the failed tryTake took nothing');
  clock.advance(100);
  assert.equal(b.tryTake(), false, "the token that arrived is the waiter's");
  clock.advance(100);
  assert.equal(b.tryTake(), true);
  assert.equal(new TokenBucket({ qps: 0, burst: 1, clock }).tryTake(), true, 'no limit');
});

test('take() waits for a reserved token, in order', async () => {
  const clock = new FakeClock();
  const b = new TokenBucket({ qps: 50, burst: 1, clock });
  const done: number[] = [];
  await b.take(AbortSignal.timeout(1000));
  const second = b.take(AbortSignal.timeout(1000)).then(() => done.push(2));
  const third = b.take(AbortSignal.timeout(1000)).then(() => done.push(3));
  await clock.advanceAsync(19);
  assert.deepEqual(done, [], 'the first wait is 20 ms');
  await clock.advanceAsync(1);
  assert.deepEqual(done, [2]);
  await clock.advanceAsync(19);
  assert.deepEqual(done, [2], 'the second wait is another 20 ms');
  await clock.advanceAsync(1);
  await Promise.all([second, third]);
  assert.deepEqual(done, [2, 3]);
});

test('an aborted waiter rejects and hands its reservation back', async () => {
  const clock = new FakeClock();
  const b = new TokenBucket({ qps: 1, burst: 1, clock });
  await b.take(AbortSignal.timeout(100));
  const ctl = new AbortController();
  const waiting = b.take(ctl.signal);
  ctl.abort(new Error('stop'));
  await assert.rejects(waiting, /stop/);
  assert.equal(clock.pendingTimers, 0, 'the aborted wait left no timer behind');
  clock.advance(1000);
  assert.equal(b.reserve(), 0, 'the token is not lost to the aborted waiter');
});

test('a clock stepping back takes no tokens away', () => {
  let nowMs = 10_000;
  const clock = { now: () => nowMs, setTimer: () => ({ cancel: () => {} }) };
  const b = new TokenBucket({ qps: 1, burst: 1, clock });
  nowMs -= 5000;
  assert.equal(b.reserve(), 0, 'the burst token is still there');
  assert.equal(b.reserve(), 1000, 'and the next one is 1 s away, not 6 s');
});

test('qps 0 means no limit', async () => {
  const b = new TokenBucket({ qps: 0, burst: 1, clock: new FakeClock() });
  for (let i = 0; i < 100; i++) await b.take(AbortSignal.timeout(100));
});
