// The request layer over TLS: its two keep-alive pools (requests, watches) resume one TLS session,
// so only a client's first connection pays a full handshake; the CA, the server's name (SNI,
// tls-server-name), insecure-skip-tls-verify and client certificates, also rotated. A real HTTPS
// server on loopback with a throwaway self-signed certificate.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { KubeHttp } from './http.js';
import type { ClientConfig } from './kubeconfig.js';
import { listenOnLoopback, tempDir, type Cleanup } from '../../../test/support/loopback.js';
import { selfSigned } from '../../../test/support/self-signed.js';

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
  const port = await listenOnLoopback(t, server);

  const client = new KubeHttp({
    kubeConfig: { server: `https://127.0.0.1:${port}`, ca: { data: cert }, insecureSkipTlsVerify: false, auth: { kind: 'none' } },
    qps: 0,
    burst: 1,
  });
  t.after(() => client.close());
  const signal = AbortSignal.timeout(10_000);
  await client.request({ method: 'GET', path: '/api/v1' }, signal);
  const watching = new AbortController();
  t.after(() => watching.abort());
  await client.stream({ path: '/api/v1/pods', query: { watch: true } }, watching.signal);
  await client.request({ method: 'GET', path: '/api/v1' }, signal);
  await client.request({ method: 'GET', path: '/api/v1' }, signal);
  assert.ok(resumed.length >= 2, 'a connection for requests, one for the watch');
  assert.deepEqual(resumed, [false, ...resumed.slice(1).map(() => true)], 'only the first connection had a full handshake');
});

/** An HTTPS server answering {} and recording, per request, the SNI name and the client certificate's fingerprint. */
async function recordingServer(t: Cleanup, cert: Buffer, key: Buffer) {
  const seen: Array<{ servername: string | false | null; clientCert: string | undefined; authorization: string | undefined }> = [];
  const server = https.createServer({ cert, key, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const socket = req.socket as TLSSocket;
    const peer = socket.getPeerCertificate();
    seen.push({
      servername: socket.servername,
      clientCert: peer && 'fingerprint256' in peer ? peer.fingerprint256 : undefined,
      authorization: req.headers.authorization,
    });
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{}');
  });
  return { seen, port: await listenOnLoopback(t, server) };
}

test('TLS verification: the CA is checked, the name too (tls-server-name is sent as SNI); insecure skips both; no token in errors', async (t) => {
  const { cert, key } = selfSigned('DNS:kube.test,IP:127.0.0.1');
  const other = selfSigned();
  const { seen, port } = await recordingServer(t, cert, key);
  const token = 'secret-token-value';
  const call = async (config: Partial<ClientConfig>) => {
    const client = new KubeHttp({
      kubeConfig: { server: `https://127.0.0.1:${port}`, insecureSkipTlsVerify: false, auth: { kind: 'token', token }, ...config },
      qps: 0,
      burst: 1,
    });
    try {
      return await client.request({ method: 'GET', path: '/api/v1' }, AbortSignal.timeout(10_000));
    } finally {
      client.close();
    }
  };
  await call({ ca: { data: cert } });
  assert.equal(seen.at(-1)?.servername, false, 'no SNI for an IP address');
  assert.equal(seen.at(-1)?.authorization, `Bearer ${token}`);
  await call({ ca: { data: cert }, tlsServerName: 'kube.test' });
  assert.equal(seen.at(-1)?.servername, 'kube.test');
  const requests = seen.length;
  const untrusted = await call({ ca: { data: other.cert } }).catch((e: unknown) => e);
  assert.ok(untrusted instanceof Error, 'a certificate from another CA is refused');
  assert.match(untrusted.message, /certificate/);
  const wrongName = await call({ ca: { data: cert }, tlsServerName: 'elsewhere.test' }).catch((e: unknown) => e);
  assert.ok(wrongName instanceof Error, 'a name the certificate does not carry is refused');
  assert.match(wrongName.message, /does not match certificate's altnames/);
  assert.equal(seen.length, requests, 'nothing was sent over a refused connection');
  for (const err of [untrusted, wrongName]) assert.ok(!JSON.stringify({ m: err.message, s: err.stack }).includes(token));
  await call({ ca: { data: other.cert }, insecureSkipTlsVerify: true, tlsServerName: 'elsewhere.test' });
  assert.equal(seen.length, requests + 1, 'insecure-skip-tls-verify connects anyway');
});

test('client certificate rotation: requests after the files change use new connections with the new certificate', async (t) => {
  const { cert, key } = selfSigned();
  const { seen, port } = await recordingServer(t, cert, key);
  const dir = tempDir(t, 'rz-tls-rotate-');
  const first = selfSigned();
  const second = selfSigned();
  const certFile = join(dir, 'client.crt');
  const keyFile = join(dir, 'client.key');
  writeFileSync(certFile, first.cert);
  writeFileSync(keyFile, first.key);
  const client = new KubeHttp({
    kubeConfig: {
      server: `https://127.0.0.1:${port}`,
      ca: { data: cert },
      clientCert: { file: certFile },
      clientKey: { file: keyFile },
      insecureSkipTlsVerify: false,
      auth: { kind: 'none' },
    },
    qps: 0,
    burst: 1,
    authRefreshMs: 0,
  });
  t.after(() => client.close());
  const signal = AbortSignal.timeout(10_000);
  await client.request({ method: 'GET', path: '/a' }, signal);
  await client.request({ method: 'GET', path: '/b' }, signal);
  writeFileSync(certFile, second.cert);
  writeFileSync(keyFile, second.key);
  await client.request({ method: 'GET', path: '/c' }, signal);
  const fingerprints = seen.map((s) => s.clientCert);
  assert.ok(fingerprints[0] !== undefined);
  assert.equal(fingerprints[1], fingerprints[0]);
  assert.notEqual(fingerprints[2], fingerprints[0], 'the rotated certificate is presented');
});

test('a token that would break the request head (a newline in a token file) is refused, naming the header, not the token', async (t) => {
  const { cert, key } = selfSigned();
  const { seen, port } = await recordingServer(t, cert, key);
  const token = 'tok-part-one\r\nX-Injected: yes';
  const client = new KubeHttp({
    kubeConfig: { server: `https://127.0.0.1:${port}`, ca: { data: cert }, insecureSkipTlsVerify: false, auth: { kind: 'token', token } },
    qps: 0,
    burst: 1,
  });
  t.after(() => client.close());
  const err = await client.request({ method: 'GET', path: '/api/v1' }, AbortSignal.timeout(10_000)).catch((e: unknown) => e);
  assert.ok(err instanceof Error);
  assert.equal(err.message, 'invalid character in the value of HTTP header "Authorization"');
  assert.ok(!String(err.stack).includes('tok-part-one'));
  assert.equal(seen.length, 0);
});
