// The kube HTTP port: JSON requests to the API server with auth and TLS from our ClientConfig
// (kubeconfig.ts), over node:http(s) (connections.ts: keep-alive agents, TLS, proxies).
// We don't use client-node's generated clients or its Watch: they build a new https.Agent per
// request (no keep-alive, sockets leak across watch reconnects), default every PATCH to JSON Patch,
// have no client-side rate limit or per-request timeout, and throw errors whose body is raw text.
// Here: keep-alive connections per client (two agents: see connections.ts), a token bucket in front
// of every request (watches included, where client-go's skip it), a timeout derived from the
// caller's signal (the only deadline), explicit content types, every non-2xx answer turned into a
// KubeApiError, a GET whose reused connection was lost before any answer sent again once (what
// Go's transport does), and every other failure of the wire an Error naming the request. Requests
// are reported as client-go's REST client reports them (docs/behavior.md §5.3, "REST client")
// through the metrics port of the options.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { createSecureContext } from 'node:tls';
import { monotonicMs } from '../../base/clock.js';
import { linkedSignal } from '../../base/signals.js';
import { ContentType } from '../api/content-type.js';
import { KubeApiError, type RequestInfo } from '../api/errors.js';
import { TokenBucket } from '../../base/token-bucket.js';
import { CredentialSource, EXEC_REFRESH_MARGIN_MS, type ExecCertificate, type ResolvedCredentials } from './credentials.js';
import { ApiConnections, type ServerTls } from './connections.js';
import type { ClientConfig } from './kubeconfig.js';
import { proxyEnvironment, proxyFor, redactedUrl } from './proxy.js';
import { CaReloadReason, noRestClientMetrics, type RestClientMetrics, type RestClientRecorder, type VerbRecorder } from '../../observability/rest-client.js';

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
  /**
   * How long resolved credentials are reused before reading their files again (token, CA and
   * certificate rotation); an exec plugin's credential is kept until shortly before it expires.
   */
  authRefreshMs?: number;
  /** Where HTTPS_PROXY, HTTP_PROXY and NO_PROXY are read (default process.env); unused with a kubeconfig proxy-url. */
  env?: NodeJS.ProcessEnv;
  /** How a direct connection resolves the server's host name (default: the system's resolver). */
  lookup?: LookupFunction;
  /** Where this client's requests are recorded (client-go's rest_client_* metrics); default nowhere. */
  metrics?: RestClientMetrics;
}

/** A watch's response body: its bytes as they arrive; destroy() stops reading it. */
export interface ResponseStream extends AsyncIterable<Buffer> {
  destroy(): void;
}

interface Credentials {
  /** The request headers (auth, Accept, User-Agent); watches send the same. */
  headers: Readonly<Record<string, string>>;
  connections: ApiConnections;
  tlsFingerprint: string;
  /** The part of tlsFingerprint without the CA: what the client presents and how it checks the server's name. */
  clientFingerprint: string;
  resolvedAtMs: number;
  /** monotonicMs() after which an exec plugin's credential must be fetched again. */
  expiresAtPerfMs: number | undefined;
  /** The client certificate the exec plugin returned, if any. */
  execCertificate: ExecCertificate | undefined;
  /** The CA in use. */
  ca: Buffer | undefined;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_AUTH_REFRESH_MS = 10_000;

/** An error answer's body is read up to this many bytes (the rest is dropped with the connection). */
const MAX_ERROR_BODY_BYTES = 1024 * 1024;

export class KubeHttp {
  readonly server: URL;
  /** The proxy every request goes through (its password masked), or undefined for direct connections. */
  readonly proxy: string | undefined;
  private readonly proxyUrl: URL | undefined;
  /** The server URL's path prefix without its trailing slash. */
  private readonly basePath: string;
  private readonly limiter: TokenBucket;
  /** node:http's or node:https's request, by the server's scheme. */
  private readonly send: typeof http.request;
  /** The server's host (an IPv6 address without brackets) and port, as node's request options name them. */
  private readonly host: string;
  private readonly port: number;
  private credentials: Credentials | undefined;
  /** The resolution under way; `refused`: it runs an exec plugin again because the server refused its credential. */
  private pendingCredentials: { promise: Promise<Credentials>; refused: boolean } | undefined;
  private readonly credentialSource: CredentialSource;
  private closed = false;
  private readonly recorder: RestClientRecorder;

  /** Throws for a proxy setting that cannot be used (a bad proxy-url or proxy variable). */
  constructor(private readonly options: KubeHttpOptions) {
    this.server = new URL(options.kubeConfig.server);
    this.basePath = this.server.pathname.replace(/\/+$/, '');
    this.proxyUrl = proxyFor(this.server, options.kubeConfig.proxyUrl, proxyEnvironment(options.env ?? process.env));
    this.proxy = this.proxyUrl === undefined ? undefined : redactedUrl(this.proxyUrl);
    this.limiter = new TokenBucket({ qps: options.qps, burst: options.burst });
    const secure = this.server.protocol !== 'http:';
    this.send = secure ? https.request : http.request;
    this.host = this.server.hostname.startsWith('[') ? this.server.hostname.slice(1, -1) : this.server.hostname;
    this.port = Number(this.server.port || (secure ? 443 : 80));
    this.recorder = (options.metrics ?? noRestClientMetrics).client(urlHost(options.kubeConfig.server, this.server));
    this.credentialSource = new CredentialSource(options.kubeConfig, this.recorder);
  }

  /** The token bucket's rate and size as given (a qps of 0 or less, or +Inf: no client-side limit). */
  get rateLimit(): { qps: number; burst: number } {
    return { qps: this.options.qps, burst: this.options.burst };
  }

  /** A JSON request; resolves with the decoded body (undefined for an empty body). */
  async request<T>(options: RequestOptions, signal: AbortSignal): Promise<T> {
    const verb = this.recorder.forVerb(options.method);
    const startedMs = monotonicMs();
    const call = linkedSignal(signal, options.timeoutMs ?? this.options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS);
    try {
      let res: Answer;
      try {
        await this.throttle(verb, call.signal);
        res = await this.exchange(options, call.signal, false, verb);
        if (res.statusCode === 401) {
          // The token may have rotated since we last resolved credentials: resolve again, retry once.
          res = await this.exchange(options, call.signal, true, verb);
        }
      } finally {
        // client-go's request latency: from before the limiter to the whole answer read, failures included.
        verb.latency((monotonicMs() - startedMs) / 1000);
      }
      const status = res.statusCode;
      const ok = status >= 200 && status <= 299;
      // As client-go: the final answer's body, unless it is an error answer without one.
      if (ok || res.bodyBytes > 0) verb.responseSize(res.bodyBytes);
      if (ok && options.ignoreResponseBody) return undefined as T;
      const text = res.body.toString('utf8');
      if (!ok) throw KubeApiError.fromStatus(status, parseJson(text), requestInfo(options), text);
      return (text === '' ? undefined : decodeAnswer(text, status, options)) as T;
    } finally {
      call.dispose();
    }
  }

  /**
   * Opens a streaming GET (a watch). Resolves once the server answered 2xx; the response stays
   * open until the server ends it or the signal aborts (which destroys the connection). No timeout:
   * the informer's inactivity watchdog owns liveness.
   */
  async stream(options: Omit<RequestOptions, 'method' | 'body' | 'contentType'>, signal: AbortSignal): Promise<ResponseStream> {
    const verb = this.recorder.forVerb('GET');
    // A watch records its attempts and, as it waits for the limiter (client-go's does not), that
    // wait; no latency or sizes, as client-go's watch.
    await this.throttle(verb, signal);
    const req: RequestOptions = { ...options, method: 'GET' };
    let res = await this.openStream(req, signal, false, verb);
    if (res.statusCode === 401) {
      // Read to its end so the connection stays open for reuse.
      await readText(res, MAX_ERROR_BODY_BYTES, req, signal);
      res = await this.openStream(req, signal, true, verb);
    }
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) {
      const text = await readText(res, MAX_ERROR_BODY_BYTES, req, signal);
      throw KubeApiError.fromStatus(status, parseJson(text), requestInfo(req), text);
    }
    return new WatchBody(res, req, signal);
  }

  /** Closes the connections; later requests fail. Safe to call twice. */
  close(): void {
    this.closed = true;
    this.credentials?.connections.destroy();
    this.credentials = undefined;
    this.recorder.close();
  }

  /**
   * Waits for the client-side rate limiter, recording the wait (none without a limiter, as
   * client-go). A token that is there is taken without an await, so a request that did not wait
   * records no wait, as Go's limiter returns at once.
   */
  private async throttle(verb: VerbRecorder, signal: AbortSignal): Promise<void> {
    if (this.limiter.unlimited) return;
    signal.throwIfAborted();
    if (this.limiter.tryTake()) {
      verb.rateLimiterWait(0);
      return;
    }
    const startedMs = monotonicMs();
    try {
      await this.limiter.take(signal);
    } finally {
      verb.rateLimiterWait((monotonicMs() - startedMs) / 1000);
    }
  }

  /**
   * Sends one ordinary request over the request agent and resolves with the whole answer: its body
   * kept whole for a 2xx (none with ignoreResponseBody), up to MAX_ERROR_BODY_BYTES otherwise.
   */
  private async exchange(options: RequestOptions, signal: AbortSignal, refreshAuth: boolean, verb: VerbRecorder): Promise<Answer> {
    if (this.closed) throw new Error('Kubernetes client is closed');
    const body = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    if (body !== undefined && !options.contentType) throw new Error(`${describe(options)}: a request body needs an explicit content type`);
    const path = this.path(options.path, options.query);
    // As node's http client refuses it: a path is sent as it is, so it must already be escaped.
    if (UNESCAPED_PATH.test(path)) throw new Error(`${describe(options)}: request path contains unescaped characters`);
    // One attempt as client-go counts it: the resend of a stale GET below is part of it, as it is
    // inside Go's transport. Credentials that cannot be resolved fail it without an answer.
    const head: ResponseHead = { statusCode: undefined };
    try {
      const creds = (refreshAuth ? undefined : this.freshCredentials()) ?? (await this.resolveCredentials(refreshAuth));
      signal.throwIfAborted();
      const request: http.RequestOptions = {
        agent: creds.connections.requests,
        host: this.host,
        port: this.port,
        method: options.method,
        path,
        headers: body === undefined ? creds.headers : { ...creds.headers, 'content-type': options.contentType!, 'content-length': String(body.length) },
      };
      const keep = options.ignoreResponseBody ? keepErrorBodyOnly : keepWholeBody;
      try {
        return await sendBuffered(this.send, request, body, signal, keep, head);
      } catch (err) {
        // A stale keep-alive connection: the server closed it as we wrote. A GET is sent again, on
        // another connection, as Go's transport does for idempotent requests; anything else fails.
        if (options.method === 'GET' && !signal.aborted && isStaleConnection(err)) {
          try {
            return await sendBuffered(this.send, request, body, signal, keep, head);
          } catch (again) {
            throw wireFailure(again, options, signal);
          }
        }
        throw wireFailure(err, options, signal);
      }
    } finally {
      verb.requestSize(body === undefined ? 0 : body.length);
      verb.attempt(head.statusCode, refreshAuth);
    }
  }

  /** Sends a watch request over the watch agent and resolves at the response head. */
  private async openStream(options: RequestOptions, signal: AbortSignal, refreshAuth: boolean, verb: VerbRecorder): Promise<http.IncomingMessage> {
    if (this.closed) throw new Error('Kubernetes client is closed');
    const path = this.path(options.path, options.query);
    if (UNESCAPED_PATH.test(path)) throw new Error(`${describe(options)}: request path contains unescaped characters`);
    let statusCode: number | undefined;
    try {
      const creds = (refreshAuth ? undefined : this.freshCredentials()) ?? (await this.resolveCredentials(refreshAuth));
      signal.throwIfAborted();
      let res: http.IncomingMessage;
      try {
        res = await openResponse(
          this.send,
          { agent: creds.connections.watches, host: this.host, port: this.port, method: 'GET', path, headers: creds.headers },
          signal,
        );
      } catch (err) {
        throw wireFailure(err, options, signal);
      }
      statusCode = res.statusCode;
      return res;
    } finally {
      verb.attempt(statusCode, refreshAuth);
    }
  }

  private get userAgent(): string {
    return this.options.userAgent ?? 'csi-resizer';
  }

  /** The request path with its query (the server URL's own path prefix included), as URL would encode it. */
  private path(path: string, query?: Query): string {
    if (query === undefined) return this.basePath + path;
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== '') params.set(key, String(value));
    }
    const search = params.size > 0 ? `?${params.toString()}` : '';
    return this.basePath + path + search;
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

  /**
   * `refused`: the server answered 401, so the credential is resolved again and an exec plugin
   * runs again. Callers at the same time share one resolution; a refusal waits for a resolution
   * under way that would not run the plugin, then runs it (one at a time: each compares with the last).
   */
  private async resolveCredentials(refused: boolean): Promise<Credentials> {
    const current = refused ? undefined : this.freshCredentials();
    if (current) return current;
    const pending = this.pendingCredentials;
    if (pending && (pending.refused || !refused)) return pending.promise;
    const after = pending?.promise.catch(() => undefined);
    const load: { promise: Promise<Credentials>; refused: boolean } = {
      refused,
      promise: (async () => {
        await after;
        return this.loadCredentials(refused);
      })().finally(() => {
        if (this.pendingCredentials === load) this.pendingCredentials = undefined;
      }),
    };
    this.pendingCredentials = load;
    return load.promise;
  }

  private async loadCredentials(refused: boolean): Promise<Credentials> {
    const resolved = await this.credentialSource.resolve(AbortSignal.timeout(60_000), refused);
    const { tls } = resolved;
    const fingerprint = (values: unknown[]) => values.map((v) => (Buffer.isBuffer(v) ? v.toString('base64') : String(v))).join('|');
    const clientFingerprint = fingerprint([tls.cert, tls.key, tls.rejectUnauthorized, tls.servername]);
    const tlsFingerprint = `${fingerprint([tls.ca])}|${clientFingerprint}`;
    const previous = this.credentials;
    let connections: ApiConnections;
    if (previous && previous.tlsFingerprint === tlsFingerprint) {
      connections = previous.connections;
    } else {
      // First load, or rotated client certificates/CA: new connections must use the new material
      // (open watches stay when only the CA changed: connections.ts, retire).
      previous?.connections.retire({ keepWatches: previous.clientFingerprint === clientFingerprint });
      // One secure context for every connection: without it each new socket parses the CA,
      // certificate and key again.
      const serverTls: ServerTls | undefined =
        this.server.protocol === 'http:'
          ? undefined
          : {
              secureContext: createSecureContext({ ca: tls.ca, cert: tls.cert, key: tls.key }),
              rejectUnauthorized: tls.rejectUnauthorized,
              ...(tls.servername ? { servername: tls.servername } : {}),
            };
      connections = new ApiConnections({
        server: this.server,
        tls: serverTls,
        proxy: this.proxyUrl,
        ...(this.options.lookup ? { lookup: this.options.lookup } : {}),
      });
    }
    // An exec credential is refreshed a little before it expires.
    const expiresAtPerfMs = resolved.expiresAtMs === undefined ? undefined : monotonicMs() + (resolved.expiresAtMs - Date.now()) - EXEC_REFRESH_MARGIN_MS;
    const headers = checkedHeaders({ ...resolved.headers, Accept: ContentType.Json, 'User-Agent': this.userAgent });
    const execCertificate = resolved.execCertificate;
    const creds: Credentials = {
      headers,
      connections,
      tlsFingerprint,
      clientFingerprint,
      resolvedAtMs: monotonicMs(),
      expiresAtPerfMs,
      execCertificate,
      ca: tls.ca,
    };
    if (this.options.kubeConfig.auth.kind === 'exec') this.recordExecCertificate(previous?.execCertificate, execCertificate);
    if (previous !== undefined) this.recordCaReload(previous.ca, resolved);
    if (this.closed) connections.destroy();
    else this.credentials = creds;
    return creds;
  }

  /**
   * A CA file read after the first (which built this client's connections) is a reload, as client-go
   * counts them per transport: its failure reason, or whether it changed the CA this client uses.
   */
  private recordCaReload(previousCa: Buffer | undefined, resolved: ResolvedCredentials): void {
    const read = resolved.caFileRead;
    if (read === undefined) return;
    if (read !== 'read') this.recorder.caReload(read);
    else this.recorder.caReload(previousCa !== undefined && resolved.tls.ca?.equals(previousCa) ? CaReloadReason.Unchanged : CaReloadReason.Updated);
  }

  /**
   * As client-go's exec authenticator: a plugin certificate that replaces another (or is dropped)
   * records how long the old one had lived, and the expiry gauge follows the current one.
   */
  private recordExecCertificate(previous: ExecCertificate | undefined, current: ExecCertificate | undefined): void {
    if (previous !== undefined && !(current !== undefined && previous.pem.equals(current.pem))) {
      this.recorder.execCertificateRotated((Date.now() - previous.notBeforeMs) / 1000);
    }
    if (!this.closed) this.recorder.execCertificateExpiry(current?.notAfterMs);
  }
}

/**
 * The server URL's host as Go's url.URL.Host has it, client-go's host label: as written in the
 * kubeconfig, its port kept even when it is the scheme's default (WHATWG URL drops it), without
 * user info.
 */
export function urlHost(server: string, parsed: URL): string {
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/.exec(server)?.[1];
  if (authority === undefined) return parsed.host;
  return authority.slice(authority.lastIndexOf('@') + 1);
}

/** Characters node's http client refuses in a request path (it must arrive escaped). */
const UNESCAPED_PATH = /[^\u0021-\u00ff]/;
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_HEADER_VALUE = /[^\t\u0020-\u007e\u0080-\u00ff]/;

/**
 * The headers, with lower-case names. A name or value that could break the request head (a token
 * file with a newline in it) is refused as node's http client refuses it, naming the header and
 * never its value (which may be a secret).
 */
function checkedHeaders(headers: Record<string, string>): Readonly<Record<string, string>> {
  const checked: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) throw new Error(`invalid HTTP header name ${JSON.stringify(name)}`);
    if (BAD_HEADER_VALUE.test(value)) throw new Error(`invalid character in the value of HTTP header ${JSON.stringify(name)}`);
    checked[name.toLowerCase()] = value;
  }
  return Object.freeze(checked);
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
 * A 2xx body that is not JSON fails naming the request, like every other failure. V8's
 * SyntaxError quotes the body, which is never logged, so it is not kept as the cause.
 */
function decodeAnswer(text: string, status: number, options: Pick<RequestOptions, 'path'> & { method?: string }): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${describe(options)}: the server answered ${status} with a body that is not JSON (${Buffer.byteLength(text)} bytes)`);
  }
}

function codeOf(err: unknown): unknown {
  return (err as { code?: unknown } | undefined)?.code;
}

/**
 * A connection lost before any byte of the answer, on a connection that had carried an answer
 * before (node's request marks a reused socket), or reset as we wrote.
 */
function isStaleConnection(err: unknown): boolean {
  const code = codeOf(err);
  return (err as { [REUSED]?: boolean } | undefined)?.[REUSED] === true && (code === 'ECONNRESET' || code === 'EPIPE');
}

/**
 * A failure of the wire as an Error naming the request, with node's error as its cause. The
 * caller's abort stays the signal's reason.
 */
function wireFailure(err: unknown, options: Pick<RequestOptions, 'path'> & { method?: string }, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason ?? err;
  if (!(err instanceof Error) || err instanceof KubeApiError) return err;
  return new Error(`${describe(options)}: ${explain(err)}`, { cause: err });
}

function explain(err: Error): string {
  const code = codeOf(err);
  if (code === 'HPE_HEADER_OVERFLOW') return 'the response head is larger than the HTTP header size limit (--max-http-header-size)';
  if (typeof code === 'string' && code.startsWith('HPE_')) return `malformed HTTP response (${err.message})`;
  // 'socket hang up' before an answer, 'aborted' in the middle of one.
  if (code === 'ECONNRESET' && (err.message === 'socket hang up' || err.message === 'aborted'))
    return `the connection closed before the response was complete (${err.message})`;
  return err.message;
}

/** Marks an error of a request sent on a reused keep-alive connection, before any answer. */
const REUSED = Symbol('reusedConnection');

/** A whole answer to an ordinary request. */
interface Answer {
  statusCode: number;
  /** The bytes kept (KeepBody). */
  body: Buffer;
  /** Every byte of the body received, kept or not. */
  bodyBytes: number;
}

/** An attempt's response status, written when the response head arrives (a failure after it keeps it). */
interface ResponseHead {
  statusCode: number | undefined;
}

/** How many bytes of an answer's body to keep, by its status (the rest is read and dropped). */
type KeepBody = (statusCode: number) => number;
const keepWholeBody: KeepBody = (status) => (status >= 200 && status <= 299 ? Infinity : MAX_ERROR_BODY_BYTES);
const keepErrorBodyOnly: KeepBody = (status) => (status >= 200 && status <= 299 ? 0 : MAX_ERROR_BODY_BYTES);

const EMPTY = Buffer.alloc(0);

/**
 * One request, its answer collected into one Buffer (bytes past the kept ones read and dropped).
 * The signal aborts it at any point, rejecting with the signal's reason.
 */
function sendBuffered(
  send: typeof http.request,
  options: http.RequestOptions,
  body: Buffer | undefined,
  signal: AbortSignal,
  keep: KeepBody,
  head: ResponseHead,
): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const req = send(options);
    let answered = false;
    const onAbort = () => req.destroy(signal.reason as Error);
    const fail = (err: Error) => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      if (req.reusedSocket && !answered) Object.defineProperty(err, REUSED, { value: true });
      reject(err);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    // Kept for the request's life: node may report a failure on both the request and the response.
    req.on('error', fail);
    req.once('response', (res: http.IncomingMessage) => {
      answered = true;
      const statusCode = res.statusCode ?? 0;
      head.statusCode = statusCode;
      const limit = keep(statusCode);
      const chunks: Buffer[] = [];
      let length = 0;
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (length >= limit) return;
        const take = Math.min(chunk.length, limit - length);
        chunks.push(take === chunk.length ? chunk : chunk.subarray(0, take));
        length += take;
      });
      res.on('error', fail);
      res.once('end', () => {
        signal.removeEventListener('abort', onAbort);
        resolve({ statusCode, body: chunks.length === 0 ? EMPTY : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length), bodyBytes: received });
      });
    });
    req.end(body);
  });
}

/** A request without a body, resolving at its response head (the body is the caller's to read). */
function openResponse(send: typeof http.request, options: http.RequestOptions, signal: AbortSignal): Promise<http.IncomingMessage> {
  return new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = send(options);
    // Until the response is handed on, an abort fails the request; after, it destroys the stream.
    const onAbort = () => req.destroy(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    // Kept for the request's life: a failure after the head is also the body's, reported by WatchBody.
    req.on('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(signal.aborted ? signal.reason : err);
    });
    req.once('response', (res: http.IncomingMessage) => {
      res.once('close', () => signal.removeEventListener('abort', onAbort));
      resolve(res);
    });
    req.end();
  });
}

/**
 * A body as text, up to `limit` bytes: a longer one is cut there and its connection closed.
 * Failures of the connection (or the caller's abort) reject.
 */
async function readText(body: http.IncomingMessage, limit: number, options: RequestOptions, signal: AbortSignal): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const take = Math.min(chunk.length, limit - length);
      chunks.push(take === chunk.length ? chunk : chunk.subarray(0, take));
      length += take;
      if (length >= limit) break; // leaving the loop destroys the body
    }
  } catch (err) {
    throw wireFailure(err, options, signal);
  }
  return chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, length).toString('utf8');
}

/** A watch's body: node's response stream, with a failure of the wire reported as wireFailure does. */
class WatchBody implements ResponseStream {
  constructor(
    private readonly body: http.IncomingMessage,
    private readonly options: RequestOptions,
    private readonly signal: AbortSignal,
  ) {}

  destroy(): void {
    this.body.destroy();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of this.body as AsyncIterable<Buffer>) yield chunk;
    } catch (err) {
      throw wireFailure(err, this.options, this.signal);
    } finally {
      this.body.destroy();
    }
  }
}
