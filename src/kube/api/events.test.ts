import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeApiServer } from '../../../test/fakes/fake-apiserver.js';
import { createLogger, silentLogger } from '../../observability/log/logger.js';
import { HttpKubeClient } from '../wire/http-client.js';
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

test('the same event again patches count, lastTimestamp and message on the existing Event, however much later', async (t) => {
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
  assert.equal(JSON.stringify(patch.body), '{"count":2,"lastTimestamp":"2026-01-02T03:01:00Z","message":"boom"}');

  // client-go's dedup cache has no time limit: an hour later it is still the same Event.
  now += 60 * 60_000;
  recorder.event(pvc, EventType.Warning, 'VolumeResizeFailed', 'boom');
  await recorder.flush();
  events = server.list(EVENTS);
  assert.equal(events.length, 2);
  assert.equal(events.find((e) => e.message === 'boom')!.count, 4);
});

test('the 10th distinct message of one reason within 10 minutes is combined into one Event', async (t) => {
  let now = Date.parse('2026-01-02T03:00:00Z');
  const { server, recorder } = await setup(t, () => now);
  for (let i = 1; i <= 12; i++) {
    recorder.event(pvc, EventType.Warning, 'VolumeResizeFailed', `failure ${i}`);
    now += 1000;
  }
  await recorder.flush();
  const events = server.list(EVENTS);
  assert.equal(events.length, 10, 'nine plain Events and one combined');
  const combined = events.filter((e) => String(e.message).startsWith('(combined from similar events): '));
  assert.equal(combined.length, 1);
  assert.equal(combined[0]!.message, '(combined from similar events): failure 12');
  assert.equal(combined[0]!.count, 3);
});

test('25 events per object and type, then one per 5 minutes; dropped ones still count', async (t) => {
  let now = Date.parse('2026-01-02T03:00:00Z');
  const { server, recorder } = await setup(t, () => now);
  for (let i = 0; i < 30; i++) recorder.event(pvc, EventType.Warning, 'VolumeResizeFailed', 'boom');
  await recorder.flush();
  assert.equal(server.requests.filter((r) => r.method === 'POST' || r.method === 'PATCH').length, 25);
  assert.equal(server.list(EVENTS)[0]!.count, 25);
  // Another type is another bucket.
  recorder.event(pvc, EventType.Normal, 'Resizing', 'x');
  now += 300_000;
  recorder.event(pvc, EventType.Warning, 'VolumeResizeFailed', 'boom');
  await recorder.flush();
  const boom = server.list(EVENTS).find((e) => e.message === 'boom')!;
  assert.equal(boom.count, 31);
  assert.ok(server.list(EVENTS).some((e) => e.reason === 'Resizing'));
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
  // Re-created with its count, as client-go does.
  assert.equal(server.list(EVENTS)[0]!.count, 2);
});

test('never blocks or throws: API errors are logged, the queue is bounded', async (t) => {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  const client = new HttpKubeClient({ kubeConfig: server.kubeConfig(), qps: 0, burst: 1 });
  t.after(() => client.close());
  const warnings: string[] = [];
  const log = createLogger({
    verbosity: 0,
    format: 'text',
    write: (line) => {
      if (line.startsWith('W')) warnings.push(line);
    },
  });
  const recorder = new ApiEventRecorder({ client, component: 'c', log, maxQueue: 3 });
  t.after(() => recorder.close());
  server.failNext({ status: 403, reason: 'Forbidden', times: 100 });
  for (let i = 0; i < 10; i++) recorder.event(pvc, EventType.Normal, 'R', `m${i}`);
  await recorder.flush();
  // Three queued and at most one taken off the queue already: the server is asked for at most four
  // of the ten events, six or more were dropped.
  const attempted = new Set(server.requests.map((r) => (r.body as { message?: unknown } | undefined)?.message).filter((m) => m !== undefined));
  assert.ok(attempted.size >= 1 && attempted.size <= 4, `attempted ${[...attempted].join(',')}`);
  assert.ok(warnings.length >= 1);
  assert.equal(server.list(EVENTS).length, 0);
});

test('writes refused for want of the events rule are said once, then once more when a write is accepted again', async (t) => {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  const client = new HttpKubeClient({ kubeConfig: server.kubeConfig(), qps: 0, burst: 1 });
  t.after(() => client.close());
  const lines: string[] = [];
  const log = createLogger({ verbosity: 0, format: 'text', write: (line) => lines.push(line) });
  const heard: string[] = [];
  const recorder = new ApiEventRecorder({
    client,
    component: 'c',
    log,
    access: { refused: (err) => heard.push(`refused ${err.status}`), allowed: () => heard.push('allowed') },
  });
  t.after(() => recorder.close());
  server.failNext({ status: 403, reason: 'Forbidden', times: 3 });
  for (let i = 0; i < 3; i++) recorder.event(pvc, EventType.Normal, 'R', `refused ${i}`);
  await recorder.flush();
  assert.deepEqual(heard, ['refused 403']);
  recorder.event(pvc, EventType.Normal, 'R', 'accepted');
  await recorder.flush();
  assert.deepEqual(heard, ['refused 403', 'allowed']);
  assert.deepEqual(
    server.list(EVENTS).map((e) => e.message),
    ['accepted'],
  );
  // Only the Event lines: the refusals went to the listener, not to one warning per event.
  assert.deepEqual(
    lines.filter((l) => !l.includes('"Event occurred"')),
    [],
  );
  // Another error is still said at every event.
  server.failNext({ status: 500, reason: 'InternalError', times: 2 });
  recorder.event(pvc, EventType.Normal, 'R', 'broken 1');
  recorder.event(pvc, EventType.Normal, 'R', 'broken 2');
  await recorder.flush();
  assert.equal(lines.filter((l) => l.includes('"Failed to write event"')).length, 2);
  assert.deepEqual(heard, ['refused 403', 'allowed']);
});

test('without a listener, a run of refused writes is one warning', async (t) => {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  const client = new HttpKubeClient({ kubeConfig: server.kubeConfig(), qps: 0, burst: 1 });
  t.after(() => client.close());
  const warnings: string[] = [];
  const log = createLogger({ verbosity: 0, format: 'text', write: (line) => line.startsWith('W') && warnings.push(line) });
  const recorder = new ApiEventRecorder({ client, component: 'c', log });
  t.after(() => recorder.close());
  server.failNext({ status: 403, reason: 'Forbidden', times: 3 });
  for (let i = 0; i < 3; i++) recorder.event(pvc, EventType.Normal, 'R', `m${i}`);
  await recorder.flush();
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /Event writes forbidden, dropping events quietly until they are allowed/);
});
