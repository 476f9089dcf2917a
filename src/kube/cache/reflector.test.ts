// The reflector alone, against a scripted list-watcher and a target that records what it is
// handed: the watch-list and its fallback to paginated lists, the watch from the list's
// resourceVersion, ERROR events (410: relist; others: resume the watch), and refusals said once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../model/objects.js';
import { createLogger } from '../../observability/log/logger.js';
import type { KubeList, ListOptions, ListWatcher, WatchOptions } from '../api/client.js';
import { KubeApiError } from '../api/errors.js';
import { Resources } from '../api/resources.js';
import type { WatchEvent } from '../api/watch.js';
import type { ChangeEvent } from './applier.js';
import { Reflector, type ReflectorTarget } from './reflector.js';

/** Answers lists and watches from queues; once the watch script is used up, a watch waits for the end of the run. */
class ScriptedListWatcher implements ListWatcher {
  readonly resource = Resources.persistentVolumeClaims;
  readonly lists: ListOptions[] = [];
  readonly watches: WatchOptions[] = [];
  unexpectedLists = 0;
  readonly done: Promise<void>;
  private finish!: () => void;

  constructor(
    private readonly pages: Array<KubeList | KubeApiError>,
    private readonly streams: Array<WatchEvent[] | KubeApiError>,
  ) {
    this.done = new Promise((resolve) => (this.finish = resolve));
  }

  async list(options: ListOptions): Promise<KubeList> {
    this.lists.push(options);
    const page = this.pages.shift();
    if (page === undefined) {
      // A list the script did not expect: the run is over, and the test fails on it.
      this.unexpectedLists++;
      this.finish();
      throw new Error('unexpected list');
    }
    if (page instanceof KubeApiError) throw page;
    return page;
  }

  async watch(options: WatchOptions, signal: AbortSignal): Promise<AsyncIterable<WatchEvent>> {
    this.watches.push(options);
    const stream = this.streams.shift();
    if (stream instanceof KubeApiError) throw stream;
    if (stream !== undefined)
      return (async function* () {
        yield* stream;
      })();
    this.finish();
    return (async function* () {
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    })();
  }
}

class RecordingTarget implements ReflectorTarget {
  resourceVersion = '';
  readonly calls: string[] = [];
  beginList(): void {
    this.calls.push('begin');
  }
  listed(raw: KubeObject): void {
    this.calls.push(`listed ${raw.metadata?.name}`);
  }
  replace(resourceVersion: string): void {
    this.resourceVersion = resourceVersion;
    this.calls.push(`replace ${resourceVersion}`);
  }
  apply(event: ChangeEvent): void {
    const rv = event.object.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    this.calls.push(`${event.type} ${event.object.metadata?.name ?? ''}@${rv}`);
  }
}

const obj = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });
const status = (code: number, reason: string) => KubeApiError.fromStatus(code, { reason, message: reason }, 'scripted');

async function runUntilIdle(lw: ScriptedListWatcher, target: RecordingTarget, logs: string[] = []): Promise<void> {
  const stop = new AbortController();
  const reflector = new Reflector(
    {
      listWatcher: lw,
      log: createLogger({ verbosity: 2, format: 'text', write: (l) => logs.push(l) }),
      pageSize: 2,
      backoff: { initialMs: 1, maxMs: 1, jitter: 0 },
    },
    target,
  );
  const running = reflector.run(stop.signal);
  await lw.done;
  stop.abort();
  await running;
  assert.equal(lw.unexpectedLists, 0);
}

test('reflector: a refused watch-list falls back to paginated lists, then watches from the list resourceVersion with bookmarks', async () => {
  const lw = new ScriptedListWatcher(
    [
      { metadata: { continue: 'next', resourceVersion: '4' }, items: [obj('a', '1'), obj('b', '2')] },
      { metadata: { resourceVersion: '5' }, items: [obj('c', '3')] },
    ],
    [status(422, 'Invalid'), [{ type: 'MODIFIED', object: obj('a', '6') }]],
  );
  const target = new RecordingTarget();
  await runUntilIdle(lw, target);
  assert.deepEqual(target.calls, ['begin', 'begin', 'listed a', 'listed b', 'listed c', 'replace 5', 'MODIFIED a@6']);
  assert.equal(lw.watches[0]?.sendInitialEvents, true);
  assert.deepEqual(
    lw.lists.map((l) => [l.limit, l.continue]),
    [
      [2, undefined],
      [2, 'next'],
    ],
  );
  assert.deepEqual(
    lw.watches.slice(1).map((w) => [w.resourceVersion, w.allowWatchBookmarks, w.sendInitialEvents]),
    [
      ['5', true, undefined],
      ['6', true, undefined],
    ],
  );
});

test('reflector: a watch-list replaces at the initial-events-end bookmark; an ERROR 410 relists, another ERROR resumes the watch', async () => {
  const end = (rv: string): WatchEvent => ({
    type: 'BOOKMARK',
    object: { metadata: { name: '', resourceVersion: rv, annotations: { 'k8s.io/initial-events-end': 'true' } } },
  });
  const lw = new ScriptedListWatcher(
    [],
    [
      [
        { type: 'ADDED', object: obj('a', '2') },
        end('3'),
        { type: 'MODIFIED', object: obj('a', '4') },
        { type: 'ERROR', object: { code: 500, reason: 'InternalError' } as KubeObject },
      ],
      [{ type: 'ERROR', object: { code: 410, reason: 'Expired' } as KubeObject }],
      [{ type: 'ADDED', object: obj('b', '9') }, end('9')],
    ],
  );
  const target = new RecordingTarget();
  const logs: string[] = [];
  await runUntilIdle(lw, target, logs);
  assert.deepEqual(target.calls, ['begin', 'listed a', 'replace 3', 'MODIFIED a@4', 'begin', 'listed b', 'replace 9']);
  assert.deepEqual(
    lw.watches.map((w) => [w.resourceVersion, w.sendInitialEvents]),
    [
      ['', true],
      ['4', undefined],
      ['', true],
      ['9', undefined],
    ],
  );
  assert.match(logs.join('\n'), /"List\/watch failed, retrying"/);
  assert.match(logs.join('\n'), /"Watch resourceVersion too old, relisting"/);
});

test('reflector: refusals are said once to the access listener and counted each time; the next accepted request is said once', async () => {
  const lw = new ScriptedListWatcher(
    [status(403, 'Forbidden'), status(403, 'Forbidden'), { metadata: { resourceVersion: '1' }, items: [] }],
    [status(403, 'Forbidden')],
  );
  const said: string[] = [];
  let refusals = 0;
  const stop = new AbortController();
  const reflector = new Reflector(
    {
      listWatcher: lw,
      log: createLogger({ verbosity: 0, format: 'text', write: () => {} }),
      watchList: false,
      backoff: { initialMs: 1, maxMs: 1, jitter: 0 },
      access: { refused: (err) => said.push(`refused ${err.status}`), allowed: () => said.push('allowed') },
      refusals: { inc: () => refusals++ },
    },
    new RecordingTarget(),
  );
  const running = reflector.run(stop.signal);
  await lw.done;
  stop.abort();
  await running;
  assert.equal(lw.unexpectedLists, 0);
  assert.deepEqual(said, ['refused 403', 'allowed', 'refused 403', 'allowed']);
  assert.equal(refusals, 3);
});
