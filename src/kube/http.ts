// The request layer: JSON over node:http(s) with auth and TLS from our ClientConfig (kubeconfig.ts).
// We don't use client-node's generated clients or its Watch: they build a new https.Agent per
// request (no keep-alive, sockets leak across watch reconnects), default every PATCH to JSON Patch,
// have no client-side rate limit or per-request timeout, and throw errors whose body is raw text.
// Here: keep-alive connections per client (two pools: see Credentials.watchAgent), a token bucket in front of every request (watches
// included, as in client-go), a timeout derived from the caller's signal, explicit content types,
// and every non-2xx answer turned into a KubeApiError.
import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import { createSecureContext } from 'node:tls';
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

interface Credentials {
  headers: Record<string, string>;
  /** Keep-alive connections for ordinary requests. */
  agent: http.Agent;
  /**
   * Watches' own connections. A watch holds its socket for minutes; from the shared pool it would
   * take the socket the last request freed, and the next request (the first resize's patch, just
   * after the informers' watches open) would pay a new TLS handshake. Apart, the request pool
   * stays warm and a watch that ends hands its socket to the next watch.
   */
  watchAgent: http.Agent;
  tlsFingerprint: string;
  resolvedAtMs: number;
  /** monotonicMs() after which an exec plugin's credential must be fetched again. */
  expiresAtPerfMs: number | undefined;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_AUTH_REFRESH_MS = 10_000;

/** Where requests go, split once from the server URL (a URL object per request costs CPU). */
interface Target {
  transport: typeof http | typeof https;
  protocol: string;
  /** Without IPv6 brackets, as http.request wants it. */
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
    const { protocol, hostname, port, pathname } = this.server;
    this.target = {
      transport: protocol === 'http:' ? http : https,
      protocol,
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
      let res = await this.send(options, call.signal, false, false);
      if (res.statusCode === 401) {
        // The token may have rotated since we last resolved credentials: resolve again, retry once.
        res.resume();
        res = await this.send(options, call.signal, true, false);
      }
      const status = res.statusCode ?? 0;
      const ok = status >= 200 && status <= 299;
      if (ok && options.ignoreResponseBody) {
        await discardBody(res, call.signal);
        return undefined as T;
      }
      const text = await readBody(res, call.signal);
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
  async stream(options: Omit<RequestOptions, 'method' | 'body' | 'contentType'>, signal: AbortSignal): Promise<http.IncomingMessage> {
    await this.limiter.take(signal);
    const req: RequestOptions = { ...options, method: 'GET' };
    let res = await this.send(req, signal, false, true);
    if (res.statusCode === 401) {
      res.resume();
      res = await this.send(req, signal, true, true);
    }
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) {
      const text = await readBody(res, signal);
      throw KubeApiError.fromStatus(status, parseJson(text), requestInfo(req), text);
    }
    return res;
  }

  /** Closes idle keep-alive sockets; later requests fail. Safe to call twice. */
  close(): void {
    this.closed = true;
    this.credentials?.agent.destroy();
    this.credentials?.watchAgent.destroy();
    this.credentials = undefined;
  }

  /**
   * Sends one request and resolves with the response head. `streaming`: the signal stays tied to
   * the request for the life of the response (a watch); otherwise it only guards the request until
   * the head arrives, and the caller's readBody guards the body (cheaper than Node's per-request
   * abort-signal plumbing, which also watches the stream's end).
   */
  private async send(options: RequestOptions, signal: AbortSignal, refreshAuth: boolean, streaming: boolean): Promise<http.IncomingMessage> {
    if (this.closed) throw new Error('Kubernetes client is closed');
    const creds = (refreshAuth ? undefined : this.freshCredentials()) ?? await this.resolveCredentials(refreshAuth);
    // The body as one string: Node then writes the request head and the body in one chunk (one
    // TLS record, one write) instead of a writev of two buffers.
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    if (body !== undefined && !options.contentType) throw new Error(`${describe(options)}: a request body needs an explicit content type`);
    const headers: Record<string, string> = {
      ...creds.headers,
      Accept: ContentType.Json,
      'User-Agent': this.options.userAgent ?? 'csi-resizer',
    };
    if (body !== undefined) {
      headers['Content-Type'] = options.contentType as string;
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    const target = this.target;
    return new Promise<http.IncomingMessage>((resolve, reject) => {
      signal.throwIfAborted();
      const req = target.transport.request({
        protocol: target.protocol, hostname: target.hostname, port: target.port, path: this.path(options.path, options.query),
        method: options.method, headers, agent: streaming ? creds.watchAgent : creds.agent, ...(streaming ? { signal } : {}),
      });
      const onAbort = () => req.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      if (!streaming) signal.addEventListener('abort', onAbort, { once: true });
      req.once('response', (res) => {
        if (!streaming) signal.removeEventListener('abort', onAbort);
        resolve(res);
      });
      req.once('error', (err) => {
        if (!streaming) signal.removeEventListener('abort', onAbort);
        reject(signal.aborted && signal.reason instanceof Error ? signal.reason : err);
      });
      req.end(body);
    });
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
    let agent: http.Agent;
    let watchAgent: http.Agent;
    if (previous && previous.tlsFingerprint === tlsFingerprint) {
      ({ agent, watchAgent } = previous);
    } else {
      // First load, or rotated client certificates/CA: new connections must use the new material.
      previous?.agent.destroy();
      previous?.watchAgent.destroy();
      const sessions: TlsSessions = {};
      // One secure context for every connection of both pools: without it each new socket parses
      // the CA, certificate and key again (about 1 ms of CPU per connection).
      const secureContext = this.server.protocol === 'http:' ? undefined : createSecureContext({ ca: tls.ca, cert: tls.cert, key: tls.key });
      const newAgent = () => secureContext === undefined
        ? new http.Agent({ keepAlive: true })
        : new SingleServerAgent({ keepAlive: true, ...tls, secureContext }, `${this.target.hostname}:${this.target.port}`, sessions);
      agent = newAgent();
      watchAgent = newAgent();
    }
    // An exec credential is refreshed a little before it expires.
    const expiresAtPerfMs = resolved.expiresAtMs === undefined ? undefined : monotonicMs() + (resolved.expiresAtMs - Date.now()) - 10_000;
    const creds: Credentials = { headers: { ...resolved.headers }, agent, watchAgent, tlsFingerprint, resolvedAtMs: monotonicMs(), expiresAtPerfMs };
    if (!this.closed) this.credentials = creds;
    return creds;
  }
}

/** The latest TLS session the server gave a client's connections (see SingleServerAgent). */
interface TlsSessions {
  latest?: Buffer;
}

/**
 * A keep-alive agent for one API server with one set of TLS options (a new agent is made when they
 * rotate), so its pool needs a single key. node's https.Agent derives the key from the request's
 * options on every request, two or three times, turning the CA, certificate and key buffers into
 * strings each time. Both pools of a client resume one TLS session: a resumed handshake skips
 * the certificate signature and its check (node's agent keeps sessions per agent, so the watch
 * pool's first connections would all be full handshakes).
 */
class SingleServerAgent extends https.Agent {
  constructor(options: https.AgentOptions, private readonly poolKey: string, private readonly sessions: TlsSessions) {
    super(options);
  }

  override getName(): string {
    return this.poolKey;
  }

  override createConnection(options: http.ClientRequestArgs, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    const latest = this.sessions.latest;
    const socket = super.createConnection(latest === undefined ? options : { ...options, session: latest } as http.ClientRequestArgs, callback);
    socket?.on('session', (session: Buffer) => {
      this.sessions.latest = session;
    });
    return socket;
  }
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

function readBody(res: http.IncomingMessage, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    // Most answers arrive in one chunk: decoded as it is, without a concat.
    let first: Buffer | undefined;
    let more: Buffer[] | undefined;
    const onAbort = () => res.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    res.on('data', (chunk: Buffer) => {
      if (first === undefined) first = chunk;
      else (more ??= [first]).push(chunk);
    });
    res.once('end', () => {
      signal.removeEventListener('abort', onAbort);
      resolve(more !== undefined ? Buffer.concat(more).toString('utf8') : (first?.toString('utf8') ?? ''));
    });
    res.once('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(signal.aborted && signal.reason instanceof Error ? signal.reason : err);
    });
  });
}

/** Reads a body to its end without keeping it (the socket goes back to the pool). */
function discardBody(res: http.IncomingMessage, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => res.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    res.once('end', () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
    res.once('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(signal.aborted && signal.reason instanceof Error ? signal.reason : err);
    });
    res.resume();
  });
}
