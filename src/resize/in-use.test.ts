import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClaimUsage, PodClaimUsage, toPodClaimUsage } from './in-use.js';
import { podHandlers } from './handlers.js';
import { Informer } from '../kube/cache/informer.js';
import { objectKey } from '../kube/cache/keys.js';
import { Resources } from '../kube/api/resources.js';
import { createLogger } from '../observability/log/logger.js';
import { fakeApiWithClient } from '../../test/fakes/fake-apiserver.js';
import { eventually } from '../../test/support/eventually.js';
import { pod } from '../../test/support/builders.js';

// A running pod ns/app; it also mounts a ConfigMap, which is no claim.
const app = { name: 'app', uid: 'u1', resourceVersion: '1', otherVolumes: [{ name: 'cfg', configMap: { name: 'x' } }], phase: 'Running' };

const transformRows: { name: string; pod: ReturnType<typeof pod>; expect: { key: string; claims: string | string[] } | undefined }[] = [
  { name: 'one claim: a single string', pod: pod({ ...app, claims: ['a'] }), expect: { key: 'ns/app', claims: 'ns/a' } },
  { name: 'two claims: an array', pod: pod({ ...app, claims: ['a', 'b'] }), expect: { key: 'ns/app', claims: ['ns/a', 'ns/b'] } },
  { name: 'pending (no phase yet) uses its claims', pod: pod({ ...app, phase: undefined, claims: ['a'] }), expect: { key: 'ns/app', claims: 'ns/a' } },
  { name: 'no claim: not cached', pod: pod({ ...app, claims: [] }), expect: undefined },
  { name: 'Succeeded: not cached', pod: pod({ ...app, claims: ['a'], phase: 'Succeeded' }), expect: undefined },
  { name: 'Failed: not cached', pod: pod({ ...app, claims: ['a'], phase: 'Failed' }), expect: undefined },
];

for (const row of transformRows) {
  test(`transform: ${row.name}`, () => {
    const record = toPodClaimUsage(row.pod, objectKey(row.pod));
    assert.deepEqual(record === undefined ? undefined : { key: record.key, claims: record.claims }, row.expect);
    // The informer refuses a record whose key differs from its object's.
    if (record) assert.equal(objectKey(record), 'ns/app');
  });
}

test('transform interns claim keys through the given function', () => {
  const seen: string[] = [];
  const record = toPodClaimUsage(pod({ ...app, claims: ['a', 'b'] }), 'ns/app', (k) => {
    seen.push(k);
    return `interned ${k}`;
  });
  assert.deepEqual(seen, ['ns/a', 'ns/b']);
  assert.deepEqual(record?.claims, ['interned ns/a', 'interned ns/b']);
});

test('a record keeps its key and makes metadata from it', () => {
  assert.deepEqual(new PodClaimUsage('ns/app', 'ns/a').metadata, { namespace: 'ns', name: 'app' });
  assert.deepEqual(new PodClaimUsage('app', 'a').metadata, { name: 'app' });
});

test('a claim is in use while one of the pods recorded for it is', () => {
  const usage = new ClaimUsage();
  const p1 = new PodClaimUsage('ns/p1', 'ns/a');
  const p2 = new PodClaimUsage('ns/p2', ['ns/a', 'ns/b']);
  const p3 = new PodClaimUsage('ns/p3', 'ns/a');
  usage.add(p1);
  usage.add(p2);
  usage.add(p3);
  usage.add(p3); // twice is once
  assert.deepEqual([usage.isInUse('ns/a'), usage.isInUse('ns/b'), usage.isInUse('other/a')], [true, true, false]);
  usage.remove(p2);
  assert.deepEqual([usage.isInUse('ns/a'), usage.isInUse('ns/b')], [true, false]);
  usage.remove(p3);
  usage.remove(p3); // removing what is not recorded changes nothing
  usage.remove(new PodClaimUsage('ns/never-added', 'ns/a'));
  assert.equal(usage.isInUse('ns/a'), true, 'p1 still uses it');
  usage.remove(p1);
  assert.equal(usage.isInUse('ns/a'), false);
  usage.remove(p1);
  assert.equal(usage.isInUse('ns/a'), false);
});

test('intern returns the key instance the index holds, and the argument for an unknown claim', () => {
  const usage = new ClaimUsage();
  const held = ['ns', 'a'].join('/');
  usage.add(new PodClaimUsage('ns/p1', held));
  const asked = ['ns', 'a'].join('/');
  assert.equal(usage.intern(asked), held);
  assert.equal(usage.intern('ns/b'), 'ns/b');
});

test('through the pod informer: pods that end, are deleted, or are re-created under the same name while the watch was gone', async (t) => {
  const PODS = 'v1/pods';
  const { server, client } = await fakeApiWithClient(t);
  const usage = new ClaimUsage();
  const informer = new Informer<PodClaimUsage>({
    listWatcher: client.listWatcher(Resources.pods),
    log: createLogger({ verbosity: 0, format: 'text', write: () => {} }),
    backoff: { initialMs: 10, maxMs: 50 },
    transform: (obj, key) => toPodClaimUsage(obj, key, (k) => usage.intern(k)),
  });
  informer.addEventHandler(podHandlers(usage));
  server.put(PODS, pod({ name: 'p1', uid: 'u1', claims: ['a'], phase: 'Running' }));
  server.put(PODS, pod({ name: 'p2', uid: 'u2', claims: ['a', 'b'], phase: 'Running' }));
  server.put(PODS, pod({ name: 'plain', uid: 'u3', phase: 'Running' }));
  server.put(PODS, pod({ name: 'done', uid: 'u4', claims: ['c'], phase: 'Succeeded' }));
  const ctl = new AbortController();
  const running = informer.run(ctl.signal);
  t.after(async () => {
    ctl.abort();
    await running;
  });
  await informer.waitForSync(AbortSignal.timeout(5000));
  const inUse = () => ['a', 'b', 'c', 'd'].filter((c) => usage.isInUse(`ns/${c}`)).join(',');
  assert.deepEqual(informer.store.keys().sort(), ['ns/p1', 'ns/p2'], 'only pods that use a claim are cached');
  assert.equal(inUse(), 'a,b');

  server.put(PODS, pod({ name: 'p2', uid: 'u2', claims: ['a', 'b'], phase: 'Failed' }));
  await eventually('p2 ended', () => inUse() === 'a');
  assert.deepEqual(informer.store.keys(), ['ns/p1']);

  // p1 deleted and made again with another claim while no watch ran; the relist sees only the new
  // one under the same key: its old claim must not stay in use.
  await eventually('watch open', () => server.openWatches === 1);
  server.dropWatches();
  server.remove(PODS, 'ns', 'p1');
  server.put(PODS, pod({ name: 'p1', uid: 'u1-again', claims: ['d'], phase: 'Running' }));
  server.compact();
  await eventually('relisted', () => inUse() === 'd');

  server.remove(PODS, 'ns', 'p1');
  await eventually('p1 deleted', () => inUse() === '');
  assert.equal(informer.store.size, 0);
});
