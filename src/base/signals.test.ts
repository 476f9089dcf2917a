import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../../test/support/eventually.js';
import { getEventListeners } from 'node:events';
import { abortable, abortReason, linkedSignal, sleep, TimeoutError, AbortError, isAbortError, untilAborted } from './signals.js';

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

test('abortReason is the reason when it is an Error, else an AbortError', () => {
  const withError = new AbortController();
  const reason = new TimeoutError(5);
  withError.abort(reason);
  assert.equal(abortReason(withError.signal), reason);

  const withText = new AbortController();
  withText.abort('not an error');
  assert.ok(abortReason(withText.signal) instanceof AbortError);
});

test('sleep rejects with the abort reason', async () => {
  const controller = new AbortController();
  const pending = sleep(10_000, controller.signal);
  controller.abort(new AbortError('stop'));
  await assert.rejects(pending, (err: unknown) => isAbortError(err));
});

test('untilAborted resolves when the signal aborts, at once when it already has', async () => {
  const controller = new AbortController();
  let resolved = false;
  const waiting = untilAborted(controller.signal).then(() => {
    resolved = true;
  });
  await Promise.resolve();
  assert.equal(resolved, false);
  controller.abort();
  await waiting;
  assert.equal(resolved, true);
  await untilAborted(controller.signal);
});

test('abortable settles as its promise does, or rejects with the reason; no listener outlives it', async () => {
  const root = new AbortController();
  assert.equal(await abortable(Promise.resolve(7), root.signal), 7);
  await assert.rejects(abortable(Promise.reject(new Error('failed')), root.signal), /failed/);
  assert.equal(getEventListeners(root.signal, 'abort').length, 0, 'a long-lived signal keeps no listener');

  const never = new Promise<void>(() => {});
  const waiting = abortable(never, root.signal);
  root.abort(new Error('shutting down'));
  await assert.rejects(waiting, /shutting down/);
  await assert.rejects(abortable(Promise.resolve(1), root.signal), /shutting down/, 'already aborted');
  const plain = new AbortController();
  plain.abort('no error object');
  await assert.rejects(abortable(never, plain.signal), (err: unknown) => isAbortError(err));
});

test('a signal linked to two parents aborts with whichever aborts first and unlinks on dispose', () => {
  const a = new AbortController();
  const b = new AbortController();
  const either = linkedSignal([a.signal, b.signal]);
  b.abort(new Error('b'));
  assert.equal(either.signal.aborted, true);
  assert.equal((either.signal.reason as Error).message, 'b');
  either.dispose();
  assert.equal(getEventListeners(a.signal, 'abort').length, 0, 'dispose unlinks the parent that did not abort');
  const pre = new AbortController();
  pre.abort(new Error('pre'));
  assert.equal(linkedSignal([pre.signal, new AbortController().signal]).signal.aborted, true);
});
