import { test } from 'node:test';
import assert from 'node:assert/strict';
import { settleWithin } from './settle-within.js';

test('settleWithin: settled work, failed work, and work that outlives the bound', async () => {
  assert.equal(await settleWithin(Promise.resolve(), 1000), 'settled');
  assert.equal(await settleWithin(Promise.reject(new Error('x')), 1000), 'settled');
  assert.equal(await settleWithin(new Promise(() => {}), 10), 'timedOut');
});
