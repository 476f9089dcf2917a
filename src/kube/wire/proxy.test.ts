// Proxy selection as client-go makes it: the environment read as Go reads it, NO_PROXY matched as
// golang.org/x/net/http/httpproxy matches it (the NO_PROXY list and the expectations are the
// cases Go's own table covers, restated here), and a kubeconfig proxy-url overriding both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  parseEnvProxy,
  parseKubeconfigProxyUrl,
  parseNoProxy,
  proxyEnvironment,
  proxyFor,
  ProxyConfigError,
  redactedUrl,
  useProxy,
  type ProxyEnvironment,
} from './proxy.js';

const NO_PROXY =
  'foobar.com, .barbaz.net, *.wildcard.io, 192.168.1.1, 192.168.1.2:81, 192.168.1.3:80, 10.0.0.0/30, 2001:db8::52:0:1, [2001:db8::52:0:2]:443, [2001:db8::52:0:3]:80, 2002:db8:a::45/64';

/** [host, proxied] for a request to host:80. */
const useProxyCases: Array<[string, boolean, string]> = [
  ['localhost', false, 'localhost is never proxied'],
  ['127.0.0.1', false, 'loopback'],
  ['127.0.0.2', false, 'all of 127/8 is loopback'],
  ['::1', false, 'IPv6 loopback'],
  ['::ffff:127.0.0.1', false, 'IPv4-mapped loopback'],
  ['::2', true, 'not a loopback address'],
  ['192.168.1.1', false, 'exact IPv4'],
  ['192.168.1.2', true, 'the entry has another port'],
  ['192.168.1.3', false, 'exact IPv4 and port'],
  ['192.168.1.4', true, 'no entry'],
  ['::ffff:192.168.1.1', false, 'IPv4-mapped IPv6 equals its IPv4 entry'],
  ['10.0.0.2', false, 'inside 10.0.0.0/30'],
  ['10.0.0.4', true, 'outside 10.0.0.0/30'],
  ['2001:db8::52:0:1', false, 'exact IPv6'],
  ['2001:db8::52:0:2', true, 'the entry has another port'],
  ['2001:db8::52:0:3', false, 'exact [IPv6]:port'],
  ['2002:db8:a::123', false, 'inside the IPv6 CIDR'],
  ['fe80::424b:c8be:1643:a1b6', true, 'no entry'],
  ['barbaz.net', true, '.barbaz.net matches subdomains only'],
  ['www.barbaz.net', false, 'a subdomain of .barbaz.net'],
  ['foobar.com', false, 'the name itself'],
  ['www.foobar.com', false, 'a subdomain of foobar.com'],
  ['foofoobar.com', true, 'a suffix that is not a label boundary'],
  ['baz.com', true, 'part of barbaz.net is not a match'],
  ['localhost.net', true, 'localhost is special only as the whole name'],
  ['local.localhost', true, 'nor as a suffix'],
  ['barbarbaz.net', true, 'another domain'],
  ['wildcard.io', true, '*.wildcard.io matches subdomains only'],
  ['nested.wildcard.io', false, 'a subdomain of *.wildcard.io'],
  ['awildcard.io', true, 'the * is a whole label'],
  ['FooBar.COM', false, 'names compare case-insensitively'],
];

for (const [host, proxied, why] of useProxyCases) {
  test(`NO_PROXY: ${host}:80 ${proxied ? 'goes through the proxy' : 'is direct'} (${why})`, () => {
    assert.equal(useProxy(parseNoProxy(NO_PROXY), host, '80'), proxied);
  });
}

test('NO_PROXY: * bypasses the proxy for every host, also after other entries', () => {
  for (const [host] of useProxyCases) assert.equal(useProxy(parseNoProxy('example.com, *'), host, '80'), false, host);
});

test('NO_PROXY: malformed and empty entries are skipped; nothing in it proxies everything but loopback', () => {
  assert.equal(useProxy(parseNoProxy(':1, , [::1, 10.0.0.0/99'), 'example.com', '80'), true);
  assert.equal(useProxy(parseNoProxy(''), 'example.com', '80'), true);
  assert.equal(useProxy(parseNoProxy(''), '127.0.0.1', '6443'), false);
});

test('NO_PROXY: ports are matched when the entry has one; an IP is never matched by a domain entry', () => {
  const entries = parseNoProxy('kube.example:6443, 10.1.2.3');
  assert.equal(useProxy(entries, 'kube.example', '6443'), false);
  assert.equal(useProxy(entries, 'kube.example', '443'), true);
  assert.equal(useProxy(entries, '10.1.2.3', '6443'), false);
  assert.equal(useProxy(parseNoProxy('3.4'), '1.2.3.4', '80'), true);
});

test('NO_PROXY: international names match in either form (IDNA)', () => {
  assert.equal(useProxy(parseNoProxy('.示例.com'), 'www.xn--fsq092h.com', '80'), false);
  assert.equal(useProxy(parseNoProxy('xn--fsq092h.com'), 'www.xn--fsq092h.com', '80'), false);
  assert.equal(useProxy(parseNoProxy('示例.com'), 'xn--fsq092h.com', '80'), false);
});

test('environment: upper case first, then lower case; an empty value counts as unset; REQUEST_METHOD marks CGI', () => {
  assert.deepEqual(proxyEnvironment({ HTTPS_PROXY: 'upper', https_proxy: 'lower', http_proxy: 'h', no_proxy: 'n' }), {
    httpsProxy: 'upper',
    httpProxy: 'h',
    noProxy: 'n',
    cgi: false,
  });
  assert.deepEqual(proxyEnvironment({ HTTPS_PROXY: '', https_proxy: 'lower', NO_PROXY: 'N', no_proxy: 'n', REQUEST_METHOD: 'GET' }), {
    httpsProxy: 'lower',
    httpProxy: '',
    noProxy: 'N',
    cgi: true,
  });
});

test('environment values: host[:port] means http://; full URLs keep their scheme; others are refused, naming the variable and not the password', () => {
  const cases: Array<[string, string]> = [
    ['127.0.0.1:8080', 'http://127.0.0.1:8080/'],
    ['cache.corp.example.com:1234', 'http://cache.corp.example.com:1234/'],
    ['cache.corp.example.com', 'http://cache.corp.example.com/'],
    ['localhost', 'http://localhost/'],
    ['https://cache.corp.example.com', 'https://cache.corp.example.com/'],
    ['http://user:pw@127.0.0.1:8080', 'http://user:pw@127.0.0.1:8080/'],
  ];
  for (const [value, href] of cases) assert.equal(parseEnvProxy(value, 'HTTPS_PROXY')?.href, href, value);
  assert.equal(parseEnvProxy('', 'HTTPS_PROXY'), undefined);
  const err = (() => {
    try {
      parseEnvProxy('ftp://u:secret@host', 'HTTPS_PROXY');
    } catch (e) {
      return e;
    }
  })();
  assert.ok(err instanceof ProxyConfigError);
  assert.match(err.message, /^HTTPS_PROXY: unsupported proxy scheme "ftp"/);
  assert.ok(!err.message.includes('secret'));
  assert.throws(() => parseEnvProxy('http://host:notaport', 'HTTP_PROXY'), /HTTP_PROXY: invalid proxy address/);
});

test('SOCKS5 proxies (which client-go speaks) are refused with a clear error naming the alternatives, from the environment and the kubeconfig', () => {
  for (const value of ['socks5://127.0.0.1', 'socks5h://u:secret@127.0.0.1:1080']) {
    const err = (() => {
      try {
        parseEnvProxy(value, 'HTTPS_PROXY');
      } catch (e) {
        return e;
      }
    })();
    assert.ok(err instanceof ProxyConfigError, value);
    assert.match(
      err.message,
      /^HTTPS_PROXY: socks5h?:\/\/.* is a SOCKS5 proxy, which csi-resizer cannot use \(its HTTP client, node:https, has no SOCKS5\); use an http:\/\/ or https:\/\/ proxy \(HTTP CONNECT\) instead/,
    );
    assert.ok(!err.message.includes('secret'));
  }
  assert.throws(
    () => parseKubeconfigProxyUrl('socks5://127.0.0.1:1080', 'cluster "c"'),
    /^ProxyConfigError: cluster "c": proxy-url socks5:\/\/127\.0\.0\.1:1080 is a SOCKS5 proxy, which csi-resizer cannot use/,
  );
  assert.throws(() => proxyFor(new URL('http://kube.example'), 'socks5://127.0.0.1:1080', env()), /is a SOCKS5 proxy/);
});

test('kubeconfig proxy-url: http and https as client-go accepts them; schemes it does not know refused with its message', () => {
  assert.equal(parseKubeconfigProxyUrl('http://proxy.example:3128', 'cluster "c"').protocol, 'http:');
  assert.equal(parseKubeconfigProxyUrl('https://proxy.example:3128', 'cluster "c"').protocol, 'https:');
  assert.throws(
    () => parseKubeconfigProxyUrl('socks5h://127.0.0.1', 'cluster "c"'),
    /cluster "c": proxy-url has unsupported scheme "socks5h", must be http, https, or socks5/,
  );
  assert.throws(() => parseKubeconfigProxyUrl('proxy.example:3128', 'cluster "c"'), /unsupported scheme "proxy.example"/);
  assert.throws(() => parseKubeconfigProxyUrl('not a url', 'cluster "c"'), /cluster "c": proxy-url could not be parsed/);
});

const env = (over: Partial<ProxyEnvironment> = {}): ProxyEnvironment => ({ httpProxy: '', httpsProxy: '', noProxy: '', cgi: false, ...over });

test('proxyFor: HTTPS_PROXY for an https server, HTTP_PROXY for an http one, never the other', () => {
  const both = env({ httpProxy: 'http.proxy:1', httpsProxy: 'https://secure.proxy:2' });
  assert.equal(proxyFor(new URL('https://kube.example:6443'), undefined, both)?.href, 'https://secure.proxy:2/');
  assert.equal(proxyFor(new URL('http://kube.example:8080'), undefined, both)?.href, 'http://http.proxy:1/');
  assert.equal(proxyFor(new URL('https://kube.example:6443'), undefined, env({ httpProxy: 'http.proxy:1' })), undefined);
});

test('proxyFor: NO_PROXY and loopback servers connect directly; the server port counts for port entries', () => {
  const e = env({ httpsProxy: 'proxy:3128', noProxy: '.internal, kube.example:443' });
  assert.equal(proxyFor(new URL('https://api.internal:6443'), undefined, e), undefined);
  assert.equal(proxyFor(new URL('https://kube.example'), undefined, e), undefined, 'the default port is 443');
  assert.equal(proxyFor(new URL('https://kube.example:6443'), undefined, e)?.host, 'proxy:3128');
  assert.equal(proxyFor(new URL('https://127.0.0.1:6443'), undefined, e), undefined);
  assert.equal(proxyFor(new URL('https://[::1]:6443'), undefined, e), undefined);
  assert.equal(proxyFor(new URL('https://localhost:6443'), undefined, e), undefined);
});

test('proxyFor: a kubeconfig proxy-url is used for every server, NO_PROXY and loopback included', () => {
  const e = env({ httpsProxy: 'other:1', noProxy: '*' });
  assert.equal(proxyFor(new URL('https://127.0.0.1:6443'), 'http://proxy.example:3128', e)?.host, 'proxy.example:3128');
  assert.equal(proxyFor(new URL('http://kube.example'), 'https://proxy.example:3128', e)?.protocol, 'https:');
});

test('proxyFor: HTTP_PROXY is refused in a CGI environment (it may come from a request header), HTTPS_PROXY is not', () => {
  assert.throws(
    () => proxyFor(new URL('http://kube.example'), undefined, env({ httpProxy: 'proxy:1', cgi: true })),
    /refusing to use HTTP_PROXY value in CGI environment/,
  );
  assert.equal(proxyFor(new URL('https://kube.example'), undefined, env({ httpsProxy: 'proxy:1', cgi: true }))?.host, 'proxy:1');
});

test('redactedUrl masks the password and keeps the user, as Go does', () => {
  assert.equal(redactedUrl(new URL('http://user:secret@proxy:3128')), 'http://user:xxxxx@proxy:3128/');
  assert.equal(redactedUrl(new URL('http://proxy:3128')), 'http://proxy:3128/');
});
