import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseConfig } from '../../flags/config.js';
import { ApiClientFactory, ClientPurpose } from './client-factory.js';
import { ClientRateLimitError } from './rate-limiter.js';

const PURPOSES = Object.values(ClientPurpose);
const master = '--master=https://127.0.0.1:1';

async function rateLimits(args: string[]): Promise<Record<ClientPurpose, { qps: number; burst: number }>> {
  const factory = await ApiClientFactory.load(parseConfig([master, ...args]));
  const limits = {} as Record<ClientPurpose, { qps: number; burst: number }>;
  for (const purpose of PURPOSES) {
    const client = factory.create(purpose);
    limits[purpose] = client.rateLimit;
    client.close();
  }
  return limits;
}

test("--kube-api-qps=0 gives every client client-go's 5 per second and burst 10 (20 for the one-shot readers)", async () => {
  assert.deepEqual(await rateLimits(['--kube-api-qps=0', '--kube-api-burst=0']), {
    controllers: { qps: 5, burst: 10 },
    'leader-election': { qps: 5, burst: 10 },
    'permission-check': { qps: 5, burst: 20 },
    doctor: { qps: 5, burst: 20 },
    explain: { qps: 5, burst: 20 },
  });
});

test('the flags as given reach every client; a purpose only raises a burst below its smallest', async () => {
  const limits = await rateLimits(['--kube-api-qps=50', '--kube-api-burst=100']);
  for (const purpose of PURPOSES) assert.deepEqual(limits[purpose], { qps: 50, burst: 100 }, purpose);
});

test('a negative --kube-api-qps turns the client-side limit off for every client', async () => {
  const limits = await rateLimits(['--kube-api-qps=-1', '--kube-api-burst=0']);
  for (const purpose of PURPOSES) assert.equal(limits[purpose].qps, 0, `${purpose}: qps 0 is no limit in TokenBucket's terms`);
});

test('flags client-go refuses fail the load, before any client is made', async () => {
  for (const args of [
    ['--kube-api-qps=5', '--kube-api-burst=0'],
    ['--kube-api-qps=0', '--kube-api-burst=-1'],
  ]) {
    await assert.rejects(ApiClientFactory.load(parseConfig([master, ...args])), ClientRateLimitError, args.join(' '));
  }
});

test("the User-Agent names the purpose; the controllers' client names the version", async (t) => {
  const agents: string[] = [];
  const server = http.createServer((req, res) => {
    agents.push(req.headers['user-agent'] ?? '');
    res.setHeader('content-type', 'application/json');
    res.end('{"gitVersion":"v1.37.0"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  const factory = await ApiClientFactory.load(parseConfig([`--master=http://127.0.0.1:${port}`]), { version: 'v9.9.9' });
  for (const purpose of PURPOSES) {
    const client = factory.create(purpose);
    try {
      await client.serverVersion(AbortSignal.timeout(10_000));
    } finally {
      client.close();
    }
  }
  assert.deepEqual(agents, ['csi-resizer/v9.9.9', 'csi-resizer/permission-check', 'csi-resizer/leader-election', 'csi-resizer/doctor', 'csi-resizer/explain']);
});
