// The CSI client against CSI servers on the three gRPC implementations drivers are written with:
// grpc-go (Kubernetes' e2e mock driver), @grpc/grpc-js (the fault driver, as Node drivers use it)
// and gRPC C-core (test/fakes/csi_server.py on Debian's python3-grpcio, messages from the
// official csi.proto). One table; each server runs the rows it can express (the mock driver
// cannot be scripted, so it runs the rows a plain driver answers).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status, type ServiceError } from '@grpc/grpc-js';
import { silentLogger } from '../../src/observability/log/logger.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { discoverCapabilities, GrpcCsiClient } from '../../src/csi/client.js';
import { failure } from '../support/csi-failure.js';
import { FaultDriver } from '../fakes/fault-driver.js';
import { PythonCsiDriver } from '../fakes/python-csi-driver.js';
import { startMockDriver } from '../cluster/mock-driver.js';
import { csiTestClient } from '../cluster/csi-proto.js';

const never = new AbortController().signal;
const GiB = 1n << 30n;
const MiB = 1024 * 1024;
// Every code a driver can send, each with a message that needs percent-encoding on the wire.
const MESSAGE = 'größe ✓ 100% done\nsecond line';
const DETAILS_BIN = Buffer.from([0x08, 0x03, 0x12, 0x03, 0x62, 0x61, 0x64]);

type Scriptable = 'status' | 'details' | 'delay' | 'big';

interface Server {
  readonly name: string;
  readonly address: string;
  /** A volume of 1 GiB the driver knows. */
  volume(): Promise<string>;
  /** The next ControllerExpandVolume fails with `code`, `details` (and grpc-status-details-bin). */
  failExpand(code: number, details: string, detailsBin?: Buffer): Promise<void>;
  /** The next ControllerGetCapabilities answers after `ms`. */
  delayCapabilities(ms: number): Promise<void>;
  /** The next GetPluginInfo carries a vendor_version of `bytes`. */
  bigPluginInfo(bytes: number): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function grpcJsServer(): Promise<Server> {
  const driver = await FaultDriver.start({ name: 'grpc-js.csi.test' });
  driver.createVolume('vol-1', GiB);
  return {
    name: '@grpc/grpc-js (fault driver)',
    address: driver.address,
    volume: async () => 'vol-1',
    failExpand: async (code, details, detailsBin) =>
      driver.script('ControllerExpandVolume', { code, details, ...(detailsBin ? { trailers: { 'grpc-status-details-bin': detailsBin } } : {}) }),
    delayCapabilities: async (ms) => driver.script('ControllerGetCapabilities', { delayMs: ms }),
    bigPluginInfo: async (bytes) => driver.script('GetPluginInfo', { response: { name: driver.name, vendor_version: 'x'.repeat(bytes), manifest: {} } }),
    restart: () => driver.restart(),
    stop: () => driver.stop(),
  };
}

async function cCoreServer(): Promise<Server> {
  const driver = await PythonCsiDriver.start('c-core.csi.test');
  return {
    name: 'gRPC C-core (python3-grpcio)',
    address: driver.address,
    volume: async () => 'vol-1',
    failExpand: (code, details, detailsBin) =>
      driver.script('ControllerExpandVolume', { code, details, ...(detailsBin ? { detailsBin: detailsBin.toString('base64') } : {}) }),
    delayCapabilities: (ms) => driver.script('ControllerGetCapabilities', { delayMs: ms }),
    bigPluginInfo: (bytes) => driver.script('GetPluginInfo', { vendorVersionBytes: bytes }),
    restart: () => driver.restart(),
    stop: () => driver.stop(),
  };
}

async function grpcGoServer(): Promise<Server> {
  const driver = await startMockDriver({ name: 'grpc-go.csi.test' });
  const unsupported = () => Promise.reject(new Error('the mock driver cannot be scripted'));
  return {
    name: 'grpc-go (Kubernetes e2e mock driver)',
    address: driver.address,
    volume: async () => {
      const admin = csiTestClient(driver.protoPath, driver.address);
      try {
        const res = await admin.call<{ volume: { volume_id: string } }>('Controller', 'CreateVolume', {
          name: `v-${Date.now()}`,
          capacity_range: { required_bytes: GiB.toString() },
          volume_capabilities: [{ mount: { fs_type: 'ext4' }, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
        });
        return res.volume.volume_id;
      } finally {
        admin.close();
      }
    },
    failExpand: unsupported,
    delayCapabilities: unsupported,
    bigPluginInfo: unsupported,
    restart: () => driver.restart(),
    stop: () => driver.stop(),
  };
}

type Row = {
  name: string;
  needs?: Scriptable;
  /** The client's connection-loss grace, where the row must show that a call does not wait for it. */
  connectionLossGraceMs?: number;
  run: (server: Server, client: GrpcCsiClient, t: { after(fn: () => unknown): void }) => Promise<void>;
};

const rows: Row[] = [
  {
    name: 'Probe and GetPluginInfo at start-up, then the capabilities',
    run: async (_server, client) => {
      assert.match(client.driverName, /\.csi\.test$/);
      const caps = await discoverCapabilities(client, never);
      assert.equal(caps.controllerService, true);
      assert.equal(caps.controllerExpand, true);
      assert.equal(caps.controllerModify, true);
      assert.equal(caps.volumeExpansion, 'online');
    },
  },
  {
    name: 'expand and modify',
    run: async (server, client) => {
      const volumeId = await server.volume();
      const expanded = await client.expandVolume({ volumeId, requiredBytes: 2n * GiB, secrets: { key: 'value' }, capability: null }, never);
      assert.equal(expanded.capacityBytes, 2n * GiB);
      await client.modifyVolume({ volumeId, secrets: {}, mutableParameters: {} }, never);
    },
  },
  {
    name: 'an unknown volume is NotFound',
    run: async (_server, client) => {
      const err = await failure(client.expandVolume({ volumeId: 'no-such-volume', requiredBytes: GiB, secrets: {}, capability: null }, never));
      assert.equal(err.code, status.NOT_FOUND, err.message);
    },
  },
  {
    name: 'every status code, with a Unicode, % and newline message',
    needs: 'status',
    run: async (server, client) => {
      for (let code = 1; code <= 16; code++) {
        await server.failExpand(code, MESSAGE);
        const err = await failure(client.expandVolume({ volumeId: await server.volume(), requiredBytes: 2n * GiB, secrets: {}, capability: null }, never));
        assert.equal(err.code, code, err.message);
        assert.equal(err.details, MESSAGE, `code ${code}`);
      }
    },
  },
  {
    name: "a driver's own Unavailable and Internal come back at once, without the connection-loss grace, and are not sent again",
    needs: 'status',
    connectionLossGraceMs: 60_000,
    run: async (server, client) => {
      for (const code of [status.UNAVAILABLE, status.INTERNAL]) {
        await server.failExpand(code, MESSAGE);
        const started = Date.now();
        const err = await failure(client.expandVolume({ volumeId: await server.volume(), requiredBytes: 2n * GiB, secrets: {}, capability: null }, never));
        // Only the next call is scripted to fail: had the client sent it again, it would have succeeded.
        assert.equal(err.code, code, err.message);
        // The client's 1.5 s deadline would end a call that waited for the grace; it did not.
        assert.ok(Date.now() - started < 1500, `ended after ${Date.now() - started} ms`);
      }
    },
  },
  {
    name: 'status details (grpc-status-details-bin) arrive with the status',
    needs: 'details',
    run: async (server, client) => {
      await server.failExpand(status.INVALID_ARGUMENT, 'bad size', DETAILS_BIN);
      const err = await failure(client.expandVolume({ volumeId: await server.volume(), requiredBytes: 2n * GiB, secrets: {}, capability: null }, never));
      assert.equal(err.code, status.INVALID_ARGUMENT);
      assert.equal(err.details, 'bad size');
      const sent = (err.cause as ServiceError).metadata.get('grpc-status-details-bin')[0];
      assert.ok(Buffer.isBuffer(sent) && sent.equals(DETAILS_BIN), String(sent));
    },
  },
  {
    name: 'a driver slower than the deadline: DeadlineExceeded at the timeout',
    needs: 'delay',
    run: async (server, client) => {
      await server.delayCapabilities(3000);
      const started = Date.now();
      const err = await failure(client.getControllerCapabilities(never));
      assert.equal(err.code, status.DEADLINE_EXCEEDED, err.message);
      assert.ok(Date.now() - started < 2900, `ended after ${Date.now() - started} ms`);
    },
  },
  {
    name: 'a 1 MiB response is taken; a 5 MiB one ends ResourceExhausted',
    needs: 'big',
    run: async (server, client) => {
      await server.bigPluginInfo(MiB);
      assert.equal((await client.getPluginInfo(never)).vendorVersion.length, MiB);
      await server.bigPluginInfo(5 * MiB);
      const err = await failure(client.getPluginInfo(never));
      assert.equal(err.code, status.RESOURCE_EXHAUSTED, err.message);
      assert.match(err.details, /larger than max/);
    },
  },
  {
    name: '200 concurrent calls',
    run: async (_server, client) => {
      const results = await Promise.all(Array.from({ length: 200 }, () => client.getControllerCapabilities(never)));
      assert.ok(results.every((r) => r.expandVolume));
    },
  },
  {
    name: 'the server restarted between calls',
    run: async (server, client) => {
      await client.getControllerCapabilities(never);
      await server.restart();
      assert.equal((await client.getControllerCapabilities(never)).expandVolume, true);
    },
  },
];

// The mock driver runs every row without `needs`: start-up and capabilities, expand and modify,
// NotFound, 200 concurrent calls, a restart. The scripted rows run on the other two.
const servers: Array<{ name: string; scriptable: boolean; start: () => Promise<Server> }> = [
  { name: 'grpc-go', scriptable: false, start: grpcGoServer },
  { name: '@grpc/grpc-js', scriptable: true, start: grpcJsServer },
  { name: 'gRPC C-core', scriptable: true, start: cCoreServer },
];

for (const { name, scriptable, start } of servers) {
  for (const row of rows.filter((r) => scriptable || !r.needs)) {
    test(`${name}: ${row.name}`, async (t) => {
      const server = await start();
      t.after(() => server.stop());
      const client = await GrpcCsiClient.start(
        {
          address: server.address,
          timeoutMs: 1500,
          log: silentLogger,
          metrics: createMetrics(),
          probeIntervalMs: 50,
          connectionLossGraceMs: row.connectionLossGraceMs,
        },
        never,
      );
      t.after(() => client.close());
      await row.run(server, client, t);
    });
  }
}
