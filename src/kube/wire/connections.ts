// The connections to the API server: two node:http(s) keep-alive agents for one set of TLS
// material, one for ordinary requests and one for watches. A watch holds its connection for
// minutes; from a shared pool it would take the connection the last request freed, and the next
// request (the first resize's patch, just after the informers' watches open) would pay a new TLS
// handshake. Apart, the request pool stays warm and a watch that ends hands its connection to the
// next watch. Both agents resume one TLS session, so only the first connection has a full handshake.
// Node's own client does HTTP/1.1 and TLS (the CA, SNI and the certificate's name checked unless
// verification is off). Proxies, as proxy.ts decides them: an http:// proxy through Node's built-in
// proxy support (a CONNECT tunnel for an https server, absolute-form requests for an http one); an
// https:// proxy for an https server through a CONNECT request of our own, because Node's built-in
// support verifies an https proxy only against the process's default CAs, where client-go uses the
// kubeconfig's (docs/architecture.md, "The API server's connections").
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { SecureContext } from 'node:tls';

/** TLS for an https server (absent for http): one secure context for every connection. */
export interface ServerTls {
  readonly secureContext: SecureContext;
  readonly rejectUnauthorized: boolean;
  /** SNI and the name checked against the certificate (tls-server-name); else the URL's host name unless it is an IP. */
  readonly servername?: string;
}

export interface ConnectionOptions {
  readonly server: URL;
  readonly tls: ServerTls | undefined;
  /** From proxy.ts (http: or https:): undefined to connect directly. */
  readonly proxy: URL | undefined;
  /** How a direct connection resolves the server's host name (default: the system's, as net.connect). */
  readonly lookup?: LookupFunction;
}

/**
 * Idle keep-alive connections are closed after client-go's idle timeout (Go's IdleConnTimeout), so a
 * connection the server has long forgotten is not the one a request finds. The timer runs only
 * while a connection waits in the pool (keptIdle, inUse): the agents' own `timeout` option would
 * keep it on connections in use too, re-armed at every read and write, for no effect (an in-use
 * socket's timeout ends nothing; requests have their own deadlines and watches a watchdog).
 */
export const IDLE_TIMEOUT_MS = 90_000;
/** TCP keep-alive probes after 30 s of silence, as client-go's dialer sets them. */
const TCP_KEEPALIVE_MS = 30_000;
/**
 * Ordinary requests share at most this many connections (more wait for one): as many as client-go
 * keeps idle per host. The resizer's workers and event writes stay well below it.
 */
const MAX_REQUEST_CONNECTIONS = 25;

/** The latest TLS session either agent received, offered by both when they open a connection. */
interface SessionSlot {
  session: Buffer | undefined;
}

export class ApiConnections {
  readonly requests: http.Agent;
  readonly watches: http.Agent;

  constructor(options: ConnectionOptions) {
    const sessions: SessionSlot = { session: undefined };
    this.requests = agent(options, sessions, MAX_REQUEST_CONNECTIONS);
    // Every open watch holds a connection: no limit (the informers bound how many there are).
    this.watches = agent(options, sessions, Infinity);
  }

  /**
   * New TLS material: requests in flight finish on their connections, which then close. Watches
   * are cut (the informers watch again) when the client certificate changed, as client-go closes
   * every connection then; a new CA alone leaves them open, as client-go closes only idle
   * connections then: they were verified when made, and each ends in its own time.
   */
  retire(options: { keepWatches?: boolean } = {}): void {
    // A connection freed from now on is closed instead of kept (agent.maxFreeSockets is public).
    this.requests.maxFreeSockets = 0;
    destroyFree(this.requests);
    if (options.keepWatches) {
      this.watches.maxFreeSockets = 0;
      destroyFree(this.watches);
    } else {
      this.watches.destroy();
    }
  }

  /** Closes every connection now, also those in flight (their requests fail). */
  destroy(): void {
    this.requests.destroy();
    this.watches.destroy();
  }
}

function destroyFree(agent: http.Agent): void {
  for (const sockets of Object.values(agent.freeSockets)) {
    for (const socket of sockets ?? []) socket.destroy();
  }
}

function agent(options: ConnectionOptions, sessions: SessionSlot, maxSockets: number): http.Agent {
  const { server, tls, proxy } = options;
  const common: http.AgentOptions = {
    keepAlive: true,
    keepAliveMsecs: TCP_KEEPALIVE_MS,
    maxSockets,
    maxFreeSockets: maxSockets === Infinity ? 256 : maxSockets,
    scheduling: 'lifo',
    ...(options.lookup && proxy === undefined ? { lookup: options.lookup } : {}),
  };
  if (server.protocol === 'http:') {
    // An http server through a proxy: absolute-form requests to it, Node's built-in support (an
    // https proxy is verified against the process's default CAs: an http server's kubeconfig has no CA).
    return new OneServerHttpAgent({ ...common, ...(proxy ? { proxyEnv: { HTTP_PROXY: proxy.href } } : {}) });
  }
  const tlsOptions: https.AgentOptions = {
    secureContext: tls?.secureContext,
    rejectUnauthorized: tls?.rejectUnauthorized ?? true,
    ...(tls?.servername ? { servername: tls.servername } : {}),
  };
  if (proxy?.protocol === 'https:') return new HttpsProxyTunnelAgent({ ...common, ...tlsOptions }, sessions, proxy, tls);
  return new SessionSharingAgent({ ...common, ...tlsOptions, ...(proxy ? { proxyEnv: { HTTPS_PROXY: proxy.href } } : {}) }, sessions);
}

/**
 * The pool key of every connection of an agent (agent.getName): each of our agents reaches one
 * server with one TLS configuration, so all its connections are interchangeable. Node's own key
 * joins the host, port and a dozen TLS options into a new string at every request.
 */
const POOL_KEY = 'api-server';

/** A connection the pool keeps (Node's keepSocketAlive answers whether it does; its types say void) waits with the idle timer. */
function keptIdle(kept: unknown, socket: Duplex): boolean {
  if (!kept) return false;
  (socket as Socket).setTimeout(IDLE_TIMEOUT_MS);
  return true;
}

/** A pooled connection taken for a request: no timer while in use. */
function inUse(socket: Duplex): void {
  (socket as Socket).setTimeout(0);
}

class OneServerHttpAgent extends http.Agent {
  override getName(): string {
    return POOL_KEY;
  }

  override keepSocketAlive(socket: Duplex): boolean {
    return keptIdle(super.keepSocketAlive(socket), socket);
  }

  override reuseSocket(socket: Duplex, request: http.ClientRequest): void {
    inUse(socket);
    super.reuseSocket(socket, request);
  }
}

/** How an agent's createConnection reports a connection made later (node passes no socket with an error). */
type ConnectionCallback = (err: Error | null, socket: Duplex) => void;

/**
 * An https agent whose connections offer, and keep, the TLS session both agents share. (Through
 * Node's built-in proxy support the tunnelled connection is made inside node:https and its new
 * sessions are not seen here: each such connection has a full handshake.)
 */
class SessionSharingAgent extends https.Agent {
  constructor(
    options: https.AgentOptions,
    protected readonly sessions: SessionSlot,
  ) {
    super(options);
  }

  override getName(): string {
    return POOL_KEY;
  }

  override keepSocketAlive(socket: Duplex): boolean {
    return keptIdle(super.keepSocketAlive(socket), socket);
  }

  override reuseSocket(socket: Duplex, request: http.ClientRequest): void {
    inUse(socket);
    super.reuseSocket(socket, request);
  }

  override createConnection(options: https.RequestOptions, callback?: ConnectionCallback): Duplex | undefined {
    return this.connectTls(options, callback);
  }

  /** A TLS connection (over `options.socket` when given) that resumes and records the shared session. */
  protected connectTls(options: https.RequestOptions & { socket?: Socket }, callback?: ConnectionCallback): Duplex | undefined {
    const offered = this.sessions.session;
    const socket = super.createConnection(offered === undefined ? options : ({ ...options, session: offered } as https.RequestOptions), callback) ?? undefined;
    socket?.on('session', (session: Buffer) => {
      this.sessions.session = session;
    });
    return socket;
  }
}

/**
 * An https server through an https proxy: a CONNECT request to the proxy over TLS verified with the
 * kubeconfig's CA and verification setting (client-go's one TLS configuration serves both; the
 * proxy's own name is checked, and an IP address gets no SNI), then TLS to the server inside the
 * tunnel. Basic credentials come from the proxy URL; a refusal fails the request naming the proxy
 * without its password.
 */
class HttpsProxyTunnelAgent extends SessionSharingAgent {
  private readonly proxyHeaders: Record<string, string>;
  private readonly shownProxy: string;

  constructor(
    options: https.AgentOptions,
    sessions: SessionSlot,
    private readonly proxy: URL,
    private readonly tls: ServerTls | undefined,
  ) {
    super(options, sessions);
    this.proxyHeaders =
      proxy.username !== '' || proxy.password !== ''
        ? { 'proxy-authorization': `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}` }
        : {};
    this.shownProxy = `${proxy.protocol}//${proxy.host}`;
  }

  override createConnection(options: https.RequestOptions, callback?: ConnectionCallback): Duplex | undefined {
    const host = options.host ?? 'localhost';
    const target = `${isIP(host) === 6 ? `[${host}]` : host}:${options.port}`;
    const proxyHost = this.proxy.hostname.startsWith('[') ? this.proxy.hostname.slice(1, -1) : this.proxy.hostname;
    const connect = https.request({
      host: proxyHost,
      port: this.proxy.port || 443,
      method: 'CONNECT',
      path: target,
      headers: { host: target, ...this.proxyHeaders },
      agent: false,
      ...(this.tls ? { secureContext: this.tls.secureContext, rejectUnauthorized: this.tls.rejectUnauthorized } : {}),
      ...(isIP(proxyHost) === 0 ? { servername: proxyHost } : {}),
      timeout: typeof options.timeout === 'number' ? options.timeout : IDLE_TIMEOUT_MS,
    });
    let settled = false;
    const done = (err: Error | null, socket?: Duplex) => {
      if (settled) return;
      settled = true;
      callback?.(err, socket as Duplex);
    };
    connect.once('connect', (res: http.IncomingMessage, tunnel: Socket) => {
      // The tunnel now belongs to the connection (and the agent's idle timeout), not to the CONNECT.
      connect.removeAllListeners('timeout');
      tunnel.setTimeout(0);
      if (res.statusCode !== 200) {
        tunnel.destroy();
        done(new Error(`Failed to establish tunnel to ${target} via ${this.shownProxy}: ${res.statusCode} ${res.statusMessage ?? ''}`.trimEnd()));
        return;
      }
      const socket = this.connectTls({ ...options, socket: tunnel });
      if (socket === undefined) done(new Error(`no TLS connection over the tunnel to ${target}`));
      else done(null, socket);
    });
    connect.once('timeout', () => connect.destroy(new Error(`Connection to establish proxy tunnel to ${target} via ${this.shownProxy} timed out`)));
    connect.once('error', (err) => done(err));
    connect.end();
    return undefined;
  }
}
