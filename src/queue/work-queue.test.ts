import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkQueue } from './work-queue.js';
import { createMetrics } from '../observability/metrics.js';
import { FakeClock, flushMicrotasks } from '../../test/fakes/fake-clock.js';

async function metricValue(metrics: ReturnType<typeof createMetrics>, name: string, suffix = ''): Promise<number | undefined> {
  const metric = metrics.registry.getSingleMetric(name);
  const data = await metric?.get();
  const sample = data?.values.find((v) =>
    (v as { metricName?: string }).metricName === undefined ? suffix === '' : (v as { metricName?: string }).metricName === name + suffix,
  );
  return sample?.value;
}

test('a key added many times is queued once', async () => {
  const q = new WorkQueue<string>();
  q.add('a');
  q.add('b');
  q.add('a');
  assert.equal(q.len(), 2);
  assert.equal(await q.get(), 'a');
  assert.equal(await q.get(), 'b');
  assert.equal(q.len(), 0);
});

test('a key re-added while processing is not handed out until done, then runs again', async () => {
  const q = new WorkQueue<string>();
  q.add('a');
  const first = await q.get();
  assert.equal(first, 'a');
  q.add('a');
  q.add('a');
  assert.equal(q.len(), 0, 'processing key is only marked dirty');
  let second: string | undefined;
  void q.get().then((k) => {
    second = k;
  });
  await flushMicrotasks();
  assert.equal(second, undefined, 'no second worker gets the key');
  q.done('a');
  await flushMicrotasks();
  assert.equal(second, 'a');
  q.done('a');
  assert.equal(q.len(), 0);
});

test('get waits for an add; shutDown releases waiters with undefined', async () => {
  const q = new WorkQueue<string>();
  const waiting = q.get();
  q.add('x');
  assert.equal(await waiting, 'x');
  const w1 = q.get();
  const w2 = q.get();
  q.shutDown();
  assert.deepEqual(await Promise.all([w1, w2]), [undefined, undefined]);
  q.add('y');
  assert.equal(q.len(), 0, 'adds after shutdown are ignored');
  assert.equal(q.shuttingDown(), true);
});

test('keys queued before shutDown are still handed out, then undefined', async () => {
  const q = new WorkQueue<string>();
  q.add('a');
  q.add('b');
  q.shutDown();
  assert.equal(await q.get(), 'a');
  assert.equal(await q.get(), 'b');
  assert.equal(await q.get(), undefined);
});

test('metrics: depth, adds, queue and work duration, unfinished work, longest processor', async () => {
  const clock = new FakeClock();
  const metrics = createMetrics();
  const q = new WorkQueue<string>({ name: 'drv-pvc', clock, metrics: metrics.workqueue, metricsUpdatePeriodMs: 500 });
  q.add('a');
  q.add('b');
  q.add('a');
  assert.equal(await metricValue(metrics, 'workqueue_depth'), 2);
  assert.equal(await metricValue(metrics, 'workqueue_adds_total'), 2);
  clock.advance(2000);
  const key = await q.get();
  assert.equal(await metricValue(metrics, 'workqueue_depth'), 1);
  assert.equal(await metricValue(metrics, 'workqueue_queue_duration_seconds', '_sum'), 2);
  clock.advance(3000);
  assert.equal(await metricValue(metrics, 'workqueue_unfinished_work_seconds'), 3);
  assert.equal(await metricValue(metrics, 'workqueue_longest_running_processor_seconds'), 3);
  q.done(key as string);
  assert.equal(await metricValue(metrics, 'workqueue_work_duration_seconds', '_sum'), 3);
  assert.equal(await metricValue(metrics, 'workqueue_work_duration_seconds', '_count'), 1);
  clock.advance(500);
  assert.equal(await metricValue(metrics, 'workqueue_unfinished_work_seconds'), 0);
  assert.equal(clock.pendingTimers, 0, 'an idle queue holds no metrics timer');
  const next = await q.get();
  assert.equal(clock.pendingTimers, 1, 'processing a key starts the updates again');
  clock.advance(1000);
  assert.equal(await metricValue(metrics, 'workqueue_unfinished_work_seconds'), 1);
  q.done(next as string);
  const labels = (await metrics.registry.getSingleMetric('workqueue_depth')?.get())?.values[0]?.labels;
  assert.deepEqual(labels, { name: 'drv-pvc' });
  q.shutDown();
  assert.equal(clock.pendingTimers, 0, 'shutdown stops the metrics timer');
});
