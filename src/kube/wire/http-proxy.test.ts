// The kube HTTP port through proxies, against an HTTPS API server whose name only the proxy can
// resolve (kube-api.proxy-only.test; its certificate carries that name): requests and watches
// through HTTPS_PROXY (and https_proxy), through a kubeconfig proxy-url (http and https, with
// credentials), an http:// server through HTTP_PROXY (absolute-form), NO_PROXY and loopback going
// direct, proxy credentials kept out of errors, and a socks5 proxy-url refused.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { LookupFunction } from 'node:net';
import http from 'node:http';
import https from 'node:https';
import { ConnectProxy } from '../../../test/fakes/connect-proxy.js';
import { listenOnLoopback } from '../../../test/support/loopback.js';
import { selfSigned } from '../../../test/support/self-signed.js';
import { KubeHttp, type KubeHttpOptions } from './http.js';
import type { ClientConfig } from './kubeconfig.js';

const NAME = 'kube-api.proxy-only.test';
const { cert, key } = selfSigned(`DNS:${NAME},IP:127.0.0.1`);
const CREDS = { user: 'proxy-user', password: 'proxy-secret' };

/** An HTTPS API server on loopback: `{}` for requests, one event then held open for watches. */
async function apiServer(t: TestContext, secure = true) {
  const seen: string[] = [];
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (req.url?.includes('watch=true')) res.write('{"type":"ADDED","object":{}}\n');
    else res.end('{"kind":"APIVersions"}');
  };
  const srv = secure ? https.createServer({ cert, key }, handler) : http.createServer(handler);
  return { seen, port: await listenOnLoopback(t, srv) };
}

async function proxy(t: TestContext, port: number, options: { credentials?: typeof CREDS; tls?: boolean } = {}) {
  const p = await ConnectProxy.start({
    hosts: { [NAME]: '127.0.0.1' },
    ...(options.credentials ? { credentials: options.credentials } : {}),
    ...(options.tls ? { tls: { cert, key } } : {}),
  });
  t.after(() => p.close());
  void port;
  return p;
}

function client(t: TestContext, kubeConfig: Partial<ClientConfig> & { server: string }, extra: Partial<KubeHttpOptions> = {}): KubeHttp {
  const c = new KubeHttp({
    kubeConfig: { insecureSkipTlsVerify: false, auth: { kind: 'token', token: 'api-token' }, ca: { data: cert }, ...kubeConfig },
    qps: 0,
    burst: 1,
    env: {},
    ...extra,
  });
  t.after(() => c.close());
  return c;
}

/** A request and a watch (its first event read), as the resizer's client and informers make them. */
async function requestAndWatch(c: KubeHttp): Promise<void> {
  assert.deepEqual(await c.request({ method: 'GET', path: '/api' }, AbortSignal.timeout(10_000)), { kind: 'APIVersions' });
  const watching = new AbortController();
  try {
    const body = await c.stream({ path: '/api/v1/pods', query: { watch: true } }, AbortSignal.any([watching.signal, AbortSignal.timeout(10_000)]));
    const first = await body[Symbol.asyncIterator]().next();
    assert.equal(first.value?.toString(), '{"type":"ADDED","object":{}}\n');
  } finally {
    watching.abort();
  }
}

/** A resolver that knows NAME (for the direct cases: the proxy is not asked) and nothing else. */
const localResolver: LookupFunction = (hostname, options, callback) => {
  if (hostname !== NAME) {
    callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 4);
    return;
  }
  if (options.all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

test('HTTPS_PROXY: requests and watches go through CONNECT tunnels to a name only the proxy resolves', async (t) => {
  const api = await apiServer(t);
  const p = await proxy(t, api.port);
  const c = client(t, { server: `https://${NAME}:${api.port}` }, { env: { HTTPS_PROXY: p.url(), NO_PROXY: 'example.com,10.0.0.0/8' } });
  assert.equal(c.proxy, `${p.url()}/`);
  await requestAndWatch(c);
  assert.deepEqual(api.seen, ['GET /api', 'GET /api/v1/pods?watch=true']);
  assert.ok(p.tunnels >= 2, 'requests and watches have connections of their own');
  assert.ok(
    p.requests.every((r) => r.method === 'CONNECT' && r.target === `${NAME}:${api.port}`),
    JSON.stringify(p.requests),
  );
});

test('https_proxy (lower case) is read too; HTTP_PROXY alone is not used for an https server', async (t) => {
  const api = await apiServer(t);
  const p = await proxy(t, api.port);
  await requestAndWatch(client(t, { server: `https://${NAME}:${api.port}` }, { env: { https_proxy: p.url() } }));
  assert.ok(p.tunnels >= 2);
  const before = p.requests.length;
  const direct = client(t, { server: `https://${NAME}:${api.port}` }, { env: { HTTP_PROXY: p.url() }, lookup: localResolver });
  assert.equal(direct.proxy, undefined);
  await requestAndWatch(direct);
  assert.equal(p.requests.length, before, 'the proxy was not asked');
});

test('NO_PROXY matching the server, and a loopback server, connect directly', async (t) => {
  const api = await apiServer(t);
  const p = await proxy(t, api.port);
  for (const noProxy of ['.proxy-only.test', `${NAME}:${api.port}`, '*']) {
    const c = client(t, { server: `https://${NAME}:${api.port}` }, { env: { HTTPS_PROXY: p.url(), NO_PROXY: noProxy }, lookup: localResolver });
    assert.equal(c.proxy, undefined, noProxy);
    await requestAndWatch(c);
  }
  await requestAndWatch(client(t, { server: `https://127.0.0.1:${api.port}` }, { env: { HTTPS_PROXY: p.url() } }));
  assert.equal(p.requests.length, 0, 'the proxy was never asked');
  // A port entry for another port does not match: the proxy is used.
  await requestAndWatch(client(t, { server: `https://${NAME}:${api.port}` }, { env: { HTTPS_PROXY: p.url(), NO_PROXY: `${NAME}:1` } }));
  assert.ok(p.tunnels >= 2);
});

test('kubeconfig proxy-url overrides the environment (HTTPS_PROXY and NO_PROXY), and applies to loopback too', async (t) => {
  const api = await apiServer(t);
  const p = await proxy(t, api.port);
  const other = await proxy(t, api.port);
  await requestAndWatch(client(t, { server: `https://${NAME}:${api.port}`, proxyUrl: p.url() }, { env: { HTTPS_PROXY: other.url(), NO_PROXY: '*' } }));
  await requestAndWatch(client(t, { server: `https://127.0.0.1:${api.port}`, proxyUrl: p.url() }));
  assert.ok(p.tunnels >= 4);
  assert.equal(other.requests.length, 0);
});

test('proxy credentials in the URL are sent as Basic Proxy-Authorization; a refusal names no password', async (t) => {
  const api = await apiServer(t);
  const p = await proxy(t, api.port, { credentials: CREDS });
  const c = client(t, { server: `https://${NAME}:${api.port}`, proxyUrl: p.url(CREDS) });
  assert.equal(c.proxy, `${p.url({ user: CREDS.user, password: 'xxxxx' })}/`, 'the password is masked where the proxy is shown');
  await requestAndWatch(c);
  assert.ok(p.requests.every((r) => r.proxyAuthorization === `Basic ${Buffer.from(`${CREDS.user}:${CREDS.password}`).toString('base64')}`));
  const wrong = { user: CREDS.user, password: 'wrong-secret' };
  const err = await client(t, { server: `https://${NAME}:${api.port}`, proxyUrl: p.url(wrong) })
    .request({ method: 'GET', path: '/api' }, AbortSignal.timeout(10_000))
    .catch((e: unknown) => e);
  assert.ok(err instanceof Error, String(err));
  assert.match(err.message, /^GET \/api: .*407/);
  assert.ok(!JSON.stringify({ m: err.message, s: err.stack, c: String((err as Error).cause) }).includes('secret'));
  assert.deepEqual(api.seen.length, 2, 'nothing reached the server without the proxy');
});

test('an https proxy is verified with the kubeconfig CA, and tunnels as an http one does', async (t) => {
  const api = await apiServer(t);
  const p = await proxy(t, api.port, { tls: true });
  await requestAndWatch(client(t, { server: `https://${NAME}:${api.port}` }, { env: { HTTPS_PROXY: p.url() } }));
  assert.ok(p.tunnels >= 2);
  const other = selfSigned(`DNS:${NAME},IP:127.0.0.1`);
  const err = await client(t, { server: `https://${NAME}:${api.port}`, ca: { data: other.cert }, proxyUrl: p.url() })
    .request({ method: 'GET', path: '/api' }, AbortSignal.timeout(10_000))
    .catch((e: unknown) => e);
  assert.ok(err instanceof Error);
  assert.match(err.message, /certificate/);
});

test('an http:// server through HTTP_PROXY: absolute-form requests, watches included', async (t) => {
  const api = await apiServer(t, false);
  const p = await proxy(t, api.port);
  await requestAndWatch(client(t, { server: `http://${NAME}:${api.port}` }, { env: { HTTP_PROXY: p.url(), HTTPS_PROXY: 'http://127.0.0.1:1' } }));
  assert.deepEqual(
    p.requests.map((r) => `${r.method} ${r.target}`),
    [`GET http://${NAME}:${api.port}/api`, `GET http://${NAME}:${api.port}/api/v1/pods?watch=true`],
  );
});

test('a socks5 proxy-url is refused when the client is made, with an error naming the alternatives', (t) => {
  assert.throws(
    () => client(t, { server: `https://${NAME}:6443`, proxyUrl: 'socks5://proxy-user:proxy-secret@127.0.0.1:1080' }),
    (err: Error) =>
      /^kubeconfig: proxy-url socks5:\/\/proxy-user:xxxxx@127\.0\.0\.1:1080 is a SOCKS5 proxy, which csi-resizer cannot use \(its HTTP client, node:https, has no SOCKS5\); use an http:\/\/ or https:\/\/ proxy \(HTTP CONNECT\) instead/.test(
        err.message,
      ) && !err.message.includes('proxy-secret'),
  );
});

test('a proxy setting that cannot be used stops the client at construction, with a clear error', (t) => {
  assert.throws(
    () => client(t, { server: `https://${NAME}:6443` }, { env: { HTTPS_PROXY: 'ftp://u:secret@proxy' } }),
    (err: Error) => /^HTTPS_PROXY: unsupported proxy scheme "ftp"/.test(err.message) && !err.message.includes('secret'),
  );
  assert.throws(
    () => client(t, { server: `https://${NAME}:6443`, proxyUrl: 'socks4://proxy:1080' }),
    /proxy-url has unsupported scheme "socks4", must be http, https, or socks5/,
  );
});
