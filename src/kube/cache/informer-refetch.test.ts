// An informer whose transform keeps objects by state outside them: refetch reads an object the
// transform dropped earlier and merges it in resourceVersion order with the watch; refilter drops
// what the transform no longer keeps. A scripted list-watcher decides when each list is answered
// and when each watch event is delivered, so the orderings are exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../../../test/support/eventually.js';
import type { KubeObject } from '../../model/objects.js';
import { createLogger } from '../../observability/log/logger.js';
import type { KubeList, ListOptions, ListWatcher, WatchOptions } from '../api/client.js';
import { KubeApiError } from '../api/errors.js';
import { Informer } from './informer.js';
import { objectKey } from './keys.js';
import { Resources } from '../api/resources.js';
import type { WatchEvent } from '../api/watch.js';

/** A tiny API: objects by name in namespace ns, one open watch, lists that can be held or failed. */
class ScriptedApi implements ListWatcher {
  readonly resource = Resources.persistentVolumeClaims;
  readonly lists: ListOptions[] = [];
  /** Watch events are queued instead of delivered while true (a lagging watch). */
  holdWatch = false;
  /** Answers of lists of one name (refetch reads) wait for this, when set. */
  readGate: Promise<void> | undefined;
  /** Answers of whole lists wait for this, when set. */
  listGate: Promise<void> | undefined;
  /** The next read of one name fails with this status. */
  failNextRead: number | undefined;
  /** Reads of one name answered so far. */
  readsAnswered = 0;
  private readonly objects = new Map<string, KubeObject>();
  private rv = 10;
  private readonly queued: WatchEvent[] = [];
  private deliver: ((event: WatchEvent) => void) | undefined;

  put(name: string, spec: Record<string, unknown>): string {
    const type = this.objects.has(name) ? 'MODIFIED' : 'ADDED';
    const obj = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', metadata: { name, namespace: 'ns', resourceVersion: String(++this.rv) }, spec };
    this.objects.set(name, obj);
    this.send({ type, object: structuredClone(obj) });
    return obj.metadata.resourceVersion;
  }

  remove(name: string): string {
    const obj = this.objects.get(name)!;
    this.objects.delete(name);
    const rv = String(++this.rv);
    this.send({ type: 'DELETED', object: { ...structuredClone(obj), metadata: { ...obj.metadata!, resourceVersion: rv } } });
    return rv;
  }

  releaseWatch(): void {
    this.holdWatch = false;
    for (const event of this.queued.splice(0)) this.deliver?.(event);
  }

  /** The reads of one name (refetch) so far. */
  reads(): ListOptions[] {
    return this.lists.filter((l) => l.fieldSelector?.includes('metadata.name='));
  }

  async list(options: ListOptions): Promise<KubeList> {
    this.lists.push(options);
    const name = /metadata\.name=([^,]*)/.exec(options.fieldSelector ?? '')?.[1];
    // The answer is the state when the request arrives, however late it is delivered.
    const items = [...this.objects.values()].filter((o) => name === undefined || o.metadata?.name === name).map((o) => structuredClone(o));
    const answer = { metadata: { resourceVersion: String(this.rv) }, items };
    if (name !== undefined && this.failNextRead !== undefined) {
      const status = this.failNextRead;
      this.failNextRead = undefined;
      throw KubeApiError.fromStatus(status, { reason: 'InternalError', message: 'scripted failure' }, 'list');
    }
    await (name === undefined ? this.listGate : this.readGate);
    if (name !== undefined) this.readsAnswered++;
    return answer;
  }

  async watch(_options: WatchOptions, signal: AbortSignal): Promise<AsyncIterable<WatchEvent>> {
    const pending: WatchEvent[] = [];
    let wake: (() => void) | undefined;
    this.deliver = (event) => {
      pending.push(event);
      wake?.();
    };
    return {
      [Symbol.asyncIterator]: async function* () {
        while (!signal.aborted) {
          const event = pending.shift();
          if (event) {
            yield event;
            continue;
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
            signal.addEventListener('abort', () => resolve(), { once: true });
          });
        }
      },
    };
  }

  private send(event: WatchEvent): void {
    if (this.holdWatch) this.queued.push(event);
    else this.deliver?.(event);
  }
}

/** Resolves once `n` reads were answered and the informer has taken the answers in (they are handled in microtasks). */
async function readsTakenIn(api: ScriptedApi, n: number): Promise<void> {
  await eventually(`${n} reads answered`, () => api.readsAnswered === n);
  await new Promise<void>((resolve) => setImmediate(resolve));
}

/** An informer over the scripted API whose transform keeps the objects named in `kept`. */
function setup(t: { after: (fn: () => unknown) => void }, api: ScriptedApi) {
  const kept = new Set<string>();
  const logs: string[] = [];
  const informer = new Informer<KubeObject>({
    listWatcher: api,
    log: createLogger({ verbosity: 2, format: 'text', write: (l) => logs.push(l) }),
    watchList: false,
    backoff: { initialMs: 10, maxMs: 50 },
    transform: (obj) => (kept.has(obj.metadata!.name) ? obj : undefined),
  });
  const events: string[] = [];
  informer.addEventHandler({
    add: (o) => events.push(`add ${objectKey(o)}@${o.metadata?.resourceVersion}`),
    update: (a, b) => events.push(`update ${objectKey(b)}@${a.metadata?.resourceVersion}->${b.metadata?.resourceVersion}`),
    delete: (o) => events.push(`delete ${objectKey(o)}@${o.metadata?.resourceVersion}`),
  });
  const ctl = new AbortController();
  const running = informer.run(ctl.signal);
  t.after(async () => {
    ctl.abort();
    await running;
  });
  const rvOf = (key: string) => informer.store.get(key)?.metadata?.resourceVersion;
  return { informer, kept, events, logs, rvOf };
}

test('refetch reads an object the transform dropped and caches it once it is kept, with an add', async (t) => {
  const api = new ScriptedApi();
  const rv = api.put('a', { v: 1 });
  api.put('b', { v: 1 });
  const { informer, kept, events } = setup(t, api);
  await informer.waitForSync(AbortSignal.timeout(5000));
  assert.equal(informer.store.size, 0);

  kept.add('a');
  informer.refetch('ns/a');
  await eventually('a cached', () => informer.store.get('ns/a'));
  assert.deepEqual(events, [`add ns/a@${rv}`]);
  // One read of that name, in its namespace.
  assert.deepEqual(
    api.reads().map((l) => [l.namespace, l.fieldSelector]),
    [['ns', 'metadata.name=a']],
  );
  assert.equal(informer.store.get('ns/a')?.kind, 'PersistentVolumeClaim', 'read objects get kind and apiVersion as listed ones do');
  assert.equal(informer.store.get('ns/b'), undefined);
});

test('a read answered after the watch delivered a newer version is discarded', async (t) => {
  const api = new ScriptedApi();
  api.put('a', { v: 1 });
  const { informer, kept, events, rvOf } = setup(t, api);
  await informer.waitForSync(AbortSignal.timeout(5000));
  let answer!: () => void;
  api.readGate = new Promise((resolve) => {
    answer = resolve;
  });

  kept.add('a');
  informer.refetch('ns/a');
  await eventually('the read sent', () => api.reads().length === 1);
  const newer = api.put('a', { v: 2 });
  await eventually('the newer version cached from the watch', () => rvOf('ns/a') === newer);
  answer();
  // The read's older answer must not replace it: wait for the informer to have taken it in.
  await readsTakenIn(api, 1);
  assert.equal(rvOf('ns/a'), newer);
  assert.deepEqual(events, [`add ns/a@${newer}`]);
});

test('a read ahead of a lagging watch is not undone by the older versions the watch still delivers', async (t) => {
  const api = new ScriptedApi();
  api.put('a', { v: 1 });
  const { informer, kept, events, rvOf } = setup(t, api);
  await informer.waitForSync(AbortSignal.timeout(5000));

  api.holdWatch = true;
  const v2 = api.put('a', { v: 2 });
  const v3 = api.put('a', { v: 3 });
  kept.add('a');
  informer.refetch('ns/a');
  await eventually('the read cached', () => rvOf('ns/a') === v3);
  api.releaseWatch();
  const v4 = api.put('a', { v: 4 });
  await eventually('the watch caught up', () => rvOf('ns/a') === v4);
  // v2 was skipped; v3 from the watch is the version the read already had.
  assert.deepEqual(events, [`add ns/a@${v3}`, `update ns/a@${v3}->${v3}`, `update ns/a@${v3}->${v4}`]);
  assert.ok(!events.some((e) => e.includes(`@${v2}`)));
});

test('a read whose object was deleted meanwhile caches nothing; a deletion the watch delivers wins over an older read', async (t) => {
  const api = new ScriptedApi();
  api.put('gone', { v: 1 });
  api.put('a', { v: 1 });
  const { informer, kept, events } = setup(t, api);
  await informer.waitForSync(AbortSignal.timeout(5000));

  api.remove('gone');
  kept.add('gone');
  informer.refetch('ns/gone');
  await readsTakenIn(api, 1);

  let answer!: () => void;
  api.readGate = new Promise((resolve) => {
    answer = resolve;
  });
  kept.add('a');
  informer.refetch('ns/a');
  await eventually('the read sent', () => api.reads().length === 2);
  const deleted = api.remove('a');
  await eventually('the deletion delivered', () => informer.resourceVersion === deleted);
  answer();
  await readsTakenIn(api, 2);
  assert.equal(informer.store.size, 0);
  // The deletion of an object the transform keeps reaches handlers as a delete (as it always has);
  // the read's older answer adds nothing after it.
  assert.deepEqual(events, [`delete ns/a@${deleted}`]);
});

test('a refetch asked for during the first list is read after the list, never during it', async (t) => {
  const api = new ScriptedApi();
  api.put('a', { v: 1 });
  let listed!: () => void;
  api.listGate = new Promise((resolve) => {
    listed = resolve;
  });
  const { informer, kept, events } = setup(t, api);
  await eventually('the list sent', () => api.lists.length === 1);
  kept.add('a');
  informer.refetch('ns/a');
  // The list was answered with the state before `a` was kept, and judged after: kept.
  listed();
  await informer.waitForSync(AbortSignal.timeout(5000));
  await readsTakenIn(api, 1);
  assert.equal(api.lists.indexOf(api.reads()[0]!), 1, 'the read came after the list');
  assert.deepEqual(events, ['add ns/a@11'], 'the read found the version the list had: nothing new');
});

test('a failed read is retried with backoff', async (t) => {
  const api = new ScriptedApi();
  const rv = api.put('a', { v: 1 });
  const { informer, kept, events, logs } = setup(t, api);
  await informer.waitForSync(AbortSignal.timeout(5000));
  api.failNextRead = 500;
  kept.add('a');
  informer.refetch('ns/a');
  await eventually('a cached', () => informer.store.get('ns/a'));
  assert.equal(api.reads().length, 2);
  assert.equal(logs.filter((l) => l.includes('"Reading an object again failed, retrying"')).length, 1);
  assert.deepEqual(events, [`add ns/a@${rv}`]);
});

test('refilter drops the cached objects the transform no longer keeps (a delete to handlers) and leaves the rest', async (t) => {
  const api = new ScriptedApi();
  const rvA = api.put('a', { v: 1 });
  api.put('b', { v: 1 });
  api.put('c', { v: 1 });
  const { informer, kept, events } = setup(t, api);
  for (const name of ['a', 'b', 'c']) kept.add(name);
  await informer.waitForSync(AbortSignal.timeout(5000));
  events.length = 0;

  kept.delete('a');
  kept.delete('c');
  // Only the objects matched are judged again: c stays although its verdict changed too.
  informer.refilter((o) => o.metadata?.name !== 'c');
  assert.deepEqual(informer.store.keys().sort(), ['ns/b', 'ns/c']);
  assert.deepEqual(events, [`delete ns/a@${rvA}`]);
});
