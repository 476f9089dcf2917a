// The CSI client against a grpc-go driver that fails on purpose (test/cluster/go-fault-driver.ts):
// what our CsiClient port reports must be what upstream's client (grpc-go) reports for the same
// driver. A grpc-go server resets a call with RST_STREAM CANCEL when the grpc-timeout it was sent
// runs out, which races grpc-js's and our own deadline timers; grpc-go's client calls that
// DeadlineExceeded, and so must we, every time.
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { silentLogger } from '../../src/observability/log/logger.js';
import { createMetrics, type Metrics } from '../../src/observability/metrics.js';
import { DriverNameError, GrpcCsiClient } from '../../src/csi/client.js';
import { CsiError } from '../../src/csi/errors.js';
import { failure } from '../support/csi-failure.js';
import { startGoFaultDriver, type GoFaultDriverOptions } from '../cluster/go-fault-driver.js';
import { eventually } from '../support/eventually.js';

const never = new AbortController().signal;
const GiB = 1n << 30n;
const EXPAND = '/csi.v1.Controller/ControllerExpandVolume';
const expandRequest = { volumeId: 'vol-1', requiredBytes: 2n * GiB, secrets: {}, capability: null };

type After = { after(fn: () => unknown): void };

async function goDriver(t: After, opts: GoFaultDriverOptions) {
  const driver = await startGoFaultDriver(opts);
  t.after(() => driver.stop());
  return driver;
}

async function startClient(
  t: After,
  address: string,
  timeoutMs: number,
  metrics: Metrics = createMetrics(),
  connectionLossGraceMs?: number,
): Promise<GrpcCsiClient> {
  const client = await GrpcCsiClient.start({ address, timeoutMs, log: silentLogger, metrics, probeIntervalMs: 50, connectionLossGraceMs }, never);
  t.after(() => client.close());
  return client;
}

async function expandCodeLabels(metrics: Metrics): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const v of (await metrics.csiOperations.get()).values) {
    if (v.metricName === 'csi_sidecar_operations_seconds_count' && v.labels['method_name'] === EXPAND) counts[String(v.labels['grpc_status_code'])] = v.value;
  }
  return counts;
}

// One call at a time, as a reconcile makes them, at a 1 s deadline: the reset then often beats
// grpc-js's own timer, and enough rounds see it (docs/architecture.md, "The CSI layer").
const ROUNDS = 20;
const TIMEOUT_MS = 1000;

test(`a driver that hangs until grpc-go resets the call at its deadline: DeadlineExceeded every time (${ROUNDS} calls)`, async (t) => {
  const driver = await goDriver(t, { expand: 'hang' });
  const metrics = createMetrics();
  const client = await startClient(t, driver.address, TIMEOUT_MS, metrics);
  client.setMetricsDriverName(client.driverName);
  // Every round runs before anything is asserted, so a failure shows how all of them ended.
  const endings: Record<string, number> = {};
  for (let round = 1; round <= ROUNDS; round++) {
    const started = Date.now();
    const err = await failure(client.expandVolume(expandRequest, never));
    const elapsedMs = Date.now() - started;
    const ending = `${err.message} (${err.failure})`;
    endings[ending] = (endings[ending] ?? 0) + 1;
    assert.ok(elapsedMs >= TIMEOUT_MS - 5 && elapsedMs < TIMEOUT_MS + 1000, `round ${round} ended after ${elapsedMs} ms`);
  }
  assert.deepEqual(endings, { 'rpc error: code = DeadlineExceeded desc = context deadline exceeded (inProgress)': ROUNDS });
  assert.deepEqual(await expandCodeLabels(metrics), { DeadlineExceeded: ROUNDS });
});

test('our own abort of a call to a hanging grpc-go driver stays Cancelled', async (t) => {
  const driver = await goDriver(t, { expand: 'hang' });
  const client = await startClient(t, driver.address, 10_000);
  const abort = new AbortController();
  const pending = failure(client.expandVolume(expandRequest, abort.signal));
  await eventually('the call reached the driver', () => readFileSync(driver.logPath, 'utf8').includes('ControllerExpandVolume vol-1: waiting'));
  abort.abort();
  const err = await pending;
  assert.equal(err.code, status.CANCELLED, err.message);
  assert.equal(err.failure, 'inProgress');
});

test('a grpc-go driver answering over the 4 MiB receive limit: ResourceExhausted, and the next call works', async (t) => {
  const driver = await goDriver(t, { expand: 'oversized' });
  const client = await startClient(t, driver.address, 5000);
  const err = await failure(client.expandVolume(expandRequest, never));
  assert.equal(err.code, status.RESOURCE_EXHAUSTED, err.message);
  assert.match(err.details, /larger than max \(\d+ vs 4194304\)/);
  assert.equal(err.failure, 'inProgress');
  assert.equal((await client.getControllerCapabilities(never)).expandVolume, true);
});

test("a grpc-go driver's own Unavailable: returned at once, without the connection-loss grace, and not sent again", async (t) => {
  const driver = await goDriver(t, { expand: 'unavailable' });
  const metrics = createMetrics();
  // A grace far beyond the bound below: waiting for it would fail the test.
  const client = await startClient(t, driver.address, 60_000, metrics, 60_000);
  for (let round = 1; round <= 3; round++) {
    const started = Date.now();
    const err = await failure(client.expandVolume(expandRequest, never));
    assert.ok(Date.now() - started < 30_000, `round ${round} ended after ${Date.now() - started} ms`);
    assert.equal(err.message, 'rpc error: code = Unavailable desc = driver busy');
    assert.equal(err.failure, 'inProgress');
  }
  assert.deepEqual(await expandCodeLabels(metrics), { Unavailable: 3 });
});

for (const compressor of ['identity', 'x-unknown']) {
  test(`a grpc-go driver whose responses are flagged compressed under ${compressor}: Internal with a message that says why`, async (t) => {
    const driver = await goDriver(t, { compressor });
    // grpc-go sends an empty message (the Probe answer) uncompressed, so start-up gets past Probe
    // and fails at GetPluginInfo, the first answer with bytes in it.
    const err = await GrpcCsiClient.start(
      { address: driver.address, timeoutMs: 5000, log: silentLogger, metrics: createMetrics(), probeIntervalMs: 50 },
      never,
    ).then(
      (client) => {
        client.close();
        assert.fail('start-up succeeded');
      },
      (e: unknown) => e as Error,
    );
    assert.ok(err instanceof DriverNameError, String(err));
    assert.equal(
      err.message,
      "rpc error: code = Internal desc = grpc: cannot decompress the driver's response: it is flagged compressed, but its grpc-encoding is identity, absent or not one of deflate and gzip",
    );
    assert.ok(err.cause instanceof CsiError && err.cause.code === status.INTERNAL && err.cause.failure === 'final', String(err.cause));
  });
}
