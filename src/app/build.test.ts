// startApp's head start (docs/differences/startup-order.md): with leader election off the
// informers list while the CSI start-up runs, and the app's run takes those requests over; with it
// on nothing is listed before the run; a start-up that fails leaves no request behind. Against the
// in-memory API server and the scripted CSI driver (a real gRPC server on a unix socket).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { FakeApiServer } from '../../test/fakes/fake-apiserver.js';
import { FaultDriver } from '../../test/fakes/fault-driver.js';
import { eventually } from '../../test/support/eventually.js';
import { createLogger } from '../observability/logger.js';
import { createMetrics } from '../observability/metrics.js';
import { startApp } from './build.js';
import { parseConfig } from './config.js';
import { StartupError } from './startup-error.js';

const PVCS = '/api/v1/persistentvolumeclaims';
const PVS = '/api/v1/persistentvolumes';
const PODS = '/api/v1/pods';
const VACS = '/apis/storage.k8s.io/v1/volumeattributesclasses';

async function setup(t: TestContext, probe: Parameters<FaultDriver['script']>[1], args: string[] = []) {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  server.watchList = 'supported';
  server.discovery.set('storage.k8s.io/v1', [{ name: 'volumeattributesclasses', kind: 'VolumeAttributesClass' }]);
  const driver = await FaultDriver.start();
  t.after(() => driver.stop());
  driver.script('Probe', probe);
  const config = parseConfig([`--master=${server.kubeConfig().server}`, `--csi-address=${driver.address}`, '--v=2', ...args]);
  const lines: string[] = [];
  const deps = { log: createLogger({ verbosity: 2, format: 'text', write: (l) => lines.push(l) }), metrics: createMetrics() };
  const watchesOf = (path: string) => server.watchRequests().filter((r) => r.path === path).length;
  return { server, driver, config, deps, lines, watchesOf };
}

test('leader election off: the PVC and PV informers list while the driver is still probed; the run takes them over (one request each)', async (t) => {
  const { server, config, deps, watchesOf } = await setup(t, { delayMs: 1_000 });
  const root = new AbortController();
  let started = false;
  const starting = startApp(config, deps, root.signal).finally(() => { started = true; });
  await eventually('the PVC and PV watch-lists', () => watchesOf(PVCS) === 1 && watchesOf(PVS) === 1, 5_000, 5);
  assert.equal(started, false, 'listed before the CSI start-up ended');
  const app = await starting;
  t.after(() => app.close());
  // Known once the capabilities and the discovery are: the pod and VolumeAttributesClass informers.
  await eventually('the pod and VAC watch-lists', () => watchesOf(PODS) === 1 && watchesOf(VACS) === 1, 5_000, 5);

  const work = new AbortController();
  const running = app.run(work.signal);
  await app.whenCachesSynced(AbortSignal.timeout(5_000));
  assert.deepEqual([PVCS, PVS, PODS, VACS].map(watchesOf), [1, 1, 1, 1], 'no second request for any informer');
  assert.equal(server.listRequests().filter((r) => r.path !== '/apis/storage.k8s.io/v1').length, 0);
  work.abort();
  await running;
  await eventually('every watch closed', () => server.openWatches === 0, 5_000, 5);
});

test('leader election on: nothing is listed before the run (the leader lists after acquiring the Lease)', async (t) => {
  const { server, config, deps, watchesOf } = await setup(t, { delayMs: 200 }, ['--leader-election']);
  const app = await startApp(config, deps, new AbortController().signal);
  t.after(() => app.close());
  assert.equal(server.watchRequests().length, 0);
  const work = new AbortController();
  const running = app.run(work.signal);
  await app.whenCachesSynced(AbortSignal.timeout(5_000));
  assert.deepEqual([PVCS, PVS, PODS, VACS].map(watchesOf), [1, 1, 1, 1]);
  work.abort();
  await running;
});

test('a start-up that fails after the head start began: its watches are closed, nothing retried, the same failure', async (t) => {
  const { server, config, deps, lines, watchesOf } = await setup(t, { delayMs: 300, code: GrpcStatus.INTERNAL, details: 'driver broken' });
  const starting = startApp(config, deps, new AbortController().signal);
  await eventually('the head start\'s watches are open', () => server.openWatches === 2, 5_000, 5);
  await assert.rejects(starting, (err) => err instanceof StartupError && err.message === 'Failed to create CSI client');
  await eventually('every watch closed', () => server.openWatches === 0, 5_000, 5);
  assert.deepEqual([PVCS, PVS, PODS, VACS].map(watchesOf), [1, 1, 0, 0]);
  assert.ok(!lines.some((l) => l.includes('"List/watch failed, retrying"')), lines.join('\n'));
});
