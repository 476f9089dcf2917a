// The request layer: JSON over HTTP/1.1 with auth and TLS from our ClientConfig (kubeconfig.ts).
// Ordinary calls and watches go over our own keep-alive HTTP/1.1 client (http1-transport.ts says
// why), each in its own pool.
// We don't use client-node's generated clients or its Watch: they build a new https.Agent per
// request (no keep-alive, sockets leak across watch reconnects), default every PATCH to JSON Patch,
// have no client-side rate limit or per-request timeout, and throw errors whose body is raw text.
// Here: keep-alive connections per client (two pools: see Credentials.watchPool), a token bucket in front of every request (watches
// included, as in client-go), a timeout derived from the caller's signal, explicit content types,
// and every non-2xx answer turned into a KubeApiError.
import { createSecureContext } from 'node:tls';
import { Http1Pool, type Http1Response, type Http1PoolOptions, type Http1Stream, type Http1StreamBody, type TlsSessions } from './http1-transport.js';
import { monotonicMs } from '../base/clock.js';
import { linkedSignal } from '../base/signals.js';
import { KubeApiError, type RequestInfo } from './errors.js';
import { TokenBucket } from '../base/token-bucket.js';
import { resolveCredentials } from './credentials.js';
import type { ClientConfig } from './kubeconfig.js';

export const ContentType = {
  Json: 'application/json',
  StrategicMergePatch: 'application/strategic-merge-patch+json',
  MergePatch: 'application/merge-patch+json',
  JsonPatch: 'application/json-patch+json',
} as const;
export type ContentType = (typeof ContentType)[keyof typeof ContentType];

export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface RequestOptions {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** API path such as /api/v1/namespaces/ns/persistentvolumeclaims/name/status. */
  path: string;
  query?: Query;
  body?: unknown;
  /** Required whenever there is a body; never guessed. */
  contentType?: ContentType;
  /** Overrides the client's default request timeout. */
  timeoutMs?: number;
  /**
   * The caller has no use for a successful answer's body (an Event written): it is read to the
   * end, so the connection is reused, but not decoded, and the request resolves with undefined.
   * An error answer is decoded as always.
   */
  ignoreResponseBody?: boolean;
}

export interface KubeHttpOptions {
  kubeConfig: ClientConfig;
  qps: number;
  burst: number;
  /** Per-request timeout for ordinary calls (not for watch streams). */
  requestTimeoutMs?: number;
  userAgent?: string;
  /** How long resolved credentials are reused before reading them again (token and certificate rotation). */
  authRefreshMs?: number;
}

/** A watch's response body: its bytes as they arrive; destroy() stops reading it. */
export type ResponseStream = Http1StreamBody;

interface Credentials {
  /** The request head's header lines (auth, Accept, User-Agent, Host), each ending in CRLF; watches send the same. */
  headerLines: string;
  /** Keep-alive connections for ordinary requests. */
  pool: Http1Pool;
  /**
   * Watches' own connections. A watch holds its socket for minutes; from the shared pool it would
   * take the socket the last request freed, and the next request (the first resize's patch, just
   * after the informers' watches open) would pay a new TLS handshake. Apart, the request pool
   * stays warm and a watch that ends hands its socket to the next watch.
   */
  watchPool: Http1Pool;
  tlsFingerprint: string;
  resolvedAtMs: number;
  /** monotonicMs() after which an exec plugin's credential must be fetched again. */
  expiresAtPerfMs: number | undefined;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_AUTH_REFRESH_MS = 10_000;

/** An error answer's body is read up to this many bytes (the rest is dropped with the connection). */
const MAX_ERROR_BODY_BYTES = 1024 * 1024;

/** Where requests go, split once from the server URL (a URL object per request costs CPU). */
interface Target {
  /** Without IPv6 brackets. */
  hostname: string;
  port: string;
  /** The server URL's path prefix without its trailing slash. */
  basePath: string;
}

export class KubeHttp {
  readonly server: URL;
  private readonly target: Target;
  private readonly limiter: TokenBucket;
  private credentials: Credentials | undefined;
  private pendingCredentials: Promise<Credentials> | undefined;
  private closed = false;

  constructor(private readonly options: KubeHttpOptions) {
    this.server = new URL(options.kubeConfig.server);
    const { hostname, port, pathname } = this.server;
    this.target = {
      hostname: hostname.startsWith('[') ? hostname.slice(1, -1) : hostname,
      port,
      basePath: pathname.replace(/\/+$/, ''),
    };
    this.limiter = new TokenBucket({ qps: options.qps, burst: options.burst });
  }

  /** A JSON request; resolves with the decoded body (undefined for an empty body). */
  async request<T>(options: RequestOptions, signal: AbortSignal): Promise<T> {
    const call = linkedSignal(signal, options.timeoutMs ?? this.options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS);
    try {
      await this.limiter.take(call.signal);
      let res = await this.exchange(options, call.signal, false);
      if (res.status === 401) {
        // The token may have rotated since we last resolved credentials: resolve again, retry once.
        res = await this.exchange(options, call.signal, true);
      }
      const status = res.status;
      const ok = status >= 200 && status <= 299;
      if (ok && options.ignoreResponseBody) return undefined as T;
      const text = res.body.toString('utf8');
      if (!ok) throw KubeApiError.fromStatus(status, parseJson(text), requestInfo(options), text);
      return (text === '' ? undefined : JSON.parse(text)) as T;
    } finally {
      call.dispose();
    }
  }

  /**
   * Opens a streaming GET (a watch). Resolves once the server answered 2xx; the response stays
   * open until the server ends it or the signal aborts (which destroys the socket). No timeout:
   * the informer's inactivity watchdog owns liveness.
   */
  async stream(options: Omit<RequestOptions, 'method' | 'body' | 'contentType'>, signal: AbortSignal): Promise<ResponseStream> {
    await this.limiter.take(signal);
    const req: RequestOptions = { ...options, method: 'GET' };
    let res = await this.openStream(req, signal, false);
    if (res.status === 401) {
      // Read to its end so the connection is reused (an oversized body closes it instead).
      await readText(res.body, MAX_ERROR_BODY_BYTES);
      res = await this.openStream(req, signal, true);
    }
    const status = res.status;
    if (status < 200 || status > 299) {
      const text = await readText(res.body, MAX_ERROR_BODY_BYTES);
      throw KubeApiError.fromStatus(status, parseJson(text), requestInfo(req), text);
    }
    return res.body;
  }

  /** Closes idle keep-alive sockets; later requests fail. Safe to call twice. */
  close(): void {
    this.closed = true;
    this.credentials?.pool.destroy();
    this.credentials?.watchPool.destroy();
    this.credentials = undefined;
  }

  /** Sends one ordinary request over the request pool and resolves with the whole response. */
  private async exchange(options: RequestOptions, signal: AbortSignal, refreshAuth: boolean): Promise<Http1Response> {
    if (this.closed) throw new Error('Kubernetes client is closed');
    const creds = (refreshAuth ? undefined : this.freshCredentials()) ?? await this.resolveCredentials(refreshAuth);
    signal.throwIfAborted();
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    if (body !== undefined && !options.contentType) throw new Error(`${describe(options)}: a request body needs an explicit content type`);
    const path = this.path(options.path, options.query);
    // As node's http client refuses it: a path is sent as it is, so it must already be escaped.
    if (UNESCAPED_PATH.test(path)) throw new Error(`${describe(options)}: request path contains unescaped characters`);
    let head = `${options.method} ${path} HTTP/1.1\r\n${creds.headerLines}`;
    if (body !== undefined) head += `Content-Type: ${options.contentType as string}\r\n`;
    return creds.pool.send(options.method, head, body, signal);
  }

  /** Sends a watch request over the watch pool and resolves with the response head and its streaming body. */
  private async openStream(options: RequestOptions, signal: AbortSignal, refreshAuth: boolean): Promise<Http1Stream> {
    if (this.closed) throw new Error('Kubernetes client is closed');
    const creds = (refreshAuth ? undefined : this.freshCredentials()) ?? await this.resolveCredentials(refreshAuth);
    signal.throwIfAborted();
    const path = this.path(options.path, options.query);
    if (UNESCAPED_PATH.test(path)) throw new Error(`${describe(options)}: request path contains unescaped characters`);
    return creds.watchPool.stream(`GET ${path} HTTP/1.1\r\n${creds.headerLines}`, signal);
  }

  private get userAgent(): string {
    return this.options.userAgent ?? 'csi-resizer';
  }

  /** The request path with its query (the server URL's own path prefix included), as URL would encode it. */
  private path(path: string, query?: Query): string {
    if (query === undefined) return this.target.basePath + path;
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== '') params.set(key, String(value));
    }
    const search = params.size > 0 ? `?${params.toString()}` : '';
    return this.target.basePath + path + search;
  }

  /** The credentials in use while they are fresh (no await on the common path), else undefined. */
  private freshCredentials(): Credentials | undefined {
    const current = this.credentials;
    if (current === undefined) return undefined;
    const maxAgeMs = this.options.authRefreshMs ?? DEFAULT_AUTH_REFRESH_MS;
    const now = monotonicMs();
    const fresh = now - current.resolvedAtMs < maxAgeMs && (current.expiresAtPerfMs === undefined || now < current.expiresAtPerfMs);
    return fresh ? current : undefined;
  }

  private async resolveCredentials(force: boolean): Promise<Credentials> {
    const current = force ? undefined : this.freshCredentials();
    if (current) return current;
    this.pendingCredentials ??= this.loadCredentials().finally(() => {
      this.pendingCredentials = undefined;
    });
    return this.pendingCredentials;
  }

  private async loadCredentials(): Promise<Credentials> {
    const resolved = await resolveCredentials(this.options.kubeConfig, AbortSignal.timeout(60_000));
    const { tls } = resolved;
    const tlsFingerprint = [tls.ca, tls.cert, tls.key, tls.rejectUnauthorized, tls.servername]
      .map((v) => (Buffer.isBuffer(v) ? v.toString('base64') : String(v)))
      .join('|');
    const previous = this.credentials;
    let pool: Http1Pool;
    let watchPool: Http1Pool;
    if (previous && previous.tlsFingerprint === tlsFingerprint) {
      ({ pool, watchPool } = previous);
    } else {
      // First load, or rotated client certificates/CA: new connections must use the new material
      // (requests in flight on the old pool finish; its connections then close; watches on the
      // old material are cut, and the informers watch again on the new).
      previous?.pool.retire();
      previous?.watchPool.destroy();
      const sessions: TlsSessions = {};
      // One secure context for every connection of both pools: without it each new socket parses
      // the CA, certificate and key again (about 1 ms of CPU per connection).
      const secureContext = this.server.protocol === 'http:' ? undefined : createSecureContext({ ca: tls.ca, cert: tls.cert, key: tls.key });
      const { hostname, port } = this.target;
      const poolOptions: Http1PoolOptions = {
        hostname,
        port: Number(port || (secureContext === undefined ? 80 : 443)),
        ...(secureContext === undefined ? {} : {
          tls: { secureContext, rejectUnauthorized: tls.rejectUnauthorized, ...(tls.servername ? { servername: tls.servername } : {}), sessions },
        }),
      };
      pool = new Http1Pool(poolOptions);
      watchPool = new Http1Pool(poolOptions);
    }
    // An exec credential is refreshed a little before it expires.
    const expiresAtPerfMs = resolved.expiresAtMs === undefined ? undefined : monotonicMs() + (resolved.expiresAtMs - Date.now()) - 10_000;
    const headerLines = headerBlock({ ...resolved.headers, Accept: ContentType.Json, 'User-Agent': this.userAgent, Host: this.server.host });
    const creds: Credentials = { headerLines, pool, watchPool, tlsFingerprint, resolvedAtMs: monotonicMs(), expiresAtPerfMs };
    if (!this.closed) this.credentials = creds;
    return creds;
  }
}

/** Characters node's http client refuses in a request path (it must arrive escaped). */
const UNESCAPED_PATH = /[^\u0021-\u00ff]/;
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_HEADER_VALUE = /[^\t\u0020-\u007e\u0080-\u00ff]/;

/**
 * Header lines for a request head, each ending in CRLF. A name or value that could break the head
 * (a token file with a newline in it) is refused as node's http client refuses it, naming the
 * header and never its value (which may be a secret).
 */
function headerBlock(headers: Record<string, string>): string {
  let lines = '';
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) throw new Error(`invalid HTTP header name ${JSON.stringify(name)}`);
    if (BAD_HEADER_VALUE.test(value)) throw new Error(`invalid character in the value of HTTP header ${JSON.stringify(name)}`);
    lines += `${name}: ${value}\r\n`;
  }
  return lines;
}

function describe(options: Pick<RequestOptions, 'path'> & { method?: string }): string {
  return `${options.method ?? 'GET'} ${options.path}`;
}

/** The failed call, kept on a KubeApiError for logs (its message is the server's). */
function requestInfo(options: Pick<RequestOptions, 'path'> & { method?: string }): RequestInfo {
  return { method: options.method ?? 'GET', path: options.path };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A streamed body as text, up to `limit` bytes: a longer one is cut there and its connection closed.
 * Failures of the connection (or the caller's abort) reject.
 */
async function readText(body: ResponseStream, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    const take = Math.min(chunk.length, limit - length);
    chunks.push(take === chunk.length ? chunk : chunk.subarray(0, take));
    length += take;
    if (length >= limit) break; // leaving the loop destroys the body
  }
  return Buffer.concat(chunks, length).toString('utf8');
}
