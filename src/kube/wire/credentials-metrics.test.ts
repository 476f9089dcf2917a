// What credential resolution records as client-go's REST client metrics (docs/behavior.md §5.3,
// "REST client"): each exec plugin run with its exit code and call status, the TTL of the client
// certificate an exec plugin returned (+Inf without one, and once its client is closed), how long a
// plugin certificate lived when the plugin returns another, and each re-read of a CA file with its
// outcome. A real HTTPS server on loopback, real plugin scripts and throwaway certificates.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { KubeApiError } from '../api/errors.js';
import { KubeHttp } from './http.js';
import type { ClientConfig } from './kubeconfig.js';
import { createMetrics, type Metrics } from '../../observability/metrics.js';
import { listenOnLoopback, tempDir as tempDirFor } from '../../../test/support/loopback.js';
import { selfSigned } from '../../../test/support/self-signed.js';

const tempDir = (t: TestContext) => tempDirFor(t, 'rz-cred-metrics-');

const serverTls = selfSigned();

async function server(t: TestContext): Promise<string> {
  const srv = https.createServer({ cert: serverTls.cert, key: serverTls.key }, (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
  });
  return `https://127.0.0.1:${await listenOnLoopback(t, srv)}`;
}

/** A client that resolves its credentials again for every request (authRefreshMs 0). */
function client(t: TestContext, kubeConfig: ClientConfig, metrics: Metrics): KubeHttp {
  const c = new KubeHttp({ kubeConfig, qps: 0, burst: 1, authRefreshMs: 0, metrics: metrics.restClient });
  t.after(() => c.close());
  return c;
}

async function samples(metrics: Metrics, name: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const line of (await metrics.registry.metrics()).split('\n')) {
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m?.[1] === name) out[m[2] ?? ''] = m[3] === '+Inf' ? Infinity : Number(m[3]);
  }
  return out;
}

const get = (c: KubeHttp) => c.request({ method: 'GET', path: '/api' }, AbortSignal.timeout(10_000));

/**
 * A plugin that prints the ExecCredential in out-<mode>.json, the mode read from the file `mode`
 * beside it, or exits 3 in mode "fail".
 */
function plugin(dir: string): { command: string; use(mode: string): void; answer(mode: string, status: object): void } {
  const command = path.join(dir, 'plugin.sh');
  fs.writeFileSync(command, `#!/bin/sh\nmode=$(cat "${dir}/mode")\n[ "$mode" = fail ] && exit 3\ncat "${dir}/out-$mode.json"\n`, { mode: 0o755 });
  return {
    command,
    use: (mode) => fs.writeFileSync(path.join(dir, 'mode'), mode),
    answer: (mode, status) =>
      fs.writeFileSync(path.join(dir, `out-${mode}.json`), JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status })),
  };
}

function execConfig(server: string, command: string): ClientConfig {
  return {
    server,
    ca: { data: serverTls.cert },
    insecureSkipTlsVerify: false,
    auth: { kind: 'exec', plugin: { command, args: [], env: {}, apiVersion: 'client.authentication.k8s.io/v1', dir: path.dirname(command) } },
  };
}

test('exec plugin: each run counted by exit code and status; its certificate sets the TTL and, replaced, records its age', async (t) => {
  const dir = tempDir(t);
  const url = await server(t);
  const p = plugin(dir);
  const [first, second] = [selfSigned(), selfSigned()];
  // Credentials that expire at once: the client runs the plugin again for each request.
  const expirationTimestamp = new Date(Date.now() + 1_000).toISOString();
  p.answer('a', { clientCertificateData: first.cert.toString(), clientKeyData: first.key.toString(), expirationTimestamp });
  p.answer('b', { clientCertificateData: second.cert.toString(), clientKeyData: second.key.toString(), expirationTimestamp });
  p.use('a');
  const metrics = createMetrics();
  const c = client(t, execConfig(url, p.command), metrics);

  await get(c);
  await get(c);
  assert.deepEqual(await samples(metrics, 'rest_client_exec_plugin_call_total'), { 'code="0",call_status="no_error"': 2 });
  const notAfterMs = new X509Certificate(first.cert).validToDate.getTime();
  const ttl = (await samples(metrics, 'rest_client_exec_plugin_ttl_seconds'))['']!;
  assert.ok(Math.abs(ttl - (notAfterMs - Date.now()) / 1000) < 60, `TTL ${ttl} s`);
  assert.equal((await samples(metrics, 'rest_client_exec_plugin_certificate_rotation_age_count'))[''], 0, 'the same certificate twice is no rotation');

  p.use('b');
  await get(c);
  assert.equal((await samples(metrics, 'rest_client_exec_plugin_certificate_rotation_age_count'))[''], 1);
  // The first certificate was made moments ago: it lived less than the first bucket's 10 minutes.
  assert.equal((await samples(metrics, 'rest_client_exec_plugin_certificate_rotation_age_bucket'))['le="600"'], 1);

  p.use('fail');
  await assert.rejects(get(c), /exec credential plugin .* failed/);
  assert.deepEqual(await samples(metrics, 'rest_client_exec_plugin_call_total'), {
    'code="0",call_status="no_error"': 3,
    'code="3",call_status="plugin_execution_error"': 1,
  });
  assert.equal((await samples(metrics, 'rest_client_requests_total'))[`code="<error>",method="GET",host="${new URL(url).host}"`], 1);

  c.close();
  assert.equal((await samples(metrics, 'rest_client_exec_plugin_ttl_seconds'))[''], Infinity, 'a closed client has no certificate');
});

test('exec plugin: a token alone leaves the TTL at +Inf; a command that cannot be started is plugin_not_found_error', async (t) => {
  const dir = tempDir(t);
  const url = await server(t);
  const p = plugin(dir);
  p.answer('token', { token: 't' });
  p.use('token');
  const metrics = createMetrics();
  await get(client(t, execConfig(url, p.command), metrics));
  assert.equal((await samples(metrics, 'rest_client_exec_plugin_ttl_seconds'))[''], Infinity);
  await assert.rejects(get(client(t, execConfig(url, path.join(dir, 'missing-plugin')), metrics)), /exec credential plugin .* failed/);
  assert.deepEqual(await samples(metrics, 'rest_client_exec_plugin_call_total'), {
    'code="0",call_status="no_error"': 1,
    'code="1",call_status="plugin_not_found_error"': 1,
  });
});

test("CA file: each re-read counted by result and reason; a client's first read is no reload", async (t) => {
  const dir = tempDir(t);
  const url = await server(t);
  const caFile = path.join(dir, 'ca.crt');
  fs.writeFileSync(caFile, serverTls.cert);
  const metrics = createMetrics();
  const config: ClientConfig = { server: url, ca: { file: caFile }, insecureSkipTlsVerify: false, auth: { kind: 'none' } };
  const c = client(t, config, metrics);
  const reloads = () => samples(metrics, 'rest_client_transport_ca_reload_total');

  await get(c);
  // Another client of the same configuration (the leader elector's) reads the file for the first time.
  await get(client(t, config, metrics));
  assert.deepEqual(await reloads(), {});
  await get(c);
  assert.deepEqual(await reloads(), { 'result="success",reason="unchanged"': 1 });
  // A rotation caught half-way: the CA in use stays, and the request still succeeds.
  for (const [content, reason] of [
    ['not a certificate', 'ca_parse_error'],
    ['', 'empty'],
  ] as const) {
    fs.writeFileSync(caFile, content);
    await get(c);
    assert.equal((await reloads())[`result="failure",reason="${reason}"`], 1, reason);
  }
  fs.rmSync(caFile);
  await get(c);
  assert.equal((await reloads())['result="failure",reason="read_error"'], 1);
  fs.writeFileSync(caFile, Buffer.concat([serverTls.cert, Buffer.from('\n')]));
  await get(c);
  assert.equal((await reloads())['result="success",reason="updated"'], 1);
  assert.equal((await reloads())['result="success",reason="unchanged"'], 1);
});

test('a failure before any answer, such as credentials that cannot be read, is one <error> attempt', async (t) => {
  const dir = tempDir(t);
  const url = await server(t);
  const metrics = createMetrics();
  const c = client(
    t,
    { server: url, ca: { data: serverTls.cert }, insecureSkipTlsVerify: false, auth: { kind: 'tokenFile', path: path.join(dir, 'absent') } },
    metrics,
  );
  const err = await get(c).catch((e: unknown) => e);
  assert.ok(err instanceof Error && !(err instanceof KubeApiError), String(err));
  assert.deepEqual(await samples(metrics, 'rest_client_requests_total'), { [`code="<error>",method="GET",host="${new URL(url).host}"`]: 1 });
});
