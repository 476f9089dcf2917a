// KubeHttp.stream (a watch) against a plain HTTP server: the body as the server sends it, a 401
// answered by reading the credentials again and retrying once (a rotated token), an error status
// turned into a KubeApiError from a bounded read of its body, and watches kept off the connection
// the next ordinary request reuses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { KubeApiError } from '../api/errors.js';
import { KubeHttp } from './http.js';
import { recordingHttpServer, tempDir } from '../../../test/support/loopback.js';

async function text(body: AsyncIterable<Buffer>): Promise<string> {
  let out = '';
  for await (const b of body) out += b.toString('utf8');
  return out;
}

test('stream: a 401 reads the token file again and retries once; the watch then streams as the server sends', async (t) => {
  const dir = tempDir(t, 'rz-watch-');
  const tokenPath = path.join(dir, 'token');
  fs.writeFileSync(tokenPath, 'old-secret\n');
  const { seen, url } = await recordingHttpServer(t, (req, res) => {
    if (req.headers.authorization !== 'Bearer new-secret') {
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', code: 401, reason: 'Unauthorized', message: 'Unauthorized' }));
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"type":"ADDED","object":{}}\n');
    res.end('{"type":"DELETED","object":{}}\n');
  });
  const client = new KubeHttp({ kubeConfig: { server: url, insecureSkipTlsVerify: false, auth: { kind: 'tokenFile', path: tokenPath } }, qps: 0, burst: 1 });
  t.after(() => client.close());
  const signal = AbortSignal.timeout(5000);
  // Credentials resolved (and cached) with the old token...
  await assert.rejects(client.request({ method: 'GET', path: '/api' }, signal), (err) => err instanceof KubeApiError && err.status === 401);
  fs.writeFileSync(tokenPath, 'new-secret\n');
  // ...the watch's 401 makes it read them again.
  const body = await client.stream({ path: '/api/v1/pods', query: { watch: true } }, signal);
  assert.equal(await text(body), '{"type":"ADDED","object":{}}\n{"type":"DELETED","object":{}}\n');
  const watches = seen.filter((s) => s.url.includes('watch=true'));
  assert.deepEqual(
    watches.map((s) => s.authorization),
    ['Bearer old-secret', 'Bearer new-secret'],
  );
});

test('stream: an error status is a KubeApiError from the Status body; a huge error body is read only up to a bound; no secret in it', async (t) => {
  const huge = `{"kind":"Status","message":"${'m'.repeat(3 * 1024 * 1024)}"}`;
  const { url } = await recordingHttpServer(t, (req, res) => {
    if (req.url?.includes('huge')) {
      res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(huge);
      return;
    }
    res.writeHead(410, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (20)' }));
  });
  const token = 'tok-secret-value';
  const client = new KubeHttp({ kubeConfig: { server: url, insecureSkipTlsVerify: false, auth: { kind: 'token', token } }, qps: 0, burst: 1 });
  t.after(() => client.close());
  const signal = AbortSignal.timeout(10_000);
  const gone = await client.stream({ path: '/api/v1/pods', query: { watch: true, resourceVersion: '1' } }, signal).catch((e: unknown) => e);
  assert.ok(gone instanceof KubeApiError, String(gone));
  assert.equal(gone.status, 410);
  assert.equal(gone.reason, 'Expired');
  assert.match(gone.message, /too old resource version/);
  const big = await client.stream({ path: '/huge', query: { watch: true } }, signal).catch((e: unknown) => e);
  assert.ok(big instanceof KubeApiError, String(big));
  assert.equal(big.status, 500);
  assert.ok(big.message.length < 1024 * 1024 + 200, `message of ${big.message.length} characters (the body cut at 1 MiB)`);
  for (const err of [gone, big]) assert.ok(!JSON.stringify({ m: err.message, s: err.stack }).includes(token));
});

test('stream: a watch holds a connection of its own; the request after it reuses the idle request connection; abort ends the watch', async (t) => {
  let watchResponse: http.ServerResponse | undefined;
  const { seen, url } = await recordingHttpServer(t, (req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (req.url?.includes('watch=true')) {
      watchResponse = res;
      res.write('{"type":"ADDED","object":{}}\n');
      return; // held open
    }
    res.end('{}');
  });
  const client = new KubeHttp({ kubeConfig: { server: url, insecureSkipTlsVerify: false, auth: { kind: 'none' } }, qps: 0, burst: 1 });
  t.after(() => client.close());
  const signal = AbortSignal.timeout(5000);
  await client.request({ method: 'GET', path: '/api' }, signal);
  const watching = new AbortController();
  const body = await client.stream({ path: '/api/v1/pods', query: { watch: true } }, watching.signal);
  const it = body[Symbol.asyncIterator]();
  assert.equal((await it.next()).value?.toString(), '{"type":"ADDED","object":{}}\n');
  await client.request({ method: 'GET', path: '/api' }, signal);
  const [first, watch, second] = seen;
  assert.equal(first!.connection, second!.connection, 'the request connection was reused');
  assert.notEqual(watch!.connection, first!.connection, 'the watch has its own');
  const reason = new Error('stopping');
  const pending = it.next();
  watching.abort(reason);
  await assert.rejects(pending, (err) => err === reason);
  const closed = watchResponse!;
  await new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error('the server never saw the watch close')), 5000);
    if (closed.socket === null || closed.socket.destroyed) {
      clearTimeout(deadline);
      resolve();
      return;
    }
    closed.socket.once('close', () => {
      clearTimeout(deadline);
      resolve();
    });
  });
});
