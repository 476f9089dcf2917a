// The gRPC client against the fault-injecting driver on a temp unix socket.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { createLogger, silentLogger, type Logger } from '../observability/log/logger.js';
import { createMetrics } from '../observability/metrics.js';
import { FaultDriver } from '../../test/fakes/fault-driver.js';
import { eventually } from '../../test/support/eventually.js';
import { discoverCapabilities, GrpcCsiClient, type GrpcCsiClientOptions } from './client.js';
import { CsiError } from './errors.js';

const never = new AbortController().signal;

async function startPair(
  t: { after(fn: () => unknown): void },
  driverOptions: Parameters<typeof FaultDriver.start>[0] = {},
  clientOptions: Partial<GrpcCsiClientOptions> = {},
) {
  const driver = await FaultDriver.start(driverOptions);
  t.after(() => driver.stop());
  const metrics = clientOptions.metrics ?? createMetrics();
  const client = await GrpcCsiClient.start(
    { address: driver.address, timeoutMs: 2000, log: silentLogger, metrics, probeIntervalMs: 50, ...clientOptions },
    never,
  );
  t.after(() => client.close());
  return { driver, client, metrics };
}

function capture(verbosity: number): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: createLogger({ verbosity, format: 'text', write: (l) => lines.push(l) }), lines };
}

test('startup: connect, probe until ready, learn the name', async (t) => {
  const { driver, client } = await startPair(t, { name: 'fault.example.com' });
  assert.equal(client.driverName, 'fault.example.com');
  assert.equal(client.connectionState, 'ready');
  assert.deepEqual(
    driver.calls.map((c) => c.method),
    ['Probe', 'GetPluginInfo'],
  );
});

test('startup: ready=false and DeadlineExceeded keep probing; absent ready counts as ready', async (t) => {
  const driver = await FaultDriver.start({ ready: null });
  t.after(() => driver.stop());
  driver.script('Probe', { response: { ready: { value: false } } }, { code: status.DEADLINE_EXCEEDED }, { response: { ready: { value: false } } });
  const client = await GrpcCsiClient.start(
    { address: driver.address, timeoutMs: 1000, log: silentLogger, metrics: createMetrics(), probeIntervalMs: 20 },
    never,
  );
  t.after(() => client.close());
  assert.equal(driver.callsOf('Probe').length, 4);
});

test('startup: a probe error other than DeadlineExceeded is fatal', async (t) => {
  const driver = await FaultDriver.start();
  t.after(() => driver.stop());
  driver.script('Probe', { code: status.UNIMPLEMENTED, details: 'no probe' });
  await assert.rejects(
    GrpcCsiClient.start({ address: driver.address, timeoutMs: 1000, log: silentLogger, metrics: createMetrics() }, never),
    /^Error: CSI driver probe failed: rpc error: code = Unimplemented desc = no probe/,
  );
});

test('startup: an empty driver name is fatal', async (t) => {
  const driver = await FaultDriver.start({ name: '' });
  t.after(() => driver.stop());
  await assert.rejects(
    GrpcCsiClient.start({ address: driver.address, timeoutMs: 1000, log: silentLogger, metrics: createMetrics() }, never),
    /driver name is empty/,
  );
});

test('startup: no driver on the socket → "failed to connect to CSI driver" after the connect timeout, logging while waiting', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rz-nc-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const { log, lines } = capture(0);
  const started = Date.now();
  await assert.rejects(
    GrpcCsiClient.start(
      { address: join(dir, 'csi.sock'), timeoutMs: 1000, log, metrics: createMetrics(), connectTimeoutMs: 1200, connectLogIntervalMs: 400 },
      never,
    ),
    /^Error: failed to connect to CSI driver: /,
  );
  assert.ok(Date.now() - started >= 1100);
  assert.ok(lines.filter((l) => l.includes('"Still connecting" address=')).length >= 2, lines.join('\n'));
});

test('startup: a bad address is rejected before dialing', async () => {
  await assert.rejects(
    GrpcCsiClient.start({ address: 'localhost:1234', timeoutMs: 1000, log: silentLogger, metrics: createMetrics() }, never),
    /only unix domain sockets are supported/,
  );
});

test('capability discovery: full driver', async (t) => {
  const { client } = await startPair(t, { capabilities: { singleNodeMultiWriter: true }, volumeExpansion: 'ONLINE' });
  assert.deepEqual(await discoverCapabilities(client, never), {
    controllerService: true,
    volumeExpansion: 'online',
    controllerExpand: true,
    controllerModify: true,
    singleNodeMultiWriter: true,
    nodeExpand: undefined,
  });
});

const capabilityCases = [
  {
    name: 'no controller service',
    driver: { capabilities: { controllerService: false, controllerExpand: false, controllerModify: false } },
    expect: { controllerService: false, controllerExpand: false, controllerModify: false, nodeExpand: true },
  },
  {
    name: 'node-only expansion, OFFLINE',
    driver: { capabilities: { controllerExpand: false, controllerModify: false }, volumeExpansion: 'OFFLINE' as const },
    expect: { controllerService: true, controllerExpand: false, controllerModify: false, nodeExpand: true, volumeExpansion: 'offline' },
  },
  {
    name: 'no expansion at all',
    driver: { capabilities: { controllerExpand: false, controllerModify: false, nodeExpand: false }, volumeExpansion: null },
    expect: { controllerExpand: false, nodeExpand: false, volumeExpansion: 'unknown' },
  },
  {
    name: 'modify only',
    driver: { capabilities: { controllerExpand: false, nodeExpand: false } },
    expect: { controllerExpand: false, controllerModify: true, nodeExpand: false },
  },
];
for (const c of capabilityCases) {
  test(`capability discovery: ${c.name}`, async (t) => {
    const { client } = await startPair(t, c.driver);
    const caps = await discoverCapabilities(client, never);
    for (const [k, v] of Object.entries(c.expect)) assert.equal(caps[k as keyof typeof caps], v, k);
  });
}

test('capability discovery: a failing query carries the reference message', async (t) => {
  const { driver, client } = await startPair(t);
  driver.script('GetPluginCapabilities', { code: status.INTERNAL, details: 'nope' });
  await assert.rejects(discoverCapabilities(client, never), /failed to check if plugin supports controller service: rpc error: code = Internal desc = nope/);
});

test('expand: grows the volume, sends bytes as int64 exactly, returns bigint capacity', async (t) => {
  const { driver, client } = await startPair(t, { nodeExpansionRequired: true });
  const big = 2n ** 60n + 7n; // above 2^53: would be rounded by Number
  driver.createVolume('vol-1', 1n << 30n);
  const result = await client.expandVolume(
    {
      volumeId: 'vol-1',
      requiredBytes: big,
      secrets: { user: 'admin' },
      capability: { accessType: 'mount', fsType: 'ext4', mountFlags: [], accessMode: 'SINGLE_NODE_WRITER' },
    },
    never,
  );
  assert.deepEqual(result, { capacityBytes: big, nodeExpansionRequired: true });
  assert.equal(driver.volumeBytes('vol-1'), big);
  const req = driver.callsOf('ControllerExpandVolume')[0]!.request;
  assert.deepEqual(req['capacity_range'], { required_bytes: big.toString(), limit_bytes: '0' });
  assert.deepEqual(req['secrets'], { user: 'admin' });
  assert.equal((req['volume_capability'] as { access_type: string }).access_type, 'mount');
});

test('expand: a size int64 cannot carry is refused before any driver call, never wrapped', async (t) => {
  const { driver, client } = await startPair(t);
  driver.createVolume('v', 1n);
  for (const requiredBytes of [2n ** 63n, 10n ** 19n, 10n ** 30n, 2n ** 64n + 5n, -1n]) {
    await assert.rejects(
      client.expandVolume({ volumeId: 'v', requiredBytes, secrets: {}, capability: null }, never),
      (err: unknown) => {
        assert.ok(err instanceof CsiError, String(err));
        assert.equal(err.failure, 'infeasible');
        assert.match(
          err.message,
          new RegExp(
            `^requested size ${requiredBytes} bytes (is negative|exceeds the largest size CSI can carry \\(int64 9223372036854775807 bytes\\)); not sent to the driver$`,
          ),
        );
        return true;
      },
      String(requiredBytes),
    );
  }
  assert.equal(driver.callsOf('ControllerExpandVolume').length, 0);
  // The largest int64 still goes through, exactly.
  const max = 2n ** 63n - 1n;
  assert.deepEqual(await client.expandVolume({ volumeId: 'v', requiredBytes: max, secrets: {}, capability: null }, never), {
    capacityBytes: max,
    nodeExpansionRequired: false,
  });
  const sent = driver.callsOf('ControllerExpandVolume')[0]!.request['capacity_range'] as { required_bytes: string };
  assert.equal(sent.required_bytes, max.toString());
});

test('expand: odd capacities from the driver are reported as they are', async (t) => {
  const { driver, client } = await startPair(t);
  driver.createVolume('v', 100n);
  driver.script('ControllerExpandVolume', { response: { capacity_bytes: '50', node_expansion_required: false } }, { response: {} });
  assert.deepEqual(await client.expandVolume({ volumeId: 'v', requiredBytes: 200n, secrets: {}, capability: null }, never), {
    capacityBytes: 50n,
    nodeExpansionRequired: false,
  });
  assert.deepEqual(await client.expandVolume({ volumeId: 'v', requiredBytes: 200n, secrets: {}, capability: null }, never), {
    capacityBytes: 0n,
    nodeExpansionRequired: false,
  });
});

test('expand: unknown volume is NotFound, infeasible', async (t) => {
  const { client } = await startPair(t);
  await assert.rejects(client.expandVolume({ volumeId: 'missing', requiredBytes: 1n, secrets: {}, capability: null }, never), (err: unknown) => {
    assert.ok(err instanceof CsiError);
    assert.equal(err.codeName, 'NotFound');
    assert.equal(err.failure, 'infeasible');
    return true;
  });
});

test('every gRPC code from expand and modify maps to its class', async (t) => {
  const { driver, client } = await startPair(t);
  driver.createVolume('v', 1n);
  const expected: Record<number, [string, string]> = {
    [status.CANCELLED]: ['inProgress', 'inProgress'],
    [status.UNKNOWN]: ['final', 'final'],
    [status.INVALID_ARGUMENT]: ['infeasible', 'infeasible'],
    [status.DEADLINE_EXCEEDED]: ['inProgress', 'inProgress'],
    [status.NOT_FOUND]: ['infeasible', 'final'],
    [status.ALREADY_EXISTS]: ['final', 'final'],
    [status.PERMISSION_DENIED]: ['final', 'final'],
    [status.RESOURCE_EXHAUSTED]: ['inProgress', 'inProgress'],
    [status.FAILED_PRECONDITION]: ['inUse', 'inUse'],
    [status.ABORTED]: ['inProgress', 'inProgress'],
    [status.OUT_OF_RANGE]: ['infeasible', 'final'],
    [status.UNIMPLEMENTED]: ['final', 'final'],
    [status.INTERNAL]: ['final', 'final'],
    [status.UNAVAILABLE]: ['inProgress', 'inProgress'],
    [status.DATA_LOSS]: ['final', 'final'],
    [status.UNAUTHENTICATED]: ['final', 'final'],
  };
  for (const [codeText, [expand, modify]] of Object.entries(expected)) {
    const code = Number(codeText) as status;
    driver.script('ControllerExpandVolume', { code });
    driver.script('ControllerModifyVolume', { code });
    const e1 = await client.expandVolume({ volumeId: 'v', requiredBytes: 2n, secrets: {}, capability: null }, never).then(
      () => null,
      (e: unknown) => e,
    );
    const e2 = await client.modifyVolume({ volumeId: 'v', secrets: {}, mutableParameters: {} }, never).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(e1 instanceof CsiError && e2 instanceof CsiError, status[code]);
    assert.equal(e1.code, code);
    assert.equal(e1.failure, expand, `expand ${status[code]}`);
    assert.equal(e2.failure, modify, `modify ${status[code]}`);
  }
});

test('deadline: a hanging driver ends at the timeout with DeadlineExceeded, non-final', async (t) => {
  const { driver, client } = await startPair(t, {}, { timeoutMs: 300 });
  driver.createVolume('v', 1n);
  driver.script('ControllerExpandVolume', { hang: true });
  const started = Date.now();
  const err = await client.expandVolume({ volumeId: 'v', requiredBytes: 2n, secrets: {}, capability: null }, never).catch((e: unknown) => e);
  const took = Date.now() - started;
  assert.ok(err instanceof CsiError);
  assert.equal(err.codeName, 'DeadlineExceeded');
  assert.equal(err.failure, 'inProgress');
  assert.ok(took >= 250 && took < 2000, `took ${took}ms`);
  // A slow answer within the deadline is fine.
  driver.script('ControllerExpandVolume', { delayMs: 100 });
  assert.equal((await client.expandVolume({ volumeId: 'v', requiredBytes: 3n, secrets: {}, capability: null }, never)).capacityBytes, 3n);
});

test("abort: the caller's signal cancels a call in flight (Canceled, non-final)", async (t) => {
  const { driver, client } = await startPair(t, {}, { timeoutMs: 10_000 });
  driver.createVolume('v', 1n);
  driver.script('ControllerExpandVolume', { hang: true });
  const ac = new AbortController();
  const call = client.expandVolume({ volumeId: 'v', requiredBytes: 2n, secrets: {}, capability: null }, ac.signal).catch((e: unknown) => e);
  await eventually('the call reached the driver', () => driver.callsOf('ControllerExpandVolume').length === 1);
  ac.abort();
  const err = await call;
  assert.ok(err instanceof CsiError);
  assert.equal(err.codeName, 'Canceled');
  assert.equal(err.failure, 'inProgress');
});

test('crash mid-call: the call fails non-final; after a restart with the same name the client carries on', async (t) => {
  const { driver, client } = await startPair(t, { name: 'same.csi' });
  driver.createVolume('v', 1n);
  const fatal: Error[] = [];
  client.onFatal((e) => fatal.push(e));
  const states: string[] = [];
  client.onConnectionStateChange((s) => states.push(s));
  driver.script('ControllerExpandVolume', { crash: true });
  const err = await client.expandVolume({ volumeId: 'v', requiredBytes: 2n, secrets: {}, capability: null }, never).catch((e: unknown) => e);
  assert.ok(err instanceof CsiError);
  assert.equal(err.failure, 'inProgress', err.message);
  await eventually('connection lost', () => states.includes('lost'));
  await driver.restart();
  await eventually('name asked again', () => driver.callsOf('GetPluginInfo').length >= 2);
  await eventually('ready again', () => client.connectionState === 'ready');
  assert.deepEqual(fatal, []);
  assert.equal((await client.expandVolume({ volumeId: 'v', requiredBytes: 5n, secrets: {}, capability: null }, never)).capacityBytes, 5n);
});

test('restart with another driver name on the socket → fatal callback', async (t) => {
  const { driver, client } = await startPair(t, { name: 'first.csi' });
  const fatal: Error[] = [];
  client.onFatal((e) => fatal.push(e));
  await driver.restart({ name: 'second.csi' });
  await eventually('fatal reported', () => fatal.length > 0);
  assert.match(fatal[0]!.message, /CSI driver name changed after reconnecting: was "first.csi", now "second.csi"/);
});

test('a fatal error seen before anyone listened reaches a later listener', async (t) => {
  const { log, lines } = capture(0);
  const { driver, client } = await startPair(t, { name: 'first.csi' }, { log });
  await driver.restart({ name: 'second.csi' });
  // Nobody listens yet; the connection recovers and the name check fails meanwhile.
  await eventually('the name check failed', () => lines.some((l) => l.includes('"CSI driver can no longer be used"')));
  const fatal: Error[] = [];
  client.onFatal((e) => fatal.push(e));
  await eventually('fatal reported', () => fatal.length > 0);
  assert.match(fatal[0]!.message, /was "first.csi", now "second.csi"/);
});

test('logs at -v=10 show requests and responses but never secrets', async (t) => {
  const { log, lines } = capture(10);
  const { driver, client } = await startPair(t, {}, { log });
  driver.createVolume('v', 1n);
  await client.expandVolume({ volumeId: 'v', requiredBytes: 2n, secrets: { password: 'hunter2-expand' }, capability: null }, never);
  await client.modifyVolume({ volumeId: 'v', secrets: { apiKey: 'hunter2-modify' }, mutableParameters: { iops: '300' } }, never);
  driver.script('ControllerExpandVolume', { code: status.INTERNAL, details: 'failed' });
  await client.expandVolume({ volumeId: 'v', requiredBytes: 3n, secrets: { password: 'hunter2-error' }, capability: null }, never).catch(() => undefined);
  const all = lines.join('\n');
  assert.match(all, /GRPC call.*ControllerExpandVolume/);
  assert.match(all, /GRPC response/);
  assert.match(all, /iops/);
  assert.match(all, /\*\*\*stripped\*\*\*/);
  assert.doesNotMatch(all, /hunter2/);
  // The driver did receive them.
  assert.deepEqual(driver.callsOf('ControllerModifyVolume')[0]!.request['secrets'], { apiKey: 'hunter2-modify' });
});

test('nothing is logged per call at -v=4', async (t) => {
  const { log, lines } = capture(4);
  const { driver, client } = await startPair(t, {}, { log });
  driver.createVolume('v', 1n);
  const before = lines.length;
  await client.expandVolume({ volumeId: 'v', requiredBytes: 2n, secrets: { password: 'x' }, capability: null }, never);
  assert.equal(lines.length, before);
});

test('metrics: every call is recorded with driver, full method and status code labels', async (t) => {
  const metrics = createMetrics();
  const { driver, client } = await startPair(t, { name: 'metrics.csi' }, { metrics });
  driver.createVolume('v', 1n);
  await client.expandVolume({ volumeId: 'v', requiredBytes: 2n, secrets: {}, capability: null }, never);
  client.setMetricsDriverName(client.driverName);
  driver.script('ControllerExpandVolume', { code: status.INVALID_ARGUMENT });
  await client.expandVolume({ volumeId: 'v', requiredBytes: 3n, secrets: {}, capability: null }, never).catch(() => undefined);
  await client.modifyVolume({ volumeId: 'v', secrets: {}, mutableParameters: {} }, never);
  const data = await metrics.csiOperations.get();
  const counts = data.values
    .filter((v) => v.metricName === 'csi_sidecar_operations_seconds_count')
    .map((v) => `${v.labels['driver_name']} ${v.labels['method_name']} ${v.labels['grpc_status_code']} ${v.value}`)
    .sort();
  assert.deepEqual(counts, [
    'metrics.csi /csi.v1.Controller/ControllerExpandVolume InvalidArgument 1',
    'metrics.csi /csi.v1.Controller/ControllerModifyVolume OK 1',
    'unknown-driver /csi.v1.Controller/ControllerExpandVolume OK 1',
    'unknown-driver /csi.v1.Identity/GetPluginInfo OK 1',
    'unknown-driver /csi.v1.Identity/Probe OK 1',
  ]);
  const text = await metrics.registry.getSingleMetricAsString('csi_sidecar_operations_seconds');
  assert.match(text, /le="600"/);
});
