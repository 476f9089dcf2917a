import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DelayingQueue } from './delaying-queue.js';
import { createMetrics } from '../observability/metrics.js';
import { FakeClock } from '../../test/fakes/fake-clock.js';

test('addAfter adds the key once its time has come', () => {
  const clock = new FakeClock();
  const q = new DelayingQueue<string>({ clock });
  q.addAfter('a', 1000);
  assert.equal(q.len(), 0);
  clock.advance(999);
  assert.equal(q.len(), 0);
  clock.advance(1);
  assert.equal(q.len(), 1);
  assert.equal(q.waitingCount(), 0);
});

test('for a key waiting twice the earlier time wins', () => {
  const table: Array<{ delays: number[]; readyAfterMs: number }> = [
    { delays: [1000, 500], readyAfterMs: 500 },
    { delays: [500, 1000], readyAfterMs: 500 },
    { delays: [300, 300], readyAfterMs: 300 },
  ];
  for (const { delays, readyAfterMs } of table) {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    for (const ms of delays) q.addAfter('k', ms);
    assert.equal(q.waitingCount(), 1);
    clock.advance(readyAfterMs - 1);
    assert.equal(q.len(), 0, String(delays));
    clock.advance(1);
    assert.equal(q.len(), 1, String(delays));
    clock.advance(5000);
    assert.equal(q.len(), 1, 'added once');
  }
});

test('zero or negative delay adds at once; delays fire in time order', async () => {
  const clock = new FakeClock();
  const q = new DelayingQueue<string>({ clock });
  q.addAfter('now', 0);
  q.addAfter('neg', -5);
  q.addAfter('late', 200);
  q.addAfter('early', 100);
  clock.advance(300);
  const keys = [];
  while (q.len() > 0) keys.push(await q.get());
  assert.deepEqual(keys, ['now', 'neg', 'early', 'late']);
});

test('shutdown cancels waiting keys; addAfter after shutdown does nothing', () => {
  const clock = new FakeClock();
  const q = new DelayingQueue<string>({ clock });
  q.addAfter('a', 100);
  q.shutDown();
  assert.equal(clock.pendingTimers, 0);
  q.addAfter('b', 100);
  clock.advance(1000);
  assert.equal(q.len(), 0);
});

test('each addAfter counts in workqueue_retries_total', async () => {
  const clock = new FakeClock();
  const metrics = createMetrics();
  const q = new DelayingQueue<string>({ clock, name: 'q', metrics: metrics.workqueue });
  q.addAfter('a', 10);
  q.addAfter('a', 0);
  const data = await metrics.registry.getSingleMetric('workqueue_retries_total')?.get();
  assert.equal(data?.values[0]?.value, 2);
  q.shutDown();
});
