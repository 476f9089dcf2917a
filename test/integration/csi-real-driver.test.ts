// The gRPC client against the real CSI driver: Kubernetes' e2e CSI mock driver, started from the
// built test components. Volumes are created through the official csi.proto (CreateVolume is not
// in the resizer's own proto).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/observability/log/logger.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { discoverCapabilities, GrpcCsiClient } from '../../src/csi/client.js';
import { volumeCapabilityFor } from '../../src/csi/capabilities.js';
import { CsiError } from '../../src/csi/errors.js';
import { startMockDriver, type MockDriver, type MockDriverOptions } from '../cluster/mock-driver.js';
import { csiTestClient } from '../cluster/csi-proto.js';
import { eventually, StopPolling } from '../support/eventually.js';

const never = new AbortController().signal;
const GiB = 1n << 30n;
const mountRwo = volumeCapabilityFor({ accessModes: ['ReadWriteOnce'], csi: { fsType: 'ext4' } }, { supportsSingleNodeMultiWriter: false });

async function setup(t: { after(fn: () => unknown): void }, options: MockDriverOptions = {}) {
  const driver = await startMockDriver(options);
  t.after(() => driver.stop());
  const metrics = createMetrics();
  const client = await GrpcCsiClient.start({ address: driver.address, timeoutMs: 10_000, log: silentLogger, metrics }, never);
  t.after(() => client.close());
  return { driver, client, metrics };
}

async function createVolume(driver: MockDriver, name: string, bytes: bigint): Promise<string> {
  const admin = csiTestClient(driver.protoPath, driver.address);
  try {
    const res = await admin.call<{ volume: { volume_id: string; capacity_bytes: string } }>('Controller', 'CreateVolume', {
      name,
      capacity_range: { required_bytes: bytes.toString() },
      volume_capabilities: [{ mount: { fs_type: 'ext4' }, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
    });
    return res.volume.volume_id;
  } finally {
    admin.close();
  }
}

test('startup against the real driver discovers its name and capabilities', async (t) => {
  const { driver, client } = await setup(t);
  assert.equal(client.driverName, driver.name);
  const caps = await discoverCapabilities(client, never);
  assert.equal(caps.controllerService, true);
  assert.equal(caps.controllerExpand, true);
  assert.equal(caps.controllerModify, true);
  assert.equal(caps.volumeExpansion, 'online');
  assert.equal(caps.nodeExpand, undefined);
});

test('real driver without controller expansion: node-only when it needs node expansion, OFFLINE when online is disabled', async (t) => {
  const { client } = await setup(t, { disableControllerExpansion: true, disableOnlineExpansion: true, nodeExpansionRequired: true });
  const caps = await discoverCapabilities(client, never);
  assert.equal(caps.controllerExpand, false);
  assert.equal(caps.controllerModify, true);
  assert.equal(caps.nodeExpand, true);
  assert.equal(caps.volumeExpansion, 'offline');
});

test('real driver without controller expansion and without node expansion: no expansion at all', async (t) => {
  const { client } = await setup(t, { disableControllerExpansion: true });
  const caps = await discoverCapabilities(client, never);
  assert.equal(caps.controllerExpand, false);
  assert.equal(caps.nodeExpand, false);
  assert.equal(caps.volumeExpansion, 'online');
});

test('expand succeeds and reports the new capacity; node expansion not required by default', async (t) => {
  const { driver, client, metrics } = await setup(t);
  const volumeId = await createVolume(driver, 'pvc-expand', GiB);
  const result = await client.expandVolume({ volumeId, requiredBytes: 2n * GiB, secrets: { k: 'v' }, capability: mountRwo }, never);
  assert.deepEqual(result, { capacityBytes: 2n * GiB, nodeExpansionRequired: false });
  const data = await metrics.csiOperations.get();
  assert.ok(data.values.some((v) => v.labels['method_name'] === '/csi.v1.Controller/ControllerExpandVolume' && v.labels['grpc_status_code'] === 'OK'));
});

test('node-expansion-required is reflected', async (t) => {
  const { driver, client } = await setup(t, { nodeExpansionRequired: true });
  const volumeId = await createVolume(driver, 'pvc-node', GiB);
  const result = await client.expandVolume({ volumeId, requiredBytes: 3n * GiB, secrets: {}, capability: mountRwo }, never);
  assert.deepEqual(result, { capacityBytes: 3n * GiB, nodeExpansionRequired: true });
});

test('shrinking is InvalidArgument (infeasible); an unknown volume is NotFound (infeasible)', async (t) => {
  const { driver, client } = await setup(t);
  const volumeId = await createVolume(driver, 'pvc-shrink', 2n * GiB);
  const shrink = await client.expandVolume({ volumeId, requiredBytes: GiB, secrets: {}, capability: mountRwo }, never).catch((e: unknown) => e);
  assert.ok(shrink instanceof CsiError, String(shrink));
  assert.equal(shrink.codeName, 'InvalidArgument');
  assert.equal(shrink.failure, 'infeasible');
  const missing = await client
    .expandVolume({ volumeId: 'no-such-volume', requiredBytes: GiB, secrets: {}, capability: mountRwo }, never)
    .catch((e: unknown) => e);
  assert.ok(missing instanceof CsiError, String(missing));
  assert.equal(missing.codeName, 'NotFound');
  assert.equal(missing.failure, 'infeasible');
});

test('modify succeeds: the call resolves and the driver answered OK (the mock driver applies nothing to read back)', async (t) => {
  const { driver, client, metrics } = await setup(t);
  const volumeId = await createVolume(driver, 'pvc-modify', GiB);
  assert.equal(await client.modifyVolume({ volumeId, secrets: { s: 'x' }, mutableParameters: { iops: '3000' } }, never), undefined);
  const calls = (await metrics.csiOperations.get()).values.filter(
    (v) => v.metricName === 'csi_sidecar_operations_seconds_count' && v.labels['method_name'] === '/csi.v1.Controller/ControllerModifyVolume',
  );
  assert.deepEqual(
    calls.map((v) => [v.labels['grpc_status_code'], v.value]),
    [['OK', 1]],
  );
});

test('a restart of the real driver is survived: reconnect, same name, calls work again', async (t) => {
  const { driver, client } = await setup(t);
  const fatal: Error[] = [];
  client.onFatal((e) => fatal.push(e));
  const states: string[] = [];
  client.onConnectionStateChange((s) => states.push(s));
  await driver.restart();
  const volumeId = await createVolume(driver, 'pvc-after-restart', GiB);
  // Until the channel is back, a call fails as not final (Unavailable); a final failure ends the wait.
  const result = await eventually(
    'an expansion through the reconnected channel',
    async () => {
      try {
        return await client.expandVolume({ volumeId, requiredBytes: 2n * GiB, secrets: {}, capability: mountRwo }, never);
      } catch (err) {
        if (!(err instanceof CsiError) || err.isFinal) throw new StopPolling(`a final failure: ${String(err)}`, { cause: err });
        throw err;
      }
    },
    15_000,
    200,
  );
  assert.equal(result.capacityBytes, 2n * GiB);
  assert.ok(states.includes('lost'), states.join(','));
  assert.deepEqual(fatal, []);
});
