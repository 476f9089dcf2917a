// The refetcher alone, against a list-watcher whose reads of one name the test answers by hand and
// a target that records what it is given: reads wait for the first sync and for a list to end,
// carry the informer's selectors, learn what the watch delivered while they were in flight, and are
// asked again after a failure or a relist that began meanwhile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flushMicrotasks } from '../../../test/fakes/fake-clock.js';
import { eventually } from '../../../test/support/eventually.js';
import type { KubeObject } from '../../model/objects.js';
import { createLogger } from '../../observability/log/logger.js';
import type { KubeList, ListOptions, ListWatcher } from '../api/client.js';
import { KubeApiError } from '../api/errors.js';
import { Resources } from '../api/resources.js';
import { Refetcher, type ReadTarget } from './refetcher.js';

/** Each read waits until the test answers it with objects or an error. */
class ManualReads implements ListWatcher {
  readonly resource = Resources.persistentVolumeClaims;
  readonly reads: Array<{ options: ListOptions; answer: (items: KubeObject[] | Error) => void }> = [];

  list(options: ListOptions): Promise<KubeList> {
    return new Promise((resolve, reject) => {
      this.reads.push({ options, answer: (items) => (items instanceof Error ? reject(items) : resolve({ metadata: {}, items })) });
    });
  }

  watch(): never {
    throw new Error('the refetcher never watches');
  }
}

class RecordingTarget implements ReadTarget {
  synced = false;
  listing = false;
  readonly merged: string[] = [];
  mergeRead(key: string, raw: KubeObject, newestDelivered: string | undefined): void {
    this.merged.push(`${key}@${raw.metadata?.resourceVersion} newest=${newestDelivered}`);
  }
}

const pvc = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });

function setup(t: { after: (fn: () => Promise<void>) => void }) {
  const lw = new ManualReads();
  const target = new RecordingTarget();
  const logs: string[] = [];
  const refetcher = new Refetcher(
    {
      listWatcher: lw,
      labelSelector: 'app=x',
      fieldSelector: 'spec.volumeName!=',
      log: createLogger({ verbosity: 0, format: 'text', write: (l) => logs.push(l) }),
      backoff: { initialMs: 1, maxMs: 1, jitter: 0 },
    },
    target,
  );
  const stop = new AbortController();
  const running = refetcher.run(stop.signal);
  t.after(async () => {
    stop.abort();
    for (const read of lw.reads) read.answer(new Error('stopped'));
    await running;
  });
  return { lw, target, refetcher, logs };
}

test('refetcher: a read waits for the first sync, carries the selectors, and hands over what the watch delivered meanwhile', async (t) => {
  const { lw, target, refetcher } = setup(t);
  refetcher.request('ns/a');
  await flushMicrotasks(); // the loop's turns run on promise continuations only
  assert.equal(lw.reads.length, 0);
  target.synced = true;
  refetcher.wake();
  await eventually('read 1 sent', () => lw.reads.length === 1);
  assert.deepEqual(lw.reads[0]!.options, { namespace: 'ns', labelSelector: 'app=x', fieldSelector: 'spec.volumeName!=,metadata.name=a' });
  refetcher.delivered('ns/a', '7');
  refetcher.delivered('ns/a', '6');
  refetcher.delivered('ns/b', '9');
  lw.reads[0]!.answer([pvc('other', '1'), pvc('a', '8')]);
  await eventually('the read merged', () => target.merged.length > 0);
  assert.deepEqual(target.merged, ['ns/a@8 newest=7']);
});

test('refetcher: a read answered while a list is gathered, a failed read and the keys a relist hands back are read again', async (t) => {
  const { lw, target, refetcher, logs } = setup(t);
  target.synced = true;
  refetcher.request('ns/a');
  await eventually('read 1 sent', () => lw.reads.length === 1);
  target.listing = true;
  lw.reads[0]!.answer([pvc('a', '2')]);
  await flushMicrotasks(); // the loop's turns run on promise continuations only
  assert.deepEqual(target.merged, []);
  target.listing = false;
  refetcher.relisted(['ns/b']);
  await eventually('read 2 sent', () => lw.reads.length === 2);
  lw.reads[1]!.answer(KubeApiError.fromStatus(500, { reason: 'InternalError', message: 'boom' }, 'list'));
  await eventually('read 3 sent', () => lw.reads.length === 3);
  assert.match(logs.join('\n'), /"Reading an object again failed, retrying" resource="persistentvolumeclaims" key="ns\/a"/);
  lw.reads[2]!.answer([]); // ns/b is gone: nothing to merge
  await eventually('read 4 sent', () => lw.reads.length === 4);
  lw.reads[3]!.answer([pvc('a', '3')]);
  assert.deepEqual(
    lw.reads.map((r) => r.options.fieldSelector?.split('metadata.name=')[1]),
    ['a', 'a', 'b', 'a'],
  );
  await eventually('the read merged', () => target.merged.length > 0);
  assert.deepEqual(target.merged, ['ns/a@3 newest=undefined']);
});
