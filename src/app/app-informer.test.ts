import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeApiServer } from '../../test/fakes/fake-apiserver.js';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { eventually } from '../../test/support/eventually.js';
import { pvc } from '../../test/support/builders.js';
import { HttpKubeClient } from '../kube/client.js';
import { Informer } from '../kube/informer.js';
import { objectKey } from '../kube/keys.js';
import { Resources } from '../kube/resources.js';
import type { Pvc } from '../model/objects.js';
import { createLogger } from '../observability/logger.js';
import { AppInformer } from './app-informer.js';

const PVCS = 'v1/persistentvolumeclaims';

async function setup(t: { after: (fn: () => unknown) => void }, options: { clock?: FakeClock } = {}) {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  server.watchList = 'supported';
  server.put(PVCS, pvc({ name: 'a' }));
  const client = new HttpKubeClient({ kubeConfig: server.kubeConfig(), qps: 0, burst: 1 });
  t.after(() => client.close());
  const informer = new Informer<Pvc>({
    listWatcher: client.listWatcher(Resources.persistentVolumeClaims),
    log: createLogger({ verbosity: 0, format: 'text', write: () => {} }),
    // A resync timer, so that a head start left running would show as a pending timer.
    resyncPeriodMs: 60_000,
    clock: options.clock,
  });
  return { server, informer, app: new AppInformer('pvc-informer', informer) };
}

test('head start: the informer lists before the run; the run takes the same watch over (no second request) and ends it when its signal aborts', async (t) => {
  const { server, informer, app } = await setup(t);
  app.startEarly();
  await informer.waitForSync(AbortSignal.timeout(5000));
  // Handlers registered after the head start's sync see every listed object, as the controllers do.
  const seen: string[] = [];
  informer.addEventHandler({ add: (o) => seen.push(objectKey(o)) });
  assert.deepEqual(seen, ['ns/a']);

  const stop = new AbortController();
  const running = app.run(stop.signal);
  assert.equal(app.startedEarly, false, 'taken over');
  server.put(PVCS, pvc({ name: 'b' }));
  await eventually('the watch delivers b', () => seen.includes('ns/b'), 5000, 5);
  assert.equal(server.watchRequests().length, 1, 'the head start\'s watch-list is the run\'s stream');
  assert.equal(server.listRequests().length, 0);

  stop.abort();
  await running;
  await eventually('the watch closed', () => server.openWatches === 0, 5000, 5);
});

test('no head start: the run starts the informer itself, as before', async (t) => {
  const { server, informer, app } = await setup(t);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(server.watchRequests().length, 0, 'nothing listed before the run');
  const stop = new AbortController();
  const running = app.run(stop.signal);
  await informer.waitForSync(AbortSignal.timeout(5000));
  assert.equal(server.watchRequests().length, 1);
  stop.abort();
  await running;
});

test('a head start no run takes over (a failed start-up): stopEarly cancels its watch and clears its timers', async (t) => {
  const clock = new FakeClock();
  const { server, informer, app } = await setup(t, { clock });
  app.startEarly();
  await informer.waitForSync(AbortSignal.timeout(5000));
  assert.equal(server.openWatches, 1);
  assert.ok(clock.pendingTimers > 0, 'the resync and the watchdog are armed');
  await app.stopEarly();
  assert.equal(clock.pendingTimers, 0, 'no timer left behind');
  await eventually('the watch closed', () => server.openWatches === 0, 5000, 5);
  assert.equal(server.watchRequests().length, 1, 'no request after the stop');
  await app.stopEarly(); // a second stop does nothing
});

test('a head start stopped while its first request is still on its way sends nothing more', async (t) => {
  const { server, app } = await setup(t);
  server.hangWatches = true; // the stream is accepted and then stays silent
  app.startEarly();
  await eventually('the watch-list is open', () => server.openWatches === 1, 5000, 5);
  await app.stopEarly();
  await eventually('the watch closed', () => server.openWatches === 0, 5000, 5);
  assert.equal(server.watchRequests().length, 1);
});
