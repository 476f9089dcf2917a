// What the API client records as client-go's REST client metrics (docs/behavior.md §5.3, "REST
// client"), read from the scrape text of a registry built by createMetrics: one requests_total
// sample per attempt with the HTTP status or <error>, the sizes, the rate limiter's wait and the
// whole request's latency once per request, a stale GET's resend inside one attempt (as Go's
// transport), a 401's retry counted as a retry, and a watch's opening request. A real HTTPS server
// on loopback with a throwaway certificate; broken answers come from the server destroying the socket.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ContentType } from '../api/content-type.js';
import { KubeApiError } from '../api/errors.js';
import { KubeHttp, urlHost, type KubeHttpOptions } from './http.js';
import type { ClientAuth } from './kubeconfig.js';
import { createMetrics, type Metrics } from '../../observability/metrics.js';
import { listenOnLoopback } from '../../../test/support/loopback.js';
import { selfSigned } from '../../../test/support/self-signed.js';

const tls = selfSigned();

/** An HTTPS server answering with `handle`; `connection` numbers the TCP connections in order. */
async function server(t: TestContext, handle: (req: http.IncomingMessage, res: http.ServerResponse, connection: number) => void) {
  let connections = 0;
  const ids = new WeakMap<Socket, number>();
  const srv = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => handle(req, res, ids.get(req.socket) ?? 0));
  srv.on('secureConnection', (socket: Socket) => ids.set(socket, ++connections));
  const port = await listenOnLoopback(t, srv);
  return { url: `https://127.0.0.1:${port}`, host: `127.0.0.1:${port}` };
}

function client(t: TestContext, url: string, metrics: Metrics, options: Partial<KubeHttpOptions> & { auth?: ClientAuth } = {}): KubeHttp {
  const { auth = { kind: 'none' }, ...rest } = options;
  const c = new KubeHttp({
    kubeConfig: { server: url, ca: { data: tls.cert }, insecureSkipTlsVerify: false, auth },
    qps: 0,
    burst: 1,
    metrics: metrics.restClient,
    ...rest,
  });
  t.after(() => c.close());
  return c;
}

/** The samples of one series name in a scrape: label text (as printed, without braces) → value. */
async function samples(metrics: Metrics, name: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await metrics.registry.metrics()).split('\n')) {
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m?.[1] === name) out.set(m[2] ?? '', m[3] === '+Inf' ? Infinity : Number(m[3]));
  }
  return out;
}

/** One sample: `labels` as the scrape prints them (prom-client's order), without braces. */
async function value(metrics: Metrics, name: string, labels: string): Promise<number | undefined> {
  return (await samples(metrics, name)).get(labels);
}

const ok = (res: http.ServerResponse, body: string) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
const signal = () => AbortSignal.timeout(10_000);
/** One turn of the event loop: a connection that finished an answer is reused after it. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('each request: its status code, method and host, its request and response sizes, its latency', async (t) => {
  const conflict = '{"kind":"Status","code":409,"reason":"Conflict","message":"modified"}';
  const { url, host } = await server(t, (req, res) => {
    if (req.method === 'PATCH') res.writeHead(409, { 'Content-Type': 'application/json' }).end(conflict);
    else if (req.url === '/missing') res.writeHead(404).end();
    else ok(res, '{"kind":"Pod","n":12345}');
  });
  const metrics = createMetrics();
  const c = client(t, url, metrics);
  await c.request({ method: 'GET', path: '/pod' }, signal());
  await assert.rejects(c.request({ method: 'GET', path: '/missing' }, signal()), (err) => err instanceof KubeApiError && err.status === 404);
  const patch = { metadata: { labels: { a: 'b' } } };
  await assert.rejects(
    c.request({ method: 'PATCH', path: '/pod', body: patch, contentType: ContentType.MergePatch }, signal()),
    (err) => err instanceof KubeApiError && err.status === 409,
  );

  assert.deepEqual(Object.fromEntries(await samples(metrics, 'rest_client_requests_total')), {
    [`code="200",method="GET",host="${host}"`]: 1,
    [`code="404",method="GET",host="${host}"`]: 1,
    [`code="409",method="PATCH",host="${host}"`]: 1,
  });
  // Every attempt's body (0 bytes for a GET), as client-go measures a known content length.
  assert.equal(await value(metrics, 'rest_client_request_size_bytes_count', `verb="GET",host="${host}"`), 2);
  assert.equal(await value(metrics, 'rest_client_request_size_bytes_sum', `verb="GET",host="${host}"`), 0);
  assert.equal(await value(metrics, 'rest_client_request_size_bytes_sum', `verb="PATCH",host="${host}"`), Buffer.byteLength(JSON.stringify(patch)));
  // The answer's body, unless an error answer has none (the 404).
  assert.equal(await value(metrics, 'rest_client_response_size_bytes_count', `verb="GET",host="${host}"`), 1);
  assert.equal(await value(metrics, 'rest_client_response_size_bytes_sum', `verb="GET",host="${host}"`), '{"kind":"Pod","n":12345}'.length);
  assert.equal(await value(metrics, 'rest_client_response_size_bytes_sum', `verb="PATCH",host="${host}"`), conflict.length);
  assert.equal(await value(metrics, 'rest_client_request_duration_seconds_count', `verb="GET",host="${host}"`), 2);
  assert.equal(await value(metrics, 'rest_client_request_duration_seconds_count', `verb="PATCH",host="${host}"`), 1);
  assert.ok((await value(metrics, 'rest_client_request_duration_seconds_sum', `verb="GET",host="${host}"`))! > 0);
  assert.equal((await samples(metrics, 'rest_client_request_retries_total')).size, 0, 'nothing was retried');
  // Without a limiter (qps 0 here) there is no wait to record, as client-go has no limiter to ask.
  assert.equal((await samples(metrics, 'rest_client_rate_limiter_duration_seconds_count')).size, 0);
});

test('an attempt that gets no answer is code <error>; the request still has its latency and no response size', async (t) => {
  const { url, host } = await server(t, (req) => req.socket.destroy());
  const metrics = createMetrics();
  const err = await client(t, url, metrics)
    .request({ method: 'GET', path: '/x' }, signal())
    .catch((e: unknown) => e);
  assert.ok(err instanceof Error && !(err instanceof KubeApiError), String(err));
  assert.deepEqual(Object.fromEntries(await samples(metrics, 'rest_client_requests_total')), { [`code="<error>",method="GET",host="${host}"`]: 1 });
  assert.equal(await value(metrics, 'rest_client_request_duration_seconds_count', `verb="GET",host="${host}"`), 1);
  assert.equal(await value(metrics, 'rest_client_request_size_bytes_count', `verb="GET",host="${host}"`), 1);
  assert.equal((await samples(metrics, 'rest_client_response_size_bytes_count')).size, 0);
});

test("the rate limiter's wait is recorded per request, and is part of the request's latency", async (t) => {
  const { url, host } = await server(t, (_req, res) => ok(res, '{}'));
  const metrics = createMetrics();
  // A burst of 1 at 20 per second: three requests at once wait about 0, 50 and 100 ms.
  const c = client(t, url, metrics, { qps: 20, burst: 1 });
  await Promise.all([0, 1, 2].map(() => c.request({ method: 'GET', path: '/x' }, signal())));
  const labels = `verb="GET",host="${host}"`;
  assert.equal(await value(metrics, 'rest_client_rate_limiter_duration_seconds_count', labels), 3);
  const waitedSeconds = (await value(metrics, 'rest_client_rate_limiter_duration_seconds_sum', labels))!;
  assert.ok(waitedSeconds >= 0.14, `waited ${waitedSeconds} s in all`);
  assert.ok((await value(metrics, 'rest_client_rate_limiter_duration_seconds_bucket', `le="0.005",${labels}`))! >= 1, 'the first took a token at once');
  assert.ok((await value(metrics, 'rest_client_request_duration_seconds_sum', labels))! >= waitedSeconds);
});

test("a GET resent after a stale keep-alive connection is one attempt, as inside Go's transport: no <error>, no retry", async (t) => {
  const seen: Array<[number, string | undefined]> = [];
  const { url, host } = await server(t, (req, res, connection) => {
    seen.push([connection, req.url]);
    // The server's idle timeout raced our request: it closes the connection instead of answering.
    if (req.url === '/second' && connection === 1) req.socket.destroy();
    else ok(res, '{}');
  });
  const metrics = createMetrics();
  const c = client(t, url, metrics);
  await c.request({ method: 'GET', path: '/first' }, signal());
  await turn();
  await c.request({ method: 'GET', path: '/second' }, signal());
  assert.deepEqual(seen, [
    [1, '/first'],
    [1, '/second'],
    [2, '/second'],
  ]);
  assert.deepEqual(Object.fromEntries(await samples(metrics, 'rest_client_requests_total')), { [`code="200",method="GET",host="${host}"`]: 2 });
  assert.equal((await samples(metrics, 'rest_client_request_retries_total')).size, 0);
  assert.equal(await value(metrics, 'rest_client_request_size_bytes_count', `verb="GET",host="${host}"`), 2);
});

test("a 401 answered again after the credentials are read anew: two attempts, the second a retry, one request's latency", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rz-token-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const tokenPath = path.join(dir, 'token');
  fs.writeFileSync(tokenPath, 'old\n');
  const { url, host } = await server(t, (req, res) => {
    if (req.headers.authorization === 'Bearer new') ok(res, '{"kind":"Pod"}');
    else {
      fs.writeFileSync(tokenPath, 'new\n'); // rotated while the request was on its way
      res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"kind":"Status","code":401,"reason":"Unauthorized"}');
    }
  });
  const metrics = createMetrics();
  const c = client(t, url, metrics, { auth: { kind: 'tokenFile', path: tokenPath }, qps: 100, burst: 10 });
  assert.deepEqual(await c.request({ method: 'GET', path: '/pod' }, signal()), { kind: 'Pod' });
  const labels = `verb="GET",host="${host}"`;
  assert.deepEqual(Object.fromEntries(await samples(metrics, 'rest_client_requests_total')), {
    [`code="401",method="GET",host="${host}"`]: 1,
    [`code="200",method="GET",host="${host}"`]: 1,
  });
  assert.deepEqual(Object.fromEntries(await samples(metrics, 'rest_client_request_retries_total')), { [`code="200",${labels}`]: 1 });
  assert.equal(await value(metrics, 'rest_client_request_duration_seconds_count', labels), 1);
  assert.equal(await value(metrics, 'rest_client_rate_limiter_duration_seconds_count', labels), 1, 'the retry takes no second token');
  assert.equal(await value(metrics, 'rest_client_request_size_bytes_count', labels), 2);
  assert.equal(await value(metrics, 'rest_client_response_size_bytes_count', labels), 1);
  assert.equal(await value(metrics, 'rest_client_response_size_bytes_sum', labels), '{"kind":"Pod"}'.length);
});

test("a watch: its opening request's status and the limiter's wait; no latency or sizes, as client-go's watch", async (t) => {
  const { url, host } = await server(t, (req, res) => {
    if (req.url?.includes('forbidden')) {
      res.writeHead(403, { 'Content-Type': 'application/json' }).end('{"kind":"Status","code":403,"reason":"Forbidden"}');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"type":"ADDED","object":{}}\n');
  });
  const metrics = createMetrics();
  const c = client(t, url, metrics, { qps: 100, burst: 10 });
  const watching = new AbortController();
  t.after(() => watching.abort());
  const body = await c.stream({ path: '/api/v1/pods', query: { watch: true } }, watching.signal);
  t.after(() => body.destroy());
  await assert.rejects(c.stream({ path: '/api/v1/forbidden', query: { watch: true } }, signal()), (err) => err instanceof KubeApiError && err.status === 403);
  const labels = `verb="GET",host="${host}"`;
  assert.deepEqual(Object.fromEntries(await samples(metrics, 'rest_client_requests_total')), {
    [`code="200",method="GET",host="${host}"`]: 1,
    [`code="403",method="GET",host="${host}"`]: 1,
  });
  assert.equal(await value(metrics, 'rest_client_rate_limiter_duration_seconds_count', labels), 2);
  for (const name of ['rest_client_request_duration_seconds_count', 'rest_client_request_size_bytes_count', 'rest_client_response_size_bytes_count']) {
    assert.equal((await samples(metrics, name)).size, 0, name);
  }
});

test('every client records into the one registry; each is a transport created and not shared ("uncacheable")', async (t) => {
  const { url, host } = await server(t, (_req, res) => ok(res, '{}'));
  const metrics = createMetrics();
  const [main, elector] = [client(t, url, metrics), client(t, url, metrics)];
  await main.request({ method: 'GET', path: '/a' }, signal());
  await elector.request({ method: 'PUT', path: '/b', body: {}, contentType: ContentType.Json }, signal());
  assert.deepEqual(Object.fromEntries(await samples(metrics, 'rest_client_transport_create_calls_total')), { 'result="uncacheable"': 2 });
  assert.deepEqual(Object.fromEntries(await samples(metrics, 'rest_client_requests_total')), {
    [`code="200",method="GET",host="${host}"`]: 1,
    [`code="200",method="PUT",host="${host}"`]: 1,
  });
  // Registered as upstream registers them, never moved: no shared cache, no GC of transports.
  assert.deepEqual(Object.fromEntries(await samples(metrics, 'rest_client_transport_cache_entries')), { '': 0 });
  assert.deepEqual(Object.fromEntries(await samples(metrics, 'rest_client_transport_cert_rotation_gc_calls_total')), { '': 0 });
  assert.deepEqual(Object.fromEntries(await samples(metrics, 'rest_client_exec_plugin_ttl_seconds')), { '': Infinity });
});

test("the host label is the server URL's host as Go's URL has it: the port as written, no user info", () => {
  const cases: Array<[string, string]> = [
    ['https://10.96.0.1:443', '10.96.0.1:443'],
    ['https://Example.com', 'Example.com'],
    ['https://user:pw@example.com:6443/prefix/', 'example.com:6443'],
    ['https://[fd00::1]:6443', '[fd00::1]:6443'],
    ['http://127.0.0.1:8080?x=1', '127.0.0.1:8080'],
  ];
  for (const [server, host] of cases) assert.equal(urlHost(server, new URL(server)), host, server);
});
