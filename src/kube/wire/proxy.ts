// Which proxy, if any, the API server is reached through: client-go's rules, as pure code.
// A kubeconfig cluster's `proxy-url` is used for every request (client-go's http.ProxyURL): no
// NO_PROXY, no exceptions. Without it the environment decides, as Go's http.ProxyFromEnvironment
// (golang.org/x/net/http/httpproxy) does: HTTPS_PROXY for an https server and HTTP_PROXY for an
// http one (upper case first, then lower case; no fallback from one to the other), a value without
// a scheme taken as http://, localhost and loopback addresses never proxied, and NO_PROXY a
// comma-separated list of `*`, IP addresses, CIDRs, domain names (with their subdomains; a leading
// `.` or `*.` for subdomains only), each optionally with a :port. docs/architecture.md, "The API
// server's connections", says how the answer is used.
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

/** The proxy schemes the transport can speak (node:http(s): HTTP proxies, CONNECT tunnels through them). */
const SUPPORTED_SCHEMES = new Set(['http:', 'https:']);
/** Schemes client-go speaks and we cannot: refused with a message of their own. */
const SOCKS_SCHEMES = new Set(['socks5:', 'socks5h:']);

export class ProxyConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ProxyConfigError';
  }
}

/** The proxy variables Go reads, as found in an environment. */
export interface ProxyEnvironment {
  readonly httpProxy: string;
  readonly httpsProxy: string;
  readonly noProxy: string;
  /** REQUEST_METHOD is set: a CGI environment, where HTTP_PROXY may come from a request header. */
  readonly cgi: boolean;
}

/** The first non-empty of the names, as Go's getEnvAny reads them. */
function envAny(env: NodeJS.ProcessEnv, ...names: string[]): string {
  for (const name of names) {
    const value = env[name];
    if (value) return value;
  }
  return '';
}

export function proxyEnvironment(env: NodeJS.ProcessEnv): ProxyEnvironment {
  return {
    httpProxy: envAny(env, 'HTTP_PROXY', 'http_proxy'),
    httpsProxy: envAny(env, 'HTTPS_PROXY', 'https_proxy'),
    noProxy: envAny(env, 'NO_PROXY', 'no_proxy'),
    cgi: (env['REQUEST_METHOD'] ?? '') !== '',
  };
}

/** A URL with its password masked, as Go's url.Redacted writes it: for errors and logs. */
export function redactedUrl(url: URL): string {
  if (url.password === '') return url.href;
  const copy = new URL(url.href);
  copy.password = 'xxxxx';
  return copy.href;
}

/** `field` names the setting within `source` in the messages (a kubeconfig's `proxy-url`). */
function checkedScheme(url: URL, source: string, field = ''): URL {
  if (SOCKS_SCHEMES.has(url.protocol)) {
    throw new ProxyConfigError(
      `${source}: ${field}${redactedUrl(url)} is a SOCKS5 proxy, which csi-resizer cannot use (its HTTP client, node:https, has no SOCKS5); use an http:// or https:// proxy (HTTP CONNECT) instead, or upstream's external-resizer where only SOCKS5 reaches the API server`,
    );
  }
  if (!SUPPORTED_SCHEMES.has(url.protocol)) {
    throw new ProxyConfigError(`${source}: unsupported proxy scheme ${JSON.stringify(url.protocol.slice(0, -1))} in ${redactedUrl(url)}; use http or https`);
  }
  if (url.hostname === '') throw new ProxyConfigError(`${source}: the proxy URL ${redactedUrl(url)} has no host`);
  return url;
}

/**
 * An environment proxy value as Go's parseProxy reads it: a full URL, or `host[:port]` taken as
 * http://. Go ignores a value it cannot parse (no proxy at all); we refuse it, naming the variable.
 */
export function parseEnvProxy(value: string, variable: string): URL | undefined {
  if (value === '') return undefined;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  // A value that names a scheme is never read again as a host (Go would, and reach nonsense).
  if ((url === undefined || url.host === '') && !value.includes('://')) {
    try {
      url = new URL(`http://${value}`);
    } catch (err) {
      throw new ProxyConfigError(`${variable}: invalid proxy address (not a URL or host:port)`, { cause: err });
    }
  }
  if (url === undefined) throw new ProxyConfigError(`${variable}: invalid proxy address (not a URL or host:port)`);
  return checkedScheme(url, variable);
}

/**
 * A kubeconfig cluster's proxy-url, refused as client-go refuses it (only http, https and socks5),
 * and a socks5 one refused too (the transport cannot speak it).
 */
export function parseKubeconfigProxyUrl(value: string, source: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch (err) {
    throw new ProxyConfigError(`${source}: proxy-url could not be parsed`, { cause: err });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:' && url.protocol !== 'socks5:') {
    throw new ProxyConfigError(`${source}: proxy-url has unsupported scheme ${JSON.stringify(url.protocol.slice(0, -1))}, must be http, https, or socks5`);
  }
  return checkedScheme(url, source, 'proxy-url ');
}

/** An IP address as Go compares it: IPv4 (also IPv4-mapped IPv6) as 4 bytes, other IPv6 as 16. */
function ipBytes(text: string): Uint8Array | undefined {
  const family = isIP(text);
  if (family === 4) return Uint8Array.from(text.split('.').map(Number));
  if (family !== 6) return undefined;
  const bytes = ipv6Bytes(text);
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? bytes.slice(12) : bytes;
}

/** The 16 bytes of an address net.isIP has accepted as IPv6 (no zone). */
function ipv6Bytes(text: string): Uint8Array {
  let groups: number[] = [];
  const [head = '', tail] = text.split('::');
  const parse = (part: string): number[] => {
    if (part === '') return [];
    const out: number[] = [];
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        const [a = 0, b = 0, c = 0, d = 0] = piece.split('.').map(Number);
        out.push((a << 8) | b, (c << 8) | d);
      } else {
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  groups = tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  return bytes;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function isLoopback(ip: Uint8Array): boolean {
  if (ip.length === 4) return ip[0] === 127;
  return ip.slice(0, 15).every((b) => b === 0) && ip[15] === 1;
}

type NoProxyEntry =
  | { kind: 'all' }
  | { kind: 'cidr'; network: Uint8Array; bits: number }
  | { kind: 'ip'; ip: Uint8Array; port: string }
  /** `host` starts with a dot; `matchHost`: the name itself matches too (not only subdomains). */
  | { kind: 'domain'; host: string; port: string; matchHost: boolean };

/** `host:port` or `[v6]:port` split as Go's net.SplitHostPort does; undefined when it is neither. */
function splitHostPort(entry: string): { host: string; port: string } | undefined {
  if (entry.startsWith('[')) {
    const m = /^\[([^\]]*)\]:([^:]*)$/.exec(entry);
    return m ? { host: m[1]!, port: m[2]! } : undefined;
  }
  const colon = entry.lastIndexOf(':');
  if (colon < 0 || entry.indexOf(':') !== colon) return undefined; // no port, or a bare IPv6 address
  return { host: entry.slice(0, colon), port: entry.slice(colon + 1) };
}

function parseCidr(entry: string): NoProxyEntry | undefined {
  const slash = entry.indexOf('/');
  if (slash < 0) return undefined;
  const address = entry.slice(0, slash);
  const bitsText = entry.slice(slash + 1);
  const family = isIP(address);
  if (family === 0 || !/^\d{1,3}$/.test(bitsText)) return undefined;
  const bits = Number(bitsText);
  // The network's length is its syntax's (a v4-mapped IPv6 network stays 16 bytes, as in Go).
  const network = family === 4 ? ipBytes(address)! : ipv6Bytes(address);
  if (bits > network.length * 8) return undefined;
  return { kind: 'cidr', network, bits };
}

function inNetwork(ip: Uint8Array, network: Uint8Array, bits: number): boolean {
  if (ip.length !== network.length) return false;
  for (let i = 0; i < bits; i++) {
    const bit = 0x80 >> (i % 8);
    if ((ip[i >> 3]! & bit) !== (network[i >> 3]! & bit)) return false;
  }
  return true;
}

/** NO_PROXY's entries; malformed ones are skipped, as Go skips them. */
export function parseNoProxy(value: string): NoProxyEntry[] {
  const entries: NoProxyEntry[] = [];
  for (const raw of value.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return [{ kind: 'all' }];
    const cidr = parseCidr(entry);
    if (cidr) {
      entries.push(cidr);
      continue;
    }
    const split = splitHostPort(entry);
    let host = split?.host ?? entry;
    const port = split?.port ?? '';
    if (split && host === '') continue;
    if (split && host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
    const ip = ipBytes(host);
    if (ip) {
      entries.push({ kind: 'ip', ip, port });
      continue;
    }
    if (host === '') continue;
    if (host.startsWith('*.')) host = host.slice(1);
    const matchHost = !host.startsWith('.');
    if (matchHost) host = `.${host}`;
    entries.push({ kind: 'domain', host: domainToASCII(host) || host, port, matchHost });
  }
  return entries;
}

/** Whether a request to host:port goes through the environment's proxy (Go's useProxy). */
export function useProxy(entries: readonly NoProxyEntry[], hostname: string, port: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost') return false;
  const ip = ipBytes(host);
  if (ip && isLoopback(ip)) return false;
  for (const entry of entries) {
    switch (entry.kind) {
      case 'all':
        return false;
      case 'cidr':
        if (ip && inNetwork(ip, entry.network, entry.bits)) return false;
        break;
      case 'ip':
        if (ip && sameBytes(ip, entry.ip) && (entry.port === '' || entry.port === port)) return false;
        break;
      case 'domain':
        // An IP address is never matched by name.
        if (!ip && (host.endsWith(entry.host) || (entry.matchHost && host === entry.host.slice(1))) && (entry.port === '' || entry.port === port)) return false;
        break;
      default: {
        const unknown: never = entry;
        throw new Error(`unknown NO_PROXY entry ${JSON.stringify(unknown)}`);
      }
    }
  }
  return true;
}

/**
 * The proxy for requests to `server`: the kubeconfig's proxy-url when there is one, else the
 * environment's (undefined: connect directly). Throws a ProxyConfigError for a value we cannot use.
 */
export function proxyFor(server: URL, proxyUrl: string | undefined, env: ProxyEnvironment, source = 'kubeconfig'): URL | undefined {
  if (proxyUrl !== undefined) return parseKubeconfigProxyUrl(proxyUrl, source);
  let variable: string;
  let value: string;
  if (server.protocol === 'https:') {
    variable = 'HTTPS_PROXY';
    value = env.httpsProxy;
  } else if (server.protocol === 'http:') {
    variable = 'HTTP_PROXY';
    value = env.httpProxy;
  } else {
    return undefined;
  }
  const proxy = parseEnvProxy(value, variable);
  if (proxy === undefined) return undefined;
  const hostname = server.hostname.startsWith('[') ? server.hostname.slice(1, -1) : server.hostname;
  const port = server.port || (server.protocol === 'https:' ? '443' : '80');
  if (!useProxy(parseNoProxy(env.noProxy), hostname, port)) return undefined;
  if (variable === 'HTTP_PROXY' && env.cgi) {
    throw new ProxyConfigError('refusing to use HTTP_PROXY value in CGI environment; see golang.org/s/cgihttpproxy');
  }
  return proxy;
}
