// The cache side alone, fed by hand as the reflector and the refetcher would feed it: a relist
// replaces the store as DeltaFIFO.Replace does, watch events become store writes and handler calls,
// the transform drops objects (a delete to handlers), a read ahead of the watch is not undone by
// the watch's older versions, and refilter drops what the transform no longer keeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../model/objects.js';
import { createLogger } from '../../observability/log/logger.js';
import { Resources } from '../api/resources.js';
import { CacheApplier } from './applier.js';
import { HandlerProcessor } from './processor.js';

const pvc = (name: string, rv: string, keep = true): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion: rv }, spec: { keep } });

function setup() {
  const calls: string[] = [];
  const relisted: string[][] = [];
  const delivered: string[] = [];
  let keepAll = true;
  const log = createLogger({ verbosity: 0, format: 'text', write: () => {} });
  const processor = new HandlerProcessor<KubeObject>(log, 'persistentvolumeclaims');
  processor.register(
    {
      add: (o) => calls.push(`add ${o.metadata?.name}@${o.metadata?.resourceVersion}`),
      update: (a, b) => calls.push(`update ${a.metadata?.name}@${a.metadata?.resourceVersion}->${b.metadata?.resourceVersion}`),
      delete: (o) => calls.push(`delete ${o.metadata?.name}@${o.metadata?.resourceVersion}`),
    },
    undefined,
  );
  const cache = new CacheApplier<KubeObject>({
    resource: Resources.persistentVolumeClaims,
    transform: (o) => (keepAll && (o.spec as { keep?: boolean } | undefined)?.keep !== false ? o : undefined),
    processor,
    log,
    reads: { delivered: (key, rv) => delivered.push(`${key}@${rv}`), relisted: (keys) => relisted.push([...keys]) },
  });
  return { cache, calls, relisted, delivered, dropAll: () => (keepAll = false) };
}

test('applier: a relist replaces the store (delete the gone, add the new, update the rest) and fills in kind', async () => {
  const { cache, calls } = setup();
  assert.equal(cache.synced, false);
  const synced = cache.waitForSync(AbortSignal.timeout(5_000));
  cache.beginList();
  assert.equal(cache.listing, true);
  cache.listed(pvc('a', '1'));
  cache.listed(pvc('b', '2'));
  cache.replace('5');
  await synced;
  assert.equal(cache.listing, false);
  assert.equal(cache.resourceVersion, '5');
  assert.equal(cache.store.get('ns/a')?.kind, 'PersistentVolumeClaim');
  cache.beginList();
  cache.listed(pvc('b', '2'));
  cache.listed(pvc('c', '6'));
  cache.replace('7');
  assert.deepEqual(calls, ['add a@1', 'add b@2', 'delete a@1', 'update b@2->2', 'add c@6']);
  assert.deepEqual(cache.store.keys().sort(), ['ns/b', 'ns/c']);
});

test('applier: watch events write the store; a version the transform drops is a delete; bookmarks move the resourceVersion', () => {
  const { cache, calls, delivered } = setup();
  cache.beginList();
  cache.replace('1');
  cache.apply({ type: 'ADDED', object: pvc('a', '2') });
  cache.apply({ type: 'MODIFIED', object: pvc('a', '3', false) });
  cache.apply({ type: 'ADDED', object: pvc('b', '4') });
  cache.apply({ type: 'DELETED', object: pvc('b', '5') });
  cache.apply({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } as KubeObject });
  assert.deepEqual(calls, ['add a@2', 'delete a@2', 'add b@4', 'delete b@4']);
  assert.equal(cache.store.size, 0);
  assert.equal(cache.resourceVersion, '9');
  assert.deepEqual(delivered, ['ns/a@2', 'ns/a@3', 'ns/b@4', 'ns/b@5']);
});

test('applier: a read ahead of the watch holds until the watch catches up; a relist hands its keys back to be read again', () => {
  const { cache, calls, relisted } = setup();
  cache.beginList();
  cache.replace('10');
  cache.mergeRead('ns/a', pvc('a', '12'), undefined);
  cache.apply({ type: 'ADDED', object: pvc('a', '11') }); // older than the read: skipped
  assert.equal(cache.store.get('ns/a')?.metadata?.resourceVersion, '12');
  cache.mergeRead('ns/b', pvc('b', '13'), '13'); // the watch already delivered it
  assert.equal(cache.store.get('ns/b'), undefined);
  cache.beginList();
  cache.listed(pvc('a', '12'));
  cache.replace('14');
  assert.deepEqual(relisted, [[], ['ns/a']]);
  assert.deepEqual(calls, ['add a@12', 'update a@12->12']);
});

test('applier: refilter drops what the transform no longer keeps, cached and being listed; objects without a name are skipped', () => {
  const logs: string[] = [];
  const processor = new HandlerProcessor<KubeObject>(createLogger({ verbosity: 0, format: 'text', write: () => {} }), 'persistentvolumeclaims');
  const deleted: string[] = [];
  processor.register({ delete: (o) => deleted.push(o.metadata?.name ?? '') }, undefined);
  let kept = new Set(['a', 'b', 'c']);
  let skipped = 0;
  const cache = new CacheApplier<KubeObject>({
    resource: Resources.persistentVolumeClaims,
    transform: (o) => (kept.has(o.metadata?.name ?? '') ? o : undefined),
    processor,
    log: createLogger({ verbosity: 0, format: 'text', write: (l) => logs.push(l) }),
    skippedObjects: { inc: () => skipped++ },
  });
  cache.beginList();
  cache.listed(pvc('a', '1'));
  cache.listed(pvc('b', '2'));
  cache.listed({ metadata: { namespace: 'ns' } } as KubeObject); // malformed: no name
  cache.replace('3');
  cache.beginList();
  cache.listed(pvc('a', '1'));
  cache.listed(pvc('c', '4'));
  kept = new Set(['b']);
  cache.refilter(() => true);
  assert.deepEqual(deleted, ['a']);
  cache.replace('5');
  assert.deepEqual(cache.store.keys(), []);
  assert.equal(skipped, 1);
  assert.match(logs.join('\n'), /"Skipping an object the informer cannot handle".*err="object has no usable metadata.name"/);
});
