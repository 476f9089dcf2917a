import { test } from 'node:test';
import assert from 'node:assert/strict';
import { forEachBounded } from './bounded-concurrency.js';

test('forEachBounded: never more than the limit in flight, every item once', async () => {
  let inFlight = 0;
  let most = 0;
  const seen: number[] = [];
  await forEachBounded([...Array(20).keys()], 3, async (item) => {
    inFlight++;
    most = Math.max(most, inFlight);
    await new Promise((r) => setImmediate(r));
    seen.push(item);
    inFlight--;
  });
  assert.equal(most, 3);
  assert.deepEqual(
    seen.sort((a, b) => a - b),
    [...Array(20).keys()],
  );
});

test('forEachBounded: a rejection waits for the others, then is the one reported', async () => {
  const done: number[] = [];
  await assert.rejects(
    forEachBounded([1, 2, 3, 4], 2, async (item) => {
      await new Promise((r) => setImmediate(r));
      if (item === 2) throw new Error('two');
      done.push(item);
    }),
    /two/,
  );
  assert.deepEqual(done.sort(), [1, 3, 4]);
});

test('forEachBounded: no items, no calls; a limit below 1 is refused', async () => {
  await forEachBounded([], 4, async () => assert.fail('called'));
  await assert.rejects(
    forEachBounded([1], 0, async () => {}),
    RangeError,
  );
});
