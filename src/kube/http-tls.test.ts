// The request layer over TLS: its two keep-alive pools (requests, watches) resume one TLS session,
// so only a client's first connection pays a full handshake. A real HTTPS server on loopback with a
// throwaway self-signed certificate (made by the openssl command line).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { KubeHttp } from './http.js';

function selfSigned(): { cert: Buffer; key: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'rz-tls-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore', timeout: 30_000 });
    return { cert: readFileSync(join(dir, 'cert.pem')), key: readFileSync(join(dir, 'key.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('requests and watches: separate connections, one TLS session (only the first handshake is full)', async (t) => {
  const { cert, key } = selfSigned();
  /** Per accepted connection: whether it resumed a session. */
  const resumed: boolean[] = [];
  const server = https.createServer({ cert, key }, (req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (req.url?.includes('watch=true')) {
      res.flushHeaders();
      return; // held open, as a watch is
    }
    res.end('{}');
  });
  server.on('secureConnection', (socket: TLSSocket) => resumed.push(socket.isSessionReused()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => {
    server.close(resolve);
    server.closeAllConnections();
  }));
  const port = (server.address() as AddressInfo).port;

  const client = new KubeHttp({
    kubeConfig: { server: `https://127.0.0.1:${port}`, ca: { data: cert }, insecureSkipTlsVerify: false, auth: { kind: 'none' } },
    qps: 0, burst: 1,
  });
  t.after(() => client.close());
  const signal = AbortSignal.timeout(10_000);
  await client.request({ method: 'GET', path: '/api/v1' }, signal);
  const watching = new AbortController();
  t.after(() => watching.abort());
  const watch = await client.stream({ path: '/api/v1/pods', query: { watch: true } }, watching.signal);
  watch.on('error', () => {});
  await client.request({ method: 'GET', path: '/api/v1' }, signal);
  await client.request({ method: 'GET', path: '/api/v1' }, signal);
  assert.deepEqual(resumed, [false, true], 'one connection for requests (full handshake), one for the watch (resumed)');
});
