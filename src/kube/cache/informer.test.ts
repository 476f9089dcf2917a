import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeApiWithClient, type FakeApiServer } from '../../../test/fakes/fake-apiserver.js';
import { eventually } from '../../../test/support/eventually.js';
import { pvc } from '../../../test/support/builders.js';
import { createLogger } from '../../observability/log/logger.js';
import { Informer } from './informer.js';
import type { KubeObject, Pvc } from '../../model/objects.js';
import { objectKey } from './keys.js';
import { Resources } from '../api/resources.js';

const PVCS = 'v1/persistentvolumeclaims';

/** Lines of the informer's log carrying this message. */
const linesOf = (lines: string[], message: string) => lines.filter((l) => l.includes(`"${message}"`));

interface Setup {
  server: FakeApiServer;
  informer: Informer;
  log: string[];
  /** The informer's own log lines (verbosity 2). */
  lines: string[];
  stop: () => void;
}

async function setup(
  t: { after: (fn: () => unknown) => void },
  opts: Partial<ConstructorParameters<typeof Informer>[0]> = {},
  before?: (s: FakeApiServer) => void,
): Promise<Setup> {
  const { server, client } = await fakeApiWithClient(t, before);
  const lines: string[] = [];
  const informer = new Informer({
    listWatcher: client.listWatcher(Resources.persistentVolumeClaims),
    log: createLogger({ verbosity: 2, format: 'text', write: (l) => lines.push(l) }),
    pageSize: 2,
    backoff: { initialMs: 10, maxMs: 50 },
    // These tests exercise the list path; the watch-list path has its own tests below.
    watchList: false,
    ...opts,
  });
  const log: string[] = [];
  informer.addEventHandler({
    add: (o) => log.push(`add ${objectKey(o)}`),
    update: (a, b) => log.push(`update ${objectKey(b)} ${a.metadata?.resourceVersion}->${b.metadata?.resourceVersion}`),
    delete: (o) => log.push(`delete ${objectKey(o)}`),
  });
  const ctl = new AbortController();
  const running = informer.run(ctl.signal);
  const stop = () => ctl.abort();
  t.after(async () => {
    ctl.abort();
    await running;
  });
  return { server, informer, log, lines, stop };
}

test('paginated initial list fills the store, sets kind/apiVersion on list items, and syncs', async (t) => {
  const { server, informer, log } = await setup(t, {}, (s) => {
    for (const n of ['a', 'b', 'c', 'd', 'e']) s.put(PVCS, pvc({ name: n }));
  });
  await informer.waitForSync(AbortSignal.timeout(5000));
  assert.equal(informer.hasSynced(), true);
  assert.deepEqual(informer.store.keys().sort(), ['ns/a', 'ns/b', 'ns/c', 'ns/d', 'ns/e']);
  assert.equal(informer.store.get('ns/a')?.kind, 'PersistentVolumeClaim');
  assert.equal(informer.store.get('ns/a')?.apiVersion, 'v1');
  assert.deepEqual(log.sort(), ['add ns/a', 'add ns/b', 'add ns/c', 'add ns/d', 'add ns/e']);
  const lists = server.listRequests();
  assert.equal(lists.length, 3, 'five objects in pages of two');
  assert.equal(lists[0]?.query.get('limit'), '2');
  assert.ok(lists[1]?.query.get('continue'));
});

test('watch uses bookmarks, a 5–10 min server timeout and the list resourceVersion; sees add/update/delete', async (t) => {
  const { server, informer, log } = await setup(t, {}, (s) => s.put(PVCS, pvc({ name: 'a' })));
  await informer.waitForSync(AbortSignal.timeout(5000));
  const listRv = server.resourceVersion;
  await eventually('watch open', () => server.openWatches === 1);
  const w = server.watchRequests()[0]!;
  assert.equal(w.query.get('allowWatchBookmarks'), 'true');
  assert.equal(w.query.get('resourceVersion'), listRv);
  const timeout = Number(w.query.get('timeoutSeconds'));
  assert.ok(timeout >= 300 && timeout <= 600, `timeoutSeconds ${timeout}`);

  log.length = 0;
  server.put(PVCS, pvc({ name: 'b' }));
  server.put(PVCS, pvc({ name: 'a', request: '2Gi' }));
  server.remove(PVCS, 'ns', 'b');
  await eventually('three events', () => log.length === 3);
  assert.match(log[0]!, /^add ns\/b/);
  assert.match(log[1]!, /^update ns\/a \d+->\d+/);
  assert.equal(log[2], 'delete ns/b');
  assert.equal(informer.resourceVersion, server.resourceVersion);
  assert.equal((informer.store.get('ns/a') as Pvc | undefined)?.spec.resources?.requests?.['storage'], '2Gi');
});

test('a dropped watch resumes from the last resourceVersion without relisting', async (t) => {
  const { server, informer, log } = await setup(t, {}, (s) => s.put(PVCS, pvc({ name: 'a' })));
  await informer.waitForSync(AbortSignal.timeout(5000));
  await eventually('watch open', () => server.openWatches === 1);
  server.put(PVCS, pvc({ name: 'b' }));
  await eventually('add b', () => log.includes('add ns/b'));
  const rvAfterB = server.resourceVersion;
  server.dropWatches();
  server.put(PVCS, pvc({ name: 'c' })); // happens while disconnected
  await eventually('add c', () => log.includes('add ns/c'));
  assert.equal(server.listRequests().length, 1, 'no relist');
  assert.equal(server.watchRequests()[1]?.query.get('resourceVersion'), rvAfterB);
});

for (const mode of ['http', 'event'] as const) {
  test(`410 Gone as ${mode === 'http' ? 'HTTP status' : 'ERROR event'} relists; objects deleted meanwhile fire delete`, async (t) => {
    const { server, informer, log, lines } = await setup(t, {}, (s) => {
      s.put(PVCS, pvc({ name: 'a' }));
      s.put(PVCS, pvc({ name: 'b' }));
    });
    server.goneMode = mode;
    await informer.waitForSync(AbortSignal.timeout(5000));
    await eventually('watch open', () => server.openWatches === 1);
    // Cut the watch, then change state and compact while we're away (all synchronous, so the
    // informer can't reconnect in between): resuming gets 410.
    server.dropWatches();
    server.remove(PVCS, 'ns', 'b');
    server.put(PVCS, pvc({ name: 'c' }));
    server.compact();
    log.length = 0;
    await eventually('relist', () => log.includes('add ns/c'), 5000);
    assert.equal(linesOf(lines, 'Watch resourceVersion too old, relisting').length, 1);
    assert.equal(server.listRequests().length, 2);
    assert.deepEqual(informer.store.keys().sort(), ['ns/a', 'ns/c']);
    assert.ok(log.includes('delete ns/b'), log.join(','));
    assert.ok(log.includes('add ns/c'), log.join(','));
    assert.ok(
      log.some((l) => l.startsWith('update ns/a')),
      'surviving objects get update(old,new) after a relist',
    );
  });
}

test('ERROR 410 on an open watch relists', async (t) => {
  const { server, informer, lines } = await setup(t, {}, (s) => s.put(PVCS, pvc({ name: 'a' })));
  await informer.waitForSync(AbortSignal.timeout(5000));
  await eventually('watch open', () => server.openWatches === 1);
  server.sendGoneToWatches();
  await eventually('relist', () => server.listRequests().length === 2);
  assert.equal(linesOf(lines, 'Watch resourceVersion too old, relisting').length, 1);
});

test('bookmarks advance the resourceVersion used to resume', async (t) => {
  const { server, informer } = await setup(t, {}, (s) => s.put(PVCS, pvc({ name: 'a' })));
  await informer.waitForSync(AbortSignal.timeout(5000));
  await eventually('watch open', () => server.openWatches === 1);
  server.put('v1/configmaps', { kind: 'ConfigMap', metadata: { name: 'x', namespace: 'ns' } }); // moves the global RV
  server.bookmark();
  await eventually('rv from bookmark', () => informer.resourceVersion === server.resourceVersion);
  server.dropWatches();
  await eventually('rewatch', () => server.watchRequests().length === 2);
  assert.equal(server.watchRequests()[1]?.query.get('resourceVersion'), server.resourceVersion);
});

test('the inactivity watchdog restarts a silent watch', async (t) => {
  const { server, informer, log, lines } = await setup(t, { inactivityTimeoutMs: 200 }, (s) => {
    s.hangWatches = true;
    s.put(PVCS, pvc({ name: 'a' }));
  });
  await informer.waitForSync(AbortSignal.timeout(5000));
  server.put(PVCS, pvc({ name: 'b' })); // the hanging watch never delivers this
  // The watchdog gave up on the silent watch: the informer waited the whole inactivity timeout without b.
  await eventually('watchdog restart', () => linesOf(lines, 'Watch silent too long, restarting it').length >= 1, 3000);
  assert.ok(!log.includes('add ns/b'));
  server.hangWatches = false;
  await eventually('watchdog restart delivers b', () => log.includes('add ns/b'), 3000);
  assert.ok(linesOf(lines, 'Watch silent too long, restarting it').length >= 1);
  assert.equal(server.listRequests().length, 1, 'resumed, not relisted');
});

test('list errors back off and recover; hasSynced stays false until a list succeeds', async (t) => {
  // Lists fail until three have failed and the test has looked; then the server recovers.
  let failing = true;
  const { informer, lines } = await setup(t, {}, (s) => {
    s.put(PVCS, pvc({ name: 'a' }));
    s.failNext({ status: 500, times: Infinity, match: (r) => failing && r.query.get('watch') !== 'true' });
  });
  await eventually('three lists failed', () => linesOf(lines, 'List/watch failed, retrying').length >= 3);
  assert.equal(informer.hasSynced(), false);
  failing = false;
  await informer.waitForSync(AbortSignal.timeout(5000));
  assert.ok(linesOf(lines, 'List/watch failed, retrying').length >= 3);
  assert.deepEqual(informer.store.keys(), ['ns/a']);
});

test('a throwing handler is logged and does not stop other handlers or the informer', async (t) => {
  const { server, informer, log } = await setup(t, {}, () => {});
  informer.addEventHandler({
    add: () => {
      throw new Error('boom');
    },
  });
  await informer.waitForSync(AbortSignal.timeout(5000));
  server.put(PVCS, pvc({ name: 'a' }));
  server.put(PVCS, pvc({ name: 'b' }));
  await eventually('both adds', () => log.includes('add ns/a') && log.includes('add ns/b'));
});

test('transform keeps only chosen fields and can filter objects out; writeBack goes through it', async (t) => {
  const transform = (o: KubeObject) =>
    o.metadata?.labels?.['skip']
      ? undefined
      : { metadata: { name: o.metadata?.name ?? '', namespace: o.metadata?.namespace, resourceVersion: o.metadata?.resourceVersion } };
  const { server, informer, log } = await setup(t, { transform }, (s) => {
    s.put(PVCS, pvc({ name: 'a' }));
    s.put(PVCS, pvc({ name: 'skipme', labels: { skip: 'y' } }));
  });
  await informer.waitForSync(AbortSignal.timeout(5000));
  assert.deepEqual(informer.store.keys(), ['ns/a']);
  assert.equal(informer.store.get('ns/a')?.spec, undefined);
  // An object that starts matching the filter disappears with a delete.
  server.put(PVCS, pvc({ name: 'a', labels: { skip: 'y' } }));
  await eventually('filtered out', () => log.includes('delete ns/a'));
  assert.equal(informer.store.writeBack(pvc({ name: 'z', resourceVersion: '5' })), true);
  assert.equal(informer.store.get('ns/z')?.spec, undefined);
});

test('resync calls update(obj, obj) for every cached object', async (t) => {
  const { informer, log } = await setup(t, { resyncPeriodMs: 100 }, (s) => {
    s.put(PVCS, pvc({ name: 'a' }));
    s.put(PVCS, pvc({ name: 'b' }));
  });
  await informer.waitForSync(AbortSignal.timeout(5000));
  log.length = 0;
  await eventually('two resyncs', () => log.filter((l) => l.startsWith('update ns/a')).length >= 2, 3000);
  const line = log.find((l) => l.startsWith('update ns/a'))!;
  const [, rvs] = line.split(' ').slice(1);
  const [oldRv, newRv] = rvs!.split('->');
  assert.equal(oldRv, newRv);
});

test('label selector is sent on list and watch', async (t) => {
  const { server, informer } = await setup(t, { labelSelector: 'app=x' }, (s) => {
    s.put(PVCS, pvc({ name: 'a', labels: { app: 'x' } }));
    s.put(PVCS, pvc({ name: 'b' }));
  });
  await informer.waitForSync(AbortSignal.timeout(5000));
  assert.deepEqual(informer.store.keys(), ['ns/a']);
  await eventually('watch open', () => server.openWatches === 1);
  assert.equal(server.watchRequests()[0]?.query.get('labelSelector'), 'app=x');
});

test('waitForSync rejects when its signal aborts first; run resolves on abort', async (t) => {
  const { informer, stop } = await setup(t, {}, (s) => {
    s.listDelayMs = 2000;
  });
  await assert.rejects(informer.waitForSync(AbortSignal.timeout(50)));
  stop();
});

test('watch-list: the initial state arrives in one streamed watch, no list; changes continue on the same stream', async (t) => {
  const { server, informer, log } = await setup(t, { watchList: true }, (s) => {
    s.watchList = 'supported';
    for (const n of ['a', 'b', 'c']) s.put(PVCS, pvc({ name: n }));
  });
  await informer.waitForSync(AbortSignal.timeout(5000));
  assert.deepEqual(informer.store.keys().sort(), ['ns/a', 'ns/b', 'ns/c']);
  assert.equal(server.listRequests().length, 0);
  const [w] = server.watchRequests();
  assert.equal(w?.query.get('sendInitialEvents'), 'true');
  assert.equal(w?.query.get('resourceVersionMatch'), 'NotOlderThan');
  assert.equal(w?.query.get('allowWatchBookmarks'), 'true');
  assert.deepEqual(log.sort(), ['add ns/a', 'add ns/b', 'add ns/c']);
  assert.equal(informer.resourceVersion, server.resourceVersion, "synced at the bookmark's resourceVersion");

  server.put(PVCS, pvc({ name: 'd' }));
  await eventually('d seen', () => informer.store.get('ns/d') !== undefined);
  assert.equal(server.watchRequests().length, 1, 'the same stream carries the changes');
});

test('watch-list refused by the server: falls back to paginated lists for good', async (t) => {
  const { server, informer } = await setup(t, { watchList: true }, (s) => {
    s.watchList = 'rejected';
    for (const n of ['a', 'b', 'c']) s.put(PVCS, pvc({ name: n }));
  });
  await informer.waitForSync(AbortSignal.timeout(5000));
  assert.deepEqual(informer.store.keys().sort(), ['ns/a', 'ns/b', 'ns/c']);
  assert.equal(server.listRequests().length, 2, 'three objects in pages of two');
  await eventually('watch open', () => server.openWatches === 1);
  const watches = server.watchRequests();
  assert.equal(watches[0]?.query.get('sendInitialEvents'), 'true');
  assert.equal(watches.at(-1)?.query.get('sendInitialEvents'), null);
});

test('watch-list answered 403 (an API server still filling its RBAC cache): retried as a watch-list, not given up for good', async (t) => {
  const { server, informer } = await setup(t, { watchList: true }, (s) => {
    s.watchList = 'supported';
    s.put(PVCS, pvc({ name: 'a' }));
    s.failNext({ status: 403, reason: 'Forbidden', match: (r) => r.query.get('sendInitialEvents') === 'true' });
  });
  await informer.waitForSync(AbortSignal.timeout(5000));
  assert.deepEqual(informer.store.keys(), ['ns/a']);
  assert.equal(server.listRequests().length, 0, 'no fallback to paginated lists');
  const watches = server.watchRequests();
  assert.equal(watches.length, 2);
  assert.ok(
    watches.every((w) => w.query.get('sendInitialEvents') === 'true'),
    'both attempts are watch-lists',
  );
});

test('a watch-list stream cut after its initial state resumes from the last resourceVersion, without streaming the state again', async (t) => {
  const { server, informer, log } = await setup(t, { watchList: true }, (s) => {
    s.watchList = 'supported';
    for (const n of ['a', 'b']) s.put(PVCS, pvc({ name: n }));
  });
  await informer.waitForSync(AbortSignal.timeout(5000));
  server.put(PVCS, pvc({ name: 'c' }));
  await eventually('c seen', () => informer.store.get('ns/c') !== undefined);
  const rvAfterC = server.resourceVersion;
  server.dropWatches();
  server.put(PVCS, pvc({ name: 'd' })); // while disconnected
  await eventually('d seen', () => log.includes('add ns/d'));
  const watches = server.watchRequests();
  assert.equal(watches.length, 2);
  assert.equal(watches[1]?.query.get('sendInitialEvents'), null, 'a plain watch');
  assert.equal(watches[1]?.query.get('resourceVersion'), rvAfterC);
  assert.equal(server.listRequests().length, 0);
});
