import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeApiServer } from '../../test/fakes/fake-apiserver.js';
import { createLogger, silentLogger } from '../observability/logger.js';
import { HttpKubeClient } from './client.js';
import { ApiEventRecorder, EventType } from './events.js';

const EVENTS = 'v1/events';
const pvc = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', metadata: { name: 'data', namespace: 'ns1', uid: 'u-1', resourceVersion: '7' } };

async function setup(t: { after: (fn: () => unknown) => void }, now: () => number) {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  const client = new HttpKubeClient({ kubeConfig: server.kubeConfig(), qps: 0, burst: 1 });
  t.after(() => client.close());
  const recorder = new ApiEventRecorder({ client, component: 'external-resizer hostpath.csi.k8s.io', host: 'node-a', log: silentLogger, now });
  t.after(() => recorder.close());
  return { server, recorder };
}

test('creates a core/v1 Event in the object namespace with the reference, source and timestamps', async (t) => {
  const { server, recorder } = await setup(t, () => Date.parse('2026-01-02T03:04:05.678Z'));
  recorder.event(pvc, EventType.Normal, 'Resizing', 'External resizer is resizing volume pv-1');
  await recorder.flush();
  const [ev] = server.list(EVENTS);
  assert.ok(ev);
  assert.equal(ev.metadata.namespace, 'ns1');
  assert.match(ev.metadata.name, /^data\.[0-9a-f]+$/);
  assert.deepEqual(ev.involvedObject, { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'ns1', name: 'data', uid: 'u-1', resourceVersion: '7' });
  assert.equal(ev.reason, 'Resizing');
  assert.equal(ev.type, 'Normal');
  assert.equal(ev.count, 1);
  assert.deepEqual(ev.source, { component: 'external-resizer hostpath.csi.k8s.io', host: 'node-a' });
  assert.equal(ev.firstTimestamp, '2026-01-02T03:04:05Z');
  assert.equal(ev.lastTimestamp, '2026-01-02T03:04:05Z');
  assert.equal(server.requests.find((r) => r.method === 'POST')?.contentType, 'application/json');
});

test('the same event within 10 minutes patches count and lastTimestamp; after that, a new Event', async (t) => {
  let now = Date.parse('2026-01-02T03:00:00Z');
  const { server, recorder } = await setup(t, () => now);
  recorder.event(pvc, EventType.Warning, 'VolumeResizeFailed', 'boom');
  now += 60_000;
  recorder.event(pvc, EventType.Warning, 'VolumeResizeFailed', 'boom');
  now += 60_000;
  recorder.event(pvc, EventType.Warning, 'VolumeResizeFailed', 'boom');
  recorder.event(pvc, EventType.Warning, 'VolumeResizeFailed', 'other message');
  await recorder.flush();
  let events = server.list(EVENTS);
  assert.equal(events.length, 2);
  const boom = events.find((e) => e.message === 'boom')!;
  assert.equal(boom.count, 3);
  assert.equal(boom.firstTimestamp, '2026-01-02T03:00:00Z');
  assert.equal(boom.lastTimestamp, '2026-01-02T03:02:00Z');
  const patch = server.requests.find((r) => r.method === 'PATCH')!;
  assert.equal(patch.contentType, 'application/strategic-merge-patch+json');

  now += 11 * 60_000;
  recorder.event(pvc, EventType.Warning, 'VolumeResizeFailed', 'boom');
  await recorder.flush();
  events = server.list(EVENTS);
  assert.equal(events.length, 3);
});

test('an aggregated Event deleted meanwhile is created again', async (t) => {
  let now = Date.parse('2026-01-02T03:00:00Z');
  const { server, recorder } = await setup(t, () => now);
  recorder.event(pvc, EventType.Normal, 'Resizing', 'x');
  await recorder.flush();
  const [first] = server.list(EVENTS);
  server.remove(EVENTS, 'ns1', first!.metadata.name);
  now += 1000;
  recorder.event(pvc, EventType.Normal, 'Resizing', 'x');
  await recorder.flush();
  assert.equal(server.list(EVENTS).length, 1);
  assert.equal(server.list(EVENTS)[0]!.count, 1);
});

test('never blocks or throws: API errors are logged, the queue is bounded', async (t) => {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  const client = new HttpKubeClient({ kubeConfig: server.kubeConfig(), qps: 0, burst: 1 });
  t.after(() => client.close());
  const warnings: string[] = [];
  const log = createLogger({ verbosity: 0, format: 'text', write: (line) => { if (line.startsWith('W')) warnings.push(line); } });
  const recorder = new ApiEventRecorder({ client, component: 'c', log, maxQueue: 3 });
  t.after(() => recorder.close());
  server.failNext({ status: 403, reason: 'Forbidden', times: 100 });
  for (let i = 0; i < 10; i++) recorder.event(pvc, EventType.Normal, 'R', `m${i}`);
  assert.ok(recorder.dropped >= 6, `dropped ${recorder.dropped}`);
  await recorder.flush();
  assert.ok(warnings.length >= 1);
  assert.equal(server.list(EVENTS).length, 0);
});
