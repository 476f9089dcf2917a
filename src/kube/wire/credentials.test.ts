// How long a client keeps each kind of credential, as client-go keeps it: an exec plugin's answer
// until shortly before its expirationTimestamp (for good without one) or until the server refuses
// it, while token files are read again each time the client's credentials are refreshed. A real
// plugin script that counts its runs, and a loopback server that records the Authorization header.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { recordingHttpServer, tempDir } from '../../../test/support/loopback.js';
import { KubeHttp } from './http.js';
import type { ClientConfig } from './kubeconfig.js';

/**
 * A plugin that prints the token `t-<run>` (its runs counted in the file `runs`) with the
 * expirationTimestamp in the file `expiry`, if there is one.
 */
function countingPlugin(dir: string): { command: string; runs(): number; expireAt(date: Date): void } {
  const command = path.join(dir, 'plugin.sh');
  const runs = path.join(dir, 'runs');
  const expiry = path.join(dir, 'expiry');
  fs.writeFileSync(
    command,
    `#!/bin/sh
echo run >>"${runs}"
n=$(wc -l <"${runs}" | tr -d ' ')
exp=""
[ -f "${expiry}" ] && exp=",\\"expirationTimestamp\\":\\"$(cat "${expiry}")\\""
echo "{\\"apiVersion\\":\\"client.authentication.k8s.io/v1\\",\\"kind\\":\\"ExecCredential\\",\\"status\\":{\\"token\\":\\"t-$n\\"$exp}}"
`,
    { mode: 0o755 },
  );
  return {
    command,
    runs: () => (fs.existsSync(runs) ? fs.readFileSync(runs, 'utf8').split('\n').filter(Boolean).length : 0),
    expireAt: (date) => fs.writeFileSync(expiry, date.toISOString().replace(/\.\d{3}Z$/, 'Z')),
  };
}

function execConfig(server: string, command: string): ClientConfig {
  return {
    server,
    insecureSkipTlsVerify: false,
    auth: { kind: 'exec', plugin: { command, args: [], env: {}, apiVersion: 'client.authentication.k8s.io/v1', dir: path.dirname(command) } },
  };
}

/** A client that refreshes its credentials for every request (authRefreshMs 0), the most a client can. */
function client(t: { after: (fn: () => void) => void }, kubeConfig: ClientConfig): KubeHttp {
  const c = new KubeHttp({ kubeConfig, qps: 0, burst: 1, authRefreshMs: 0 });
  t.after(() => c.close());
  return c;
}

const get = (c: KubeHttp) => c.request({ method: 'GET', path: '/api' }, AbortSignal.timeout(10_000));

test('exec plugin: its credential is kept until shortly before its expirationTimestamp, however often the client refreshes', async (t) => {
  const dir = tempDir(t, 'rz-creds-');
  const p = countingPlugin(dir);
  p.expireAt(new Date(Date.now() + 3_600_000));
  const { seen, url } = await recordingHttpServer(t, (_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'));
  const c = client(t, execConfig(url, p.command));
  for (let i = 0; i < 5; i++) await get(c);
  assert.equal(p.runs(), 1);
  assert.deepEqual(
    seen.map((r) => r.authorization),
    Array(5).fill('Bearer t-1'),
  );

  // A credential that expires within the refresh margin is fetched again for each request.
  p.expireAt(new Date(Date.now() + 5_000));
  const soon = client(t, execConfig(url, p.command));
  await get(soon);
  await get(soon);
  assert.equal(p.runs(), 3);
  assert.deepEqual(
    seen.slice(5).map((r) => r.authorization),
    ['Bearer t-2', 'Bearer t-3'],
  );
});

test('exec plugin: without an expirationTimestamp its credential is kept until the server refuses it (401), then run once more', async (t) => {
  const dir = tempDir(t, 'rz-creds-');
  const p = countingPlugin(dir);
  let refuse = 'Bearer t-0';
  const { seen, url } = await recordingHttpServer(t, (req, res) => {
    if (req.headers.authorization === refuse)
      res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"kind":"Status","code":401,"reason":"Unauthorized"}');
    else res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
  });
  const c = client(t, execConfig(url, p.command));
  await get(c);
  await get(c);
  assert.equal(p.runs(), 1);
  refuse = 'Bearer t-1';
  await get(c);
  await get(c);
  assert.equal(p.runs(), 2);
  assert.deepEqual(
    seen.map((r) => r.authorization),
    ['Bearer t-1', 'Bearer t-1', 'Bearer t-1', 'Bearer t-2', 'Bearer t-2'],
  );
});

test('token file: read again at each refresh, so a rotated token is sent from the next request on', async (t) => {
  const dir = tempDir(t, 'rz-creds-');
  const tokenFile = path.join(dir, 'token');
  fs.writeFileSync(tokenFile, 'file-1\n');
  const { seen, url } = await recordingHttpServer(t, (_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'));
  const c = client(t, { server: url, insecureSkipTlsVerify: false, auth: { kind: 'tokenFile', path: tokenFile } });
  await get(c);
  fs.writeFileSync(tokenFile, 'file-2\n');
  await get(c);
  assert.deepEqual(
    seen.map((r) => r.authorization),
    ['Bearer file-1', 'Bearer file-2'],
  );
});
