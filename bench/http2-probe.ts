// Evaluation probe (not part of `npm run bench`): the CPU and time one client
// process spends on K small API requests over node:https with a keep-alive agent versus one
// node:http2 session, alternating A B A B. Run inside a test cluster:
//   node --import tsx test/cluster/run-with-cluster.ts -- node --import tsx bench/http2-probe.ts [K] [concurrency] [rounds]
// It GETs and merge-PATCHes one ConfigMap (K/2 each), the same shape as the resizer's writes.
import http2 from 'node:http2';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { parseEnvFile } from '../test/cluster/components.js';
import { CLUSTER_ENV_VAR } from '../test/cluster/test-cluster.js';
import { loadKubeConfig } from '../src/kube/kubeconfig.js';
import { resolveCredentials } from '../src/kube/credentials.js';
import { getPatchLoop } from './lib/request-loop.js';

const [k = 2000, concurrency = 10, rounds = 3] = process.argv.slice(2).map(Number);
const env = parseEnvFile(readFileSync(process.env[CLUSTER_ENV_VAR]!, 'utf8'));
const config = await loadKubeConfig({ kubeconfigPath: env.get('ADMIN_KUBECONFIG')!, masterUrl: '' });
const creds = await resolveCredentials(config, AbortSignal.timeout(30_000));
const server = new URL(config.server);
const path = '/api/v1/namespaces/default/configmaps/h2-probe';

type Send = (method: string, path: string, body?: string) => Promise<number>;

function viaHttps(): { send: Send; close(): void } {
  const agent = new https.Agent({ keepAlive: true, ...creds.tls });
  const send: Send = (method, p, body) =>
    new Promise((resolve, reject) => {
      const req = https.request(
        new URL(server.origin + p),
        {
          method,
          agent,
          headers: {
            ...creds.headers,
            Accept: 'application/json',
            ...(body ? { 'Content-Type': 'application/merge-patch+json', 'Content-Length': String(Buffer.byteLength(body)) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            JSON.parse(Buffer.concat(chunks).toString('utf8'));
            resolve(res.statusCode ?? 0);
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  return { send, close: () => agent.destroy() };
}

function viaHttp2(): { send: Send; close(): void } {
  const session = http2.connect(server.origin, { ...creds.tls });
  const send: Send = (method, p, body) =>
    new Promise((resolve, reject) => {
      const stream = session.request({
        ':method': method,
        ':path': p,
        ...creds.headers,
        accept: 'application/json',
        ...(body ? { 'content-type': 'application/merge-patch+json' } : {}),
      });
      let status = 0;
      const chunks: Buffer[] = [];
      stream.on('response', (h) => {
        status = Number(h[':status']);
      });
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        JSON.parse(Buffer.concat(chunks).toString('utf8'));
        resolve(status);
      });
      stream.on('error', reject);
      stream.end(body);
    });
  return { send, close: () => session.close() };
}

async function run(name: string, make: () => { send: Send; close(): void }): Promise<{ cpuMs: number; wallMs: number }> {
  const client = make();
  await client.send('GET', path); // connection set-up outside the measurement
  const { cpuMs, wallMs } = await getPatchLoop(k, concurrency, async (i, patch) => {
    const status = patch ? await client.send('PATCH', path, JSON.stringify({ data: { n: String(i) } })) : await client.send('GET', path);
    if (status !== 200) throw new Error(`${name}: status ${status}`);
  });
  client.close();
  return { cpuMs, wallMs };
}

// The ConfigMap both clients read and patch (an existing one from an earlier run is fine).
await new Promise<void>((resolve) => {
  const req = https.request(
    new URL(server.origin + '/api/v1/namespaces/default/configmaps'),
    {
      method: 'POST',
      ...creds.tls,
      headers: { ...creds.headers, 'Content-Type': 'application/json' },
    },
    (res) => {
      res.resume();
      res.on('end', () => resolve());
    },
  );
  req.on('error', () => resolve());
  req.end(JSON.stringify({ metadata: { name: 'h2-probe' }, data: {} }));
});

const results: Record<string, Array<{ cpuMs: number; wallMs: number }>> = { https: [], http2: [] };
for (let r = 0; r < rounds; r++) {
  results['https']!.push(await run('https', viaHttps));
  results['http2']!.push(await run('http2', viaHttp2));
}
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
for (const [name, rs] of Object.entries(results)) {
  const cpu = rs.map((x) => x.cpuMs).sort((a, b) => a - b);
  const wall = rs.map((x) => x.wallMs).sort((a, b) => a - b);
  process.stdout.write(
    `${name}: ${k} requests x ${rounds} rounds, concurrency ${concurrency}: CPU ms ${cpu.map((x) => x.toFixed(0)).join(' ')} (median ${((cpu[cpu.length >> 1]! / k) * 1000).toFixed(0)} us/request), wall ms ${wall.map((x) => x.toFixed(0)).join(' ')}\n`,
  );
}
process.stdout.write(`loadavg at end ${load}\n`);
