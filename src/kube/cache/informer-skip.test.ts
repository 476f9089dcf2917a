// One object the key function or the transform can't handle is skipped, logged and counted; it
// never keeps the informer from syncing (list, watch-list) or stalls the watch after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeApiWithClient, type FakeApiServer } from '../../../test/fakes/fake-apiserver.js';
import { eventually } from '../../../test/support/eventually.js';
import { createLogger } from '../../observability/log/logger.js';
import { Informer, type InformerOptions } from './informer.js';
import type { KubeObject } from '../../model/objects.js';
import { objectKey } from './keys.js';
import { Resources } from '../api/resources.js';

const PVCS = 'v1/persistentvolumeclaims';

function pvc(name: unknown, extra: Record<string, unknown> = {}): KubeObject {
  return { kind: 'PersistentVolumeClaim', apiVersion: 'v1', metadata: { name, namespace: 'ns' }, spec: { size: '1Gi' }, ...extra } as KubeObject;
}

/** Throws for objects labelled poison, as a transform meeting a shape it doesn't expect would. */
function pickyTransform(obj: KubeObject): KubeObject {
  if ((obj.spec as { size?: unknown } | undefined)?.size === 'poison') throw new TypeError("Cannot read properties of null (reading 'storage')");
  return obj;
}

/** How many times the informer said a list or watch failed. */
const failures = (logs: string[]) => logs.filter((l) => l.includes('"List/watch failed, retrying"')).length;

async function setup(t: { after: (fn: () => unknown) => void }, opts: Partial<InformerOptions<KubeObject>>, before: (s: FakeApiServer) => void) {
  const { server, client } = await fakeApiWithClient(t, before);
  const logs: string[] = [];
  const skipped: string[] = [];
  const informer = new Informer<KubeObject>({
    listWatcher: client.listWatcher(Resources.persistentVolumeClaims),
    log: createLogger({ verbosity: 0, format: 'text', write: (l) => logs.push(l) }),
    pageSize: 2,
    backoff: { initialMs: 10, maxMs: 50 },
    transform: pickyTransform,
    skippedObjects: { inc: ({ resource }) => skipped.push(resource) },
    ...opts,
  });
  const events: string[] = [];
  informer.addEventHandler({
    add: (o) => events.push(`add ${objectKey(o)}`),
    update: (_a, b) => events.push(`update ${objectKey(b)}`),
    delete: (o) => events.push(`delete ${objectKey(o)}`),
  });
  const ctl = new AbortController();
  const running = informer.run(ctl.signal);
  t.after(async () => {
    ctl.abort();
    await running;
  });
  return { server, informer, logs, skipped, events };
}

const badObjects = (s: FakeApiServer) => {
  s.put(PVCS, pvc('a'));
  s.put(PVCS, pvc('poison', { spec: { size: 'poison' } }));
  s.put(PVCS, pvc(undefined));
  s.put(PVCS, pvc(42));
  s.put(PVCS, pvc('b'));
};

for (const watchList of [false, true]) {
  const path = watchList ? 'watch-list' : 'paginated list';
  test(`${path}: objects without a usable key or that the transform refuses are skipped; the informer syncs with the rest`, async (t) => {
    const { informer, logs, skipped, events } = await setup(t, { watchList }, badObjects);
    await informer.waitForSync(AbortSignal.timeout(5000));
    assert.deepEqual(informer.store.keys().sort(), ['ns/a', 'ns/b']);
    assert.deepEqual(events.sort(), ['add ns/a', 'add ns/b']);
    assert.deepEqual(skipped, ['persistentvolumeclaims', 'persistentvolumeclaims', 'persistentvolumeclaims']);
    assert.equal(failures(logs), 0, 'no list failed');
    const skipLines = logs.filter((l) => l.includes('"Skipping an object the informer cannot handle"'));
    assert.equal(skipLines.length, 3);
    assert.ok(
      skipLines.some((l) => /^E.* err="Cannot read properties of null \(reading 'storage'\)" resource="persistentvolumeclaims" key="ns\/poison"$/.test(l)),
      skipLines.join('\n'),
    );
    assert.ok(
      skipLines.some((l) => / err="object has no usable metadata.name" resource="persistentvolumeclaims" key=null$/.test(l)),
      skipLines.join('\n'),
    );
  });
}

test('watch: a bad object in the stream is skipped and the events after it still arrive, without a relist', async (t) => {
  const { server, informer, logs, skipped, events } = await setup(t, { watchList: false }, (s) => s.put(PVCS, pvc('a')));
  await informer.waitForSync(AbortSignal.timeout(5000));
  await eventually('watch open', () => server.openWatches === 1);
  server.put(PVCS, pvc('poison', { spec: { size: 'poison' } }));
  server.put(PVCS, pvc(7));
  server.put(PVCS, pvc('c'));
  await eventually('c arrives', () => informer.store.get('ns/c') !== undefined);
  assert.equal(informer.store.get('ns/poison'), undefined);
  assert.equal(informer.resourceVersion, server.resourceVersion, 'the resourceVersion moved past the skipped objects');
  assert.deepEqual(skipped, ['persistentvolumeclaims', 'persistentvolumeclaims']);
  assert.equal(server.listRequests().length, 1, 'no relist');
  assert.equal(failures(logs), 0, 'the watch never failed');
  assert.equal(server.watchRequests().length, 1, 'the same watch carried on');
  assert.deepEqual(events, ['add ns/a', 'add ns/c']);
});

test('watch: a known object whose new version the transform refuses leaves the cache (a delete), later events still flow', async (t) => {
  const { server, informer, logs, skipped, events } = await setup(t, { watchList: false }, (s) => s.put(PVCS, pvc('a')));
  await informer.waitForSync(AbortSignal.timeout(5000));
  await eventually('watch open', () => server.openWatches === 1);
  server.put(PVCS, pvc('a', { spec: { size: 'poison' } }));
  server.put(PVCS, pvc('d'));
  await eventually('d arrives', () => informer.store.get('ns/d') !== undefined);
  assert.equal(informer.store.get('ns/a'), undefined, 'no stale copy of a stays cached');
  assert.deepEqual(events, ['add ns/a', 'delete ns/a', 'add ns/d']);
  assert.equal(skipped.length, 1);
  // Once the object is fixed, it is back.
  server.put(PVCS, pvc('a'));
  await eventually('a is back', () => informer.store.get('ns/a') !== undefined);
  assert.equal(failures(logs), 0);
});
