import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, StopPolling } from './eventually.js';

test('eventually returns the first value, retrying through false, undefined and thrown errors', async () => {
  const answers: Array<() => number | false | undefined> = [
    () => false,
    () => undefined,
    () => {
      throw new Error('not yet');
    },
    () => 0,
  ];
  let calls = 0;
  assert.equal(await eventually('a value', () => answers[calls++]!(), 5000, 1), 0);
  assert.equal(calls, 4);
});

test('eventually fails after its bound with what it waited for and the last error, kept as the cause', async () => {
  const cause = new Error('connection refused');
  await assert.rejects(
    eventually(
      'the driver',
      () => {
        throw cause;
      },
      20,
      5,
    ),
    (err: Error) => {
      assert.match(err.message, /^timed out after 20ms waiting for the driver: Error: connection refused$/);
      assert.equal(err.cause, cause);
      return true;
    },
  );
});

test('StopPolling ends the wait at once (the process waited for has exited)', async () => {
  let calls = 0;
  const started = Date.now();
  await assert.rejects(
    eventually(
      'a process that died',
      () => {
        calls++;
        throw new StopPolling('exited (1)');
      },
      60_000,
      1_000,
    ),
    /^StopPolling: exited \(1\)$/,
  );
  assert.equal(calls, 1);
  assert.ok(Date.now() - started < 1_000, 'no interval waited');
});
