// Node's mock timers behave like the real ones here: a delay above 2^31-1 ms runs after 1 ms. So
// each test below would fail with a plain setTimeout, and none waits in real time. The mock runs a
// callback at the end of the tick that reached it, so the tests advance in steps that end where the
// long timer's steps end (every timer here starts at mock time 0).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_TIMER_DELAY_MS, setLongTimeout } from './long-timer.js';
import { realClock } from './clock.js';
import { linkedSignal, sleep, TimeoutError } from './signals.js';

const HOUR_MS = 3_600_000;
const H600_MS = 600 * HOUR_MS;

test("the mock timers reproduce Node's overflow: a plain 600h setTimeout runs after 1 ms", (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let fired = 0;
  setTimeout(() => fired++, H600_MS);
  t.mock.timers.tick(1);
  assert.equal(fired, 1, "this Node's mock timers no longer reproduce the overflow, so the tests below cannot catch it");
});

test('setLongTimeout: 600h fires at 600h, not before', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let fired = 0;
  setLongTimeout(() => fired++, H600_MS);
  t.mock.timers.tick(1);
  assert.equal(fired, 0);
  t.mock.timers.tick(MAX_TIMER_DELAY_MS - 1); // one full step
  assert.equal(fired, 0);
  t.mock.timers.tick(H600_MS - MAX_TIMER_DELAY_MS - 1);
  assert.equal(fired, 0, 'one millisecond early');
  t.mock.timers.tick(1);
  assert.equal(fired, 1);
  t.mock.timers.tick(10 * H600_MS);
  assert.equal(fired, 1, 'fires once');
});

test('setLongTimeout: the largest Go duration (2562047h47m16.854775807s) does not fire within a century', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let fired = 0;
  const goMaxMs = Number((2n ** 63n - 1n) / 1_000_000n);
  setLongTimeout(() => fired++, goMaxMs);
  for (let i = 0; i < 100; i++) t.mock.timers.tick(365 * 24 * HOUR_MS);
  assert.equal(fired, 0);
});

test('setLongTimeout: short delays behave like setTimeout; Infinity never fires; negative and NaN fire at once', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const fired: string[] = [];
  setLongTimeout(() => fired.push('10ms'), 10);
  setLongTimeout(() => fired.push('inf'), Infinity);
  setLongTimeout(() => fired.push('neg'), -5);
  setLongTimeout(() => fired.push('nan'), NaN);
  t.mock.timers.tick(0);
  assert.deepEqual(fired.sort(), ['nan', 'neg']);
  t.mock.timers.tick(10);
  assert.deepEqual(fired.sort(), ['10ms', 'nan', 'neg']);
  t.mock.timers.tick(10 * H600_MS);
  assert.equal(fired.includes('inf'), false);
});

test('setLongTimeout: cancel works in the first step, in a later step, and twice', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let fired = 0;
  const first = setLongTimeout(() => fired++, H600_MS);
  first.cancel();
  const later = setLongTimeout(() => fired++, H600_MS);
  t.mock.timers.tick(MAX_TIMER_DELAY_MS + 5);
  later.cancel();
  later.cancel();
  t.mock.timers.tick(2 * H600_MS);
  assert.equal(fired, 0);
});

test('realClock.setTimer honours 600h', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let fired = 0;
  realClock.setTimer(() => fired++, H600_MS);
  advance(t, H600_MS - 1);
  assert.equal(fired, 0);
  t.mock.timers.tick(1);
  assert.equal(fired, 1);
});

test('sleep(600h) resolves at 600h, not before', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let done = false;
  const slept = sleep(H600_MS).then(() => {
    done = true;
  });
  advance(t, H600_MS - 1);
  await flush();
  assert.equal(done, false);
  t.mock.timers.tick(1);
  await slept;
  assert.equal(done, true);
});

test('linkedSignal(parent, 600h) aborts at 600h, not before', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const link = linkedSignal(new AbortController().signal, H600_MS);
  t.after(() => link.dispose());
  advance(t, H600_MS - 1);
  assert.equal(link.signal.aborted, false);
  t.mock.timers.tick(1);
  assert.equal(link.signal.aborted, true);
  assert.ok(link.signal.reason instanceof TimeoutError);
});

/** Ticks in steps of at most MAX_TIMER_DELAY_MS (see the note at the top). */
function advance(t: { mock: { timers: { tick(ms: number): void } } }, ms: number): void {
  for (let left = ms; left > 0; left -= Math.min(left, MAX_TIMER_DELAY_MS)) t.mock.timers.tick(Math.min(left, MAX_TIMER_DELAY_MS));
}

function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
