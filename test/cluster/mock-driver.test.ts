import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { csiTestClient, getPluginInfo } from './csi-proto.js';
import { startMockDriver } from './mock-driver.js';

test('the mock driver is ready when GetPluginInfo answers, and stop() ends it', async () => {
  const driver = await startMockDriver({ name: 'rz.test.csi' });
  const info = await getPluginInfo(driver.protoPath, driver.address);
  assert.equal(info.name, 'rz.test.csi');
  assert.ok(driver.address.startsWith('unix:///tmp/rz-'));
  const pid = driver.pid;
  await driver.stop();
  await driver.stop();
  assert.throws(() => process.kill(pid, 0));
  assert.equal(existsSync(driver.socketPath), false);
});

test('capability flags reach the driver; restart() gives a new process on the same socket', async (t) => {
  const driver = await startMockDriver({ nodeExpansionRequired: true, disableOnlineExpansion: true });
  t.after(() => driver.stop());
  const client = csiTestClient(driver.protoPath, driver.address);
  t.after(() => client.close());
  const caps = await client.call<{ capabilities: Array<{ rpc?: { type: string } }> }>('Controller', 'ControllerGetCapabilities', {});
  assert.ok(caps.capabilities.some((c) => c.rpc?.type === 'EXPAND_VOLUME'));
  const plugin = await client.call<{ capabilities: Array<{ volume_expansion?: { type: string } }> }>('Identity', 'GetPluginCapabilities', {});
  assert.ok(plugin.capabilities.some((c) => c.volume_expansion?.type === 'OFFLINE'));

  const created = await client.call<{ volume: { volume_id: string; capacity_bytes: string } }>('Controller', 'CreateVolume', {
    name: 'v1',
    capacity_range: { required_bytes: String(2 ** 30) },
    volume_capabilities: [{ mount: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
  });
  const expanded = await client.call<{ capacity_bytes: string; node_expansion_required: boolean }>('Controller', 'ControllerExpandVolume', {
    volume_id: created.volume.volume_id,
    capacity_range: { required_bytes: String(2 * 2 ** 30) },
  });
  assert.equal(expanded.capacity_bytes, String(2 * 2 ** 30));
  assert.equal(expanded.node_expansion_required, true);

  const before = driver.pid;
  await driver.restart();
  assert.notEqual(driver.pid, before);
  assert.equal((await getPluginInfo(driver.protoPath, driver.address)).name, 'mock.csi.k8s.io');
});
