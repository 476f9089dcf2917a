// A rotated CA file, as client-go 1.36+ rotates it: read again on every resolution, a file caught
// half-way (empty, broken, missing) leaves the last good CA in use, a new CA verifies the new
// connections, and a watch opened before the rotation stays open. A real HTTPS server on loopback
// whose certificate (its own CA) is swapped, and which closes every ordinary request's connection,
// so each request is verified anew.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { KubeHttp } from './http.js';
import { listenOnLoopback, tempDir, type Cleanup } from '../../../test/support/loopback.js';
import { selfSigned } from '../../../test/support/self-signed.js';

async function rotatingServer(t: Cleanup, first: { cert: Buffer; key: Buffer }) {
  const watches: ServerResponse[] = [];
  let handshakes = 0;
  const server = https.createServer({ cert: first.cert, key: first.key }, (req, res) => {
    if (req.url?.startsWith('/watch')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"n":1}\n');
      watches.push(res);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
    res.end('{}');
  });
  server.on('secureConnection', () => handshakes++);
  const port = await listenOnLoopback(t, server);
  return {
    port,
    watches,
    handshakes: () => handshakes,
    /** The server presents a certificate of another CA from its next connection on. */
    recertify: (next: { cert: Buffer; key: Buffer }) => server.setSecureContext({ cert: next.cert, key: next.key }),
  };
}

function caFileClient(t: Cleanup, port: number, caFile: string): KubeHttp {
  const client = new KubeHttp({
    kubeConfig: { server: `https://127.0.0.1:${port}`, ca: { file: caFile }, insecureSkipTlsVerify: false, auth: { kind: 'none' } },
    qps: 0,
    burst: 1,
    authRefreshMs: 0,
  });
  t.after(() => client.close());
  return client;
}

/** Replaced in one step, as kubelet swaps a projected volume's files. */
function replaceFile(path: string, data: string | Buffer): void {
  writeFileSync(`${path}.new`, data);
  renameSync(`${path}.new`, path);
}

test('a CA file caught half-way (empty, no certificate, missing) keeps the CA last read; a new CA verifies new connections; an open watch stays', async (t) => {
  const ca1 = selfSigned();
  const ca2 = selfSigned();
  const server = await rotatingServer(t, ca1);
  const dir = tempDir(t, 'rz-ca-rotate-');
  const caFile = join(dir, 'ca.crt');
  writeFileSync(caFile, ca1.cert);
  const client = caFileClient(t, server.port, caFile);
  const signal = AbortSignal.timeout(20_000);
  const get = (path: string) => client.request({ method: 'GET', path }, signal);

  await get('/a');
  const watch = await client.stream({ path: '/watch' }, signal);
  const lines = watch[Symbol.asyncIterator]();
  assert.equal(String((await lines.next()).value).trim(), '{"n":1}');

  for (const [what, write] of [
    ['empty', () => replaceFile(caFile, '')],
    ['no certificate in it', () => replaceFile(caFile, '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n')],
    ['missing', () => rmSync(caFile)],
  ] as const) {
    write();
    const before = server.handshakes();
    await get(`/while-${what.replaceAll(' ', '-')}`);
    assert.equal(server.handshakes(), before + 1, `a new connection, verified with the CA last read, while the file is ${what}`);
  }

  // The rotation: the server is certified by another CA, and the file says so.
  server.recertify(ca2);
  replaceFile(caFile, ca2.cert);
  await get('/after-rotation');
  // A client that still trusts only the old CA is refused by the re-certified server: the check is real.
  const stale = join(dir, 'stale-ca.crt');
  writeFileSync(stale, ca1.cert);
  await assert.rejects(caFileClient(t, server.port, stale).request({ method: 'GET', path: '/stale' }, signal), /certificate|self.signed/i);

  // The watch opened before the rotation is still open: it gets what the server sends now.
  assert.equal(server.watches.length, 1);
  server.watches[0]!.write('{"n":2}\n');
  assert.equal(String((await lines.next()).value).trim(), '{"n":2}');
  watch.destroy();
});

test('a CA file that holds no certificate when first read is an error that names it', async (t) => {
  const ca = selfSigned();
  const server = await rotatingServer(t, ca);
  const dir = tempDir(t, 'rz-ca-bad-');
  const caFile = join(dir, 'ca.crt');
  writeFileSync(caFile, 'not a certificate\n');
  await assert.rejects(
    caFileClient(t, server.port, caFile).request({ method: 'GET', path: '/' }, AbortSignal.timeout(10_000)),
    new RegExp(`certificate authority file ${caFile} holds no PEM certificate`),
  );
});
