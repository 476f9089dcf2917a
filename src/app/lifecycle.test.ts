import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Lifecycle } from './lifecycle.js';

test('lifecycle: running → draining aborts only the work signal; finish aborts the root signal', async () => {
  const l = new Lifecycle();
  assert.equal(l.state, 'running');
  const begun = l.whenShutdownBegins();
  l.beginShutdown('SIGTERM');
  await begun;
  assert.equal(l.state, 'draining');
  assert.equal(l.workSignal.aborted, true);
  assert.equal(l.rootSignal.aborted, false);
  l.beginShutdown('again'); // no-op
  l.finish();
  l.finish();
  assert.equal(l.state, 'stopped');
  assert.equal(l.rootSignal.aborted, true);
});
