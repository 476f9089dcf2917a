import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../../test/support/eventually.js';
import { linkedSignal, sleep, TimeoutError, AbortError, isAbortError } from './signals.js';

test('a linked signal follows its parent, its own abort and its timeout, and dispose unlinks', async () => {
  const parent = new AbortController();
  const child = linkedSignal(parent.signal);
  parent.abort(new Error('parent'));
  assert.equal(child.signal.aborted, true);
  assert.equal((child.signal.reason as Error).message, 'parent');

  const own = linkedSignal(new AbortController().signal);
  own.abort();
  assert.ok(own.signal.reason instanceof AbortError);

  const timed = linkedSignal(new AbortController().signal, 5);
  await eventually('the timeout', () => timed.signal.aborted, 5000, 5);
  assert.ok(timed.signal.reason instanceof TimeoutError);

  const root = new AbortController();
  const disposed = linkedSignal(root.signal);
  disposed.dispose();
  root.abort();
  assert.equal(disposed.signal.aborted, false, 'a disposed child no longer follows the parent');
});

test('sleep rejects with the abort reason', async () => {
  const controller = new AbortController();
  const pending = sleep(10_000, controller.signal);
  controller.abort(new AbortError('stop'));
  await assert.rejects(pending, (err: unknown) => isAbortError(err));
});
