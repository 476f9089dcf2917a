// The fault driver itself, spoken to through the official csi.proto so that its wire answers are
// checked independently of the product's client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { FaultDriver } from './fault-driver.js';
import { startFaultDriverProcess } from './fault-driver-process.js';
import { csiTestClient } from '../cluster/csi-proto.js';
import { eventually } from '../support/eventually.js';
import { officialCsiProtoPath } from '../support/official-csi-proto.js';

const protoPath = officialCsiProtoPath();

async function setup(t: { after(fn: () => unknown): void }, options: Parameters<typeof FaultDriver.start>[0] = {}) {
  const driver = await FaultDriver.start(options);
  t.after(() => driver.stop());
  const rpc = csiTestClient(protoPath, driver.address);
  t.after(() => rpc.close());
  return { driver, rpc };
}

test('answers like a driver: name, probe, capabilities', async (t) => {
  const { rpc } = await setup(t, { name: 'x.csi', volumeExpansion: 'OFFLINE', capabilities: { singleNodeMultiWriter: true } });
  assert.equal((await rpc.call('Identity', 'GetPluginInfo', {})).name, 'x.csi');
  assert.deepEqual((await rpc.call('Identity', 'Probe', {})).ready, { value: true });
  const plugin = await rpc.call('Identity', 'GetPluginCapabilities', {});
  assert.deepEqual(
    plugin.capabilities.map((c: { type: string }) => c.type),
    ['service', 'volume_expansion'],
  );
  assert.equal(plugin.capabilities[1].volume_expansion.type, 'OFFLINE');
  const ctrl = await rpc.call('Controller', 'ControllerGetCapabilities', {});
  assert.deepEqual(
    ctrl.capabilities.map((c: { rpc: { type: string } }) => c.rpc.type),
    ['EXPAND_VOLUME', 'MODIFY_VOLUME', 'SINGLE_NODE_MULTI_WRITER'],
  );
  const node = await rpc.call('Node', 'NodeGetCapabilities', {});
  assert.deepEqual(
    node.capabilities.map((c: { rpc: { type: string } }) => c.rpc.type),
    ['EXPAND_VOLUME'],
  );
});

test('expand grows, never shrinks; unknown volume is NotFound; calls are recorded with secrets', async (t) => {
  const { driver, rpc } = await setup(t, { nodeExpansionRequired: true });
  driver.createVolume('v', 100n);
  const grown = await rpc.call('Controller', 'ControllerExpandVolume', { volume_id: 'v', capacity_range: { required_bytes: '300' }, secrets: { a: 'b' } });
  assert.deepEqual(grown, { capacity_bytes: '300', node_expansion_required: true });
  const same = await rpc.call('Controller', 'ControllerExpandVolume', { volume_id: 'v', capacity_range: { required_bytes: '200' } });
  assert.equal(same.capacity_bytes, '300');
  await assert.rejects(
    rpc.call('Controller', 'ControllerExpandVolume', { volume_id: 'nope', capacity_range: { required_bytes: '1' } }),
    /NOT_FOUND|NotFound|not found/,
  );
  assert.deepEqual(driver.callsOf('ControllerExpandVolume')[0]!.request['secrets'], { a: 'b' });
});

test('scripted replies are consumed in order, then normal answers resume', async (t) => {
  const { driver, rpc } = await setup(t);
  driver.script('GetPluginInfo', { code: status.UNAVAILABLE, details: 'later' }, { response: { name: 'other' } });
  await assert.rejects(rpc.call('Identity', 'GetPluginInfo', {}), (err: Error) => (err.cause as { code: number }).code === status.UNAVAILABLE);
  assert.equal((await rpc.call('Identity', 'GetPluginInfo', {})).name, 'other');
  assert.equal((await rpc.call('Identity', 'GetPluginInfo', {})).name, 'fault.csi.test');
});

test('capability sets: no controller service, modify only', async (t) => {
  const { driver, rpc } = await setup(t, { capabilities: { controllerService: false, controllerExpand: false, nodeExpand: false }, volumeExpansion: null });
  assert.deepEqual((await rpc.call('Identity', 'GetPluginCapabilities', {})).capabilities, []);
  assert.deepEqual(
    (await rpc.call('Controller', 'ControllerGetCapabilities', {})).capabilities.map((c: { rpc: { type: string } }) => c.rpc.type),
    ['MODIFY_VOLUME'],
  );
  assert.deepEqual((await rpc.call('Node', 'NodeGetCapabilities', {})).capabilities, []);
  driver.createVolume('v', 1n);
  await assert.rejects(
    rpc.call('Controller', 'ControllerExpandVolume', { volume_id: 'v', capacity_range: { required_bytes: '2' } }),
    /UNIMPLEMENTED|Unimplemented|not supported/,
  );
  await rpc.call('Controller', 'ControllerModifyVolume', { volume_id: 'v', mutable_parameters: { iops: '5' } });
  assert.deepEqual(driver.volumeParameters('v'), { iops: '5' });
});

test('crash ends in-flight calls; restart serves again on the same socket; stop removes it', async (t) => {
  const { driver, rpc } = await setup(t);
  driver.script('Probe', { crash: true });
  await assert.rejects(rpc.call('Identity', 'Probe', {}, 2000));
  assert.equal(existsSync(driver.socketPath), false);
  await driver.restart({ name: 'renamed' });
  const fresh = csiTestClient(protoPath, driver.address);
  t.after(() => fresh.close());
  assert.equal((await fresh.call('Identity', 'GetPluginInfo', {})).name, 'renamed');
  await driver.stop();
  await driver.stop();
  assert.equal(existsSync(driver.socketPath), false);
});

test("hang never answers: the caller's deadline ends the call", async (t) => {
  const { driver, rpc } = await setup(t);
  driver.script('Probe', { hang: true });
  const started = Date.now();
  await assert.rejects(rpc.call('Identity', 'Probe', {}, 200), /DEADLINE_EXCEEDED|Deadline/);
  assert.ok(Date.now() - started < 2000);
});

test("each call is recorded with the caller's deadline, as its grpc-timeout said", async (t) => {
  const { driver, rpc } = await setup(t);
  await rpc.call('Identity', 'Probe', {}, 2_000);
  await rpc.call('Identity', 'GetPluginInfo', {}, 7_000);
  const [probe, info] = driver.calls;
  assert.ok(probe && probe.deadlineMs > 1_500 && probe.deadlineMs <= 2_000, `Probe: ${probe?.deadlineMs} ms`);
  assert.ok(info && info.deadlineMs > 6_500 && info.deadlineMs <= 7_000, `GetPluginInfo: ${info?.deadlineMs} ms`);
});

test('as its own process: SIGKILL mid-call, restart from the state file with the volumes intact; the call log counts repeats', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rz-fdp-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const driver = await startFaultDriverProcess({
    dir,
    volumes: new Map([
      ['a', 100n],
      ['b', 100n],
    ]),
    expandDelayMs: 1000,
  });
  t.after(() => driver.stop());
  const rpc = csiTestClient(protoPath, driver.address);
  t.after(() => rpc.close());
  const expand = (id: string, bytes: string) =>
    rpc.call('Controller', 'ControllerExpandVolume', { volume_id: id, capacity_range: { required_bytes: bytes } }, 5000);

  assert.equal((await expand('a', '300')).capacity_bytes, '300');
  // Killed while b's call is inside its 1 s of work (its call is logged, its answer is not): the
  // call fails, b is not grown.
  const inFlight = expand('b', '500').then(
    () => 'answered',
    (err: Error) => err.message,
  );
  await eventually("b's call logged", () => driver.calls().some((c) => c.event === 'call' && c.volumeId === 'b'), 5000, 10);
  await driver.kill('SIGKILL');
  assert.match(await inFlight, /UNAVAILABLE/);
  await driver.start();
  assert.deepEqual(
    driver.volumes(),
    new Map([
      ['a', 300n],
      ['b', 100n],
    ]),
  );
  assert.equal((await expand('a', '300')).capacity_bytes, '300');
  assert.equal((await expand('b', '500')).capacity_bytes, '500');

  const calls = driver.calls().filter((c) => c.event === 'call' && c.method === 'ControllerExpandVolume');
  assert.deepEqual(
    calls.map((c) => [c.volumeId, c.event === 'call' && c.afterSuccess]),
    [
      ['a', false],
      ['b', false],
      ['a', true],
      ['b', false],
    ],
  );
  const answers = driver.calls().filter((c) => c.event === 'answer' && c.method === 'ControllerExpandVolume');
  assert.deepEqual(
    answers.map((c) => c.volumeId),
    ['a', 'a', 'b'],
  );
});
