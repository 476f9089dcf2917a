// The kube HTTP port's behaviour on the wire, whatever library carries it: a stale keep-alive
// connection (GET sent again, PATCH not), a rotated token, the caller's deadline, error answers
// as KubeApiError without the raw body in the message, a watch body handed on as it arrives, and
// servers that break HTTP (garbage, a truncated chunked body, a huge head) failing the call with a
// clear error, no crash and no hang. Servers are node:http on loopback, or raw TCP for the broken ones.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { KubeApiError } from '../api/errors.js';
import { ContentType } from '../api/content-type.js';
import { KubeHttp } from './http.js';
import type { ClientAuth } from './kubeconfig.js';
import { listenOnLoopback, recordingHttpServer, tempDir } from '../../../test/support/loopback.js';

/** A TCP server that answers the first bytes of every connection with `reply` (raw, possibly not HTTP). */
async function rawServer(t: TestContext, reply: (socket: net.Socket) => void) {
  const srv = net.createServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', () => reply(socket));
  });
  return `http://127.0.0.1:${await listenOnLoopback(t, srv)}`;
}

function client(t: TestContext, url: string, auth: ClientAuth = { kind: 'none' }, extra: { requestTimeoutMs?: number } = {}): KubeHttp {
  const c = new KubeHttp({ kubeConfig: { server: url, insecureSkipTlsVerify: false, auth }, qps: 0, burst: 1, ...extra });
  t.after(() => c.close());
  return c;
}

const ok = (res: http.ServerResponse, body = '{}') => res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
/** One turn of the event loop: a connection that finished an answer is reused after it. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('stale connection: a GET on a reused connection the server closed without answering is sent again on a new one', async (t) => {
  const { seen, url } = await recordingHttpServer(t, (req, res, entry) => {
    // The server's idle timeout raced our request: it closes the connection instead of answering.
    if (req.url === '/second' && entry.connection === 1) req.socket.destroy();
    else ok(res);
  });
  const c = client(t, url);
  await c.request({ method: 'GET', path: '/first' }, AbortSignal.timeout(5000));
  await turn();
  assert.deepEqual(await c.request({ method: 'GET', path: '/second' }, AbortSignal.timeout(5000)), {});
  assert.deepEqual(
    seen.map((s) => [s.connection, s.url]),
    [
      [1, '/first'],
      [1, '/second'],
      [2, '/second'],
    ],
  );
});

test('stale connection: a PATCH is not sent again; the call fails with an error naming it', async (t) => {
  const { seen, url } = await recordingHttpServer(t, (req, res) => {
    if (req.method === 'PATCH') req.socket.destroy();
    else ok(res);
  });
  const c = client(t, url);
  await c.request({ method: 'GET', path: '/first' }, AbortSignal.timeout(5000));
  await turn();
  const err = await c
    .request({ method: 'PATCH', path: '/p', body: {}, contentType: ContentType.MergePatch }, AbortSignal.timeout(5000))
    .catch((e: unknown) => e);
  assert.ok(err instanceof Error && !(err instanceof KubeApiError), String(err));
  assert.match(err.message, /^PATCH \/p: /);
  assert.equal(seen.filter((s) => s.method === 'PATCH').length, 1);
});

test('a GET on a new connection that the server closes without answering is not sent again', async (t) => {
  const { seen, url } = await recordingHttpServer(t, (req) => req.socket.destroy());
  const err = await client(t, url)
    .request({ method: 'GET', path: '/x' }, AbortSignal.timeout(5000))
    .catch((e: unknown) => e);
  assert.ok(err instanceof Error);
  assert.match(err.message, /^GET \/x: the connection closed before the response was complete/);
  assert.equal(seen.length, 1);
});

test('a 401 reads the token file again and retries once with the new token', async (t) => {
  const dir = tempDir(t, 'rz-token-');
  const tokenPath = path.join(dir, 'token');
  fs.writeFileSync(tokenPath, 'old-secret\n');
  const { seen, url } = await recordingHttpServer(t, (req, res) => {
    if (req.headers.authorization === 'Bearer new-secret') ok(res, '{"kind":"Pod"}');
    else res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"kind":"Status","code":401,"reason":"Unauthorized","message":"Unauthorized"}');
  });
  const c = client(t, url, { kind: 'tokenFile', path: tokenPath });
  await assert.rejects(c.request({ method: 'GET', path: '/a' }, AbortSignal.timeout(5000)), (err) => err instanceof KubeApiError && err.status === 401);
  fs.writeFileSync(tokenPath, 'new-secret\n');
  assert.deepEqual(await c.request({ method: 'GET', path: '/b' }, AbortSignal.timeout(5000)), { kind: 'Pod' });
  assert.deepEqual(
    seen.map((s) => [s.url, s.authorization]),
    [
      ['/a', 'Bearer old-secret'],
      ['/a', 'Bearer old-secret'],
      ['/b', 'Bearer old-secret'],
      ['/b', 'Bearer new-secret'],
    ],
  );
});

test("the deadline comes from the caller: a per-request timeout, or the caller's abort with its reason", async (t) => {
  const { url } = await recordingHttpServer(t, () => {}); // never answers
  const c = client(t, url, { kind: 'none' }, { requestTimeoutMs: 150 });
  const started = performance.now();
  await assert.rejects(c.request({ method: 'GET', path: '/hang' }, new AbortController().signal), /timed out after 150ms/);
  assert.ok(performance.now() - started < 3000);
  await assert.rejects(c.request({ method: 'GET', path: '/hang', timeoutMs: 50 }, new AbortController().signal), /timed out after 50ms/);
  const caller = new AbortController();
  const reason = new Error('shutting down');
  const pending = c.request({ method: 'GET', path: '/hang' }, caller.signal);
  caller.abort(reason);
  await assert.rejects(pending, (err) => err === reason);
});

test('an error answer is a KubeApiError with the Status message; the raw body never becomes the message', async (t) => {
  const { url } = await recordingHttpServer(t, (req, res) => {
    if (req.url?.startsWith('/api/v1/namespaces/ns/pods/with-status')) {
      res.writeHead(409, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          kind: 'Status',
          code: 409,
          reason: 'Conflict',
          message: 'the object has been modified',
          details: { echo: 'raw-body-secret' },
        }),
      );
    } else {
      res.writeHead(404, { 'Content-Type': 'text/html' }).end('<html>raw-body-secret page</html>');
    }
  });
  const c = client(t, url);
  const conflict = await c.request({ method: 'GET', path: '/api/v1/namespaces/ns/pods/with-status' }, AbortSignal.timeout(5000)).catch((e: unknown) => e);
  assert.ok(conflict instanceof KubeApiError);
  assert.deepEqual([conflict.status, conflict.reason, conflict.message], [409, 'Conflict', 'the object has been modified']);
  const missing = await c.request({ method: 'GET', path: '/api/v1/namespaces/ns/pods/x' }, AbortSignal.timeout(5000)).catch((e: unknown) => e);
  assert.ok(missing instanceof KubeApiError);
  assert.deepEqual([missing.status, missing.reason], [404, 'NotFound']);
  assert.equal(missing.message, 'the server could not find the requested resource (get pods x)');
  for (const err of [conflict, missing]) assert.ok(!JSON.stringify({ m: err.message, s: err.stack }).includes('raw-body-secret'));
});

test('a 2xx answer whose body is not JSON fails with an error naming the request, without the body', async (t) => {
  const { url } = await recordingHttpServer(t, (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>raw-body-secret</html>'));
  const err = await client(t, url)
    .request(
      { method: 'PATCH', path: '/api/v1/namespaces/ns/persistentvolumeclaims/c', body: {}, contentType: ContentType.MergePatch },
      AbortSignal.timeout(5000),
    )
    .catch((e: unknown) => e);
  assert.ok(err instanceof Error && !(err instanceof SyntaxError) && !(err instanceof KubeApiError), String(err));
  assert.equal(err.message, 'PATCH /api/v1/namespaces/ns/persistentvolumeclaims/c: the server answered 200 with a body that is not JSON (28 bytes)');
  assert.ok(!JSON.stringify({ m: err.message, s: err.stack, c: String(err.cause) }).includes('raw-body-secret'));
});

test('a watch body is handed on as it arrives: the second event is sent only after the first was read', async (t) => {
  let sendSecond!: () => void;
  const secondSent = new Promise<void>((resolve) => {
    sendSecond = resolve;
  });
  const { url } = await recordingHttpServer(t, (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"type":"ADDED","object":{"n":1}}\n');
    void secondSent.then(() => res.end('{"type":"ADDED","object":{"n":2}}\n'));
  });
  const body = await client(t, url).stream({ path: '/api/v1/pods', query: { watch: true } }, AbortSignal.timeout(5000));
  const it = body[Symbol.asyncIterator]();
  assert.equal((await it.next()).value?.toString(), '{"type":"ADDED","object":{"n":1}}\n');
  sendSecond();
  let rest = '';
  for (let r = await it.next(); !r.done; r = await it.next()) rest += r.value.toString();
  assert.equal(rest, '{"type":"ADDED","object":{"n":2}}\n');
});

const broken: Array<{ name: string; reply: (socket: net.Socket) => void; error: RegExp }> = [
  { name: 'garbage instead of a status line', reply: (s) => s.end('SSH-2.0-OpenSSH_9.6\r\n\r\n'), error: /^GET \/api: malformed HTTP response/ },
  {
    name: 'a chunked body cut in the middle of a chunk',
    reply: (s) => s.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{"kind":'),
    error: /^GET \/api: the connection closed before the response was complete/,
  },
  { name: 'a body shorter than its Content-Length', reply: (s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}'), error: /^GET \/api: / },
  {
    name: 'a 100 KiB response head',
    reply: (s) => s.end(`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(100 * 1024)}\r\nContent-Length: 2\r\n\r\n{}`),
    error: /^GET \/api: the response head is larger than the HTTP header size limit/,
  },
  {
    name: 'an invalid chunk size',
    reply: (s) => s.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n'),
    error: /^GET \/api: malformed HTTP response/,
  },
];

for (const row of broken) {
  test(`a server that breaks HTTP (${row.name}): the call fails with a clear error, in bounded time`, async (t) => {
    const url = await rawServer(t, row.reply);
    const started = performance.now();
    const err = await client(t, url)
      .request({ method: 'GET', path: '/api' }, AbortSignal.timeout(10_000))
      .catch((e: unknown) => e);
    assert.ok(err instanceof Error && !(err instanceof KubeApiError), String(err));
    assert.match(err.message, row.error);
    assert.ok(performance.now() - started < 5000, 'failed promptly, not at the deadline');
  });
}

test('a watch whose chunked body is cut mid-chunk ends its iteration with a clear error naming the request', async (t) => {
  const url = await rawServer(t, (s) => s.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1d\r\n{"type":"ADDED","object":{}}\n\r\n40\r\n{"type":'));
  const body = await client(t, url).stream({ path: '/api/v1/pods', query: { watch: true } }, AbortSignal.timeout(10_000));
  let received = '';
  const err = await (async () => {
    for await (const chunk of body) received += chunk.toString();
  })().catch((e: unknown) => e);
  assert.ok(received.startsWith('{"type":"ADDED","object":{}}\n'), received);
  assert.ok(err instanceof Error, String(err));
  assert.match(err.message, /^GET \/api\/v1\/pods: the connection closed before the response was complete/);
});
