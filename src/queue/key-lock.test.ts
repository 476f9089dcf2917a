import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyLock } from './key-lock.js';

test('holders of one key run one after another; other keys run alongside', async () => {
  const lock = new KeyLock();
  const order: string[] = [];
  let releaseFirst!: () => void;
  const first = lock.withKey('a', async () => {
    order.push('a1 start');
    await new Promise<void>((r) => (releaseFirst = r));
    order.push('a1 end');
  });
  const second = lock.withKey('a', async () => {
    order.push('a2');
  });
  const other = lock.withKey('b', async () => {
    order.push('b');
  });
  await other;
  assert.deepEqual(order, ['a1 start', 'b']);
  releaseFirst();
  await Promise.all([first, second]);
  assert.deepEqual(order, ['a1 start', 'b', 'a1 end', 'a2']);
  assert.equal(lock.heldKeys, 0);
});

test('a throwing holder releases the key', async () => {
  const lock = new KeyLock();
  await assert.rejects(
    lock.withKey('a', async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(await lock.withKey('a', async () => 42), 42);
  assert.equal(lock.heldKeys, 0);
});
