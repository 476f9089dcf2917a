// The processor alone: every handler gets every change in order, a late handler gets the cache
// first, a throwing handler is logged and skipped, and resync fires on the clock until cancelled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import type { KubeObject } from '../../model/objects.js';
import { createLogger } from '../../observability/log/logger.js';
import { HandlerProcessor, startResync, type InformerHandlers } from './processor.js';

const obj = (name: string): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion: '1' } });

function recorder(calls: string[], tag: string): InformerHandlers<KubeObject> {
  return {
    add: (o) => calls.push(`${tag} add ${o.metadata?.name}`),
    update: (a, b) => calls.push(`${tag} update ${a.metadata?.name}->${b.metadata?.name}`),
    delete: (o) => calls.push(`${tag} delete ${o.metadata?.name}`),
  };
}

test('processor: each change reaches every handler in order; a throwing handler is logged and the next still runs', () => {
  const logs: string[] = [];
  const processor = new HandlerProcessor<KubeObject>(createLogger({ verbosity: 0, format: 'text', write: (l) => logs.push(l) }), 'persistentvolumeclaims');
  const calls: string[] = [];
  processor.register(
    {
      add: () => {
        throw new Error('handler bug');
      },
    },
    undefined,
  );
  processor.register(recorder(calls, 'h'), undefined);
  processor.add(obj('a'));
  processor.update(obj('a'), obj('b'));
  processor.delete(obj('b'));
  assert.deepEqual(calls, ['h add a', 'h update a->b', 'h delete b']);
  assert.equal(logs.length, 1);
  assert.match(logs[0]!, /"Informer event handler failed" err="handler bug" resource="persistentvolumeclaims" event="add" key="ns\/a"/);
});

test('processor: a handler registered with the cached objects gets add() for each first; resync is update(obj, obj)', () => {
  const processor = new HandlerProcessor<KubeObject>(createLogger({ verbosity: 0, format: 'text', write: () => {} }), 'pvs');
  const calls: string[] = [];
  processor.register(recorder(calls, 'late'), [obj('a'), obj('b')]);
  processor.resync([obj('a')]);
  assert.deepEqual(calls, ['late add a', 'late add b', 'late update a->a']);
});

test('startResync: ticks every period on the clock, none for a period of 0, none after cancel', () => {
  const clock = new FakeClock();
  assert.equal(
    startResync(clock, 0, () => assert.fail('no resync')),
    undefined,
  );
  let ticks = 0;
  const handle = startResync(clock, 1_000, () => ticks++);
  clock.advance(999);
  assert.equal(ticks, 0);
  clock.advance(2_001);
  assert.equal(ticks, 3);
  handle?.cancel();
  clock.advance(5_000);
  assert.equal(ticks, 3);
  assert.equal(clock.pendingTimers, 0);
});
