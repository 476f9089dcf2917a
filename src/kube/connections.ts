// The connections to the API server: two undici dispatchers for one set of TLS material, one for
// ordinary requests and one for watches. A watch holds its connection for minutes; from a shared
// pool it would take the connection the last request freed, and the next request (the first
// resize's patch, just after the informers' watches open) would pay a new TLS handshake. Apart, the
// request pool stays warm and a watch that ends hands its connection to the next watch.
// undici does the HTTP/1.1, keep-alive pooling, TLS (through node:tls: the CA, SNI and the
// certificate's name checked unless verification is off) and the proxies: an HTTP CONNECT tunnel
// (or, for an http:// server, absolute-form requests) through an http or https proxy with
// ProxyAgent, a SOCKS5 tunnel with Socks5ProxyAgent. Which proxy is proxy.ts's decision.
import { isIP, type LookupFunction } from 'node:net';
import type { SecureContext } from 'node:tls';
import { buildConnector, Pool, ProxyAgent, Socks5ProxyAgent, type Dispatcher } from 'undici';

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
  /** From proxy.ts: undefined to connect directly. */
  readonly proxy: URL | undefined;
  /** How a direct connection resolves the server's host name (default: the system's, as net.connect). */
  readonly lookup?: LookupFunction;
}

// HTTP/1.1 only (undici offers HTTP/2 by ALPN unless told not to, and kube-apiserver takes it):
// our measurements found HTTP/2 to the API server no cheaper for the client, and a watch keeps its
// own connection only over HTTP/1.1 (docs/architecture.md, "The API server's connections").

/**
 * Idle keep-alive connections are closed after client-go's idle timeout (Go's IdleConnTimeout), so a
 * connection the server has long forgotten is not the one a request finds.
 */
const IDLE_TIMEOUT_MS = 90_000;

export class ApiConnections {
  readonly requests: Dispatcher;
  readonly watches: Dispatcher;

  constructor(options: ConnectionOptions) {
    // One connector for both pools of a direct connection: its TLS session cache makes every
    // connection after the first resume the session instead of a full handshake.
    const connect =
      options.proxy === undefined
        ? buildConnector({ ...tlsOptions(options.tls), allowH2: false, ...(options.lookup ? { lookup: options.lookup } : {}) } as buildConnector.BuildOptions)
        : undefined;
    this.requests = dispatcher(options, connect);
    this.watches = dispatcher(options, connect);
  }

  /** New credentials: requests in flight finish on their connections, which then close; watches are cut (the informers watch again). */
  retire(): void {
    this.requests.close().catch(() => {});
    this.watches.destroy().catch(() => {});
  }

  /** Closes every connection now, also those in flight (their requests fail). */
  destroy(): void {
    this.requests.destroy().catch(() => {});
    this.watches.destroy().catch(() => {});
  }
}

/**
 * The connection to an https proxy, with no SNI when the proxy is an IP address: ProxyAgent would
 * send the address as the server name, which node:tls refuses (the certificate is then checked
 * against the address, as for an API server at an IP).
 */
function withoutIpServername(origin: URL, options: object): Dispatcher {
  const { connect } = options as { connect: buildConnector.connector };
  return new Pool(origin, {
    ...options,
    connect: (opts, callback) => {
      const { servername, ...rest } = opts;
      connect(servername !== undefined && servername !== null && isIP(servername) !== 0 ? rest : opts, callback);
    },
  });
}

function tlsOptions(tls: ServerTls | undefined): Record<string, unknown> | undefined {
  if (tls === undefined) return undefined;
  return { secureContext: tls.secureContext, rejectUnauthorized: tls.rejectUnauthorized, ...(tls.servername ? { servername: tls.servername } : {}) };
}

function dispatcher(options: ConnectionOptions, connect: buildConnector.connector | undefined): Dispatcher {
  const { server, tls, proxy } = options;
  const requestTls = tlsOptions(tls);
  if (proxy === undefined || connect !== undefined) {
    return new Pool(server.origin, { ...(connect ? { connect } : {}), allowH2: false, keepAliveTimeout: IDLE_TIMEOUT_MS });
  }
  if (proxy.protocol === 'socks5:' || proxy.protocol === 'socks5h:') {
    // undici resolves the server's name at the proxy for both (Go's socks5 does too).
    const url = new URL(proxy.href.replace(/^socks5h:/, 'socks5:'));
    return new Socks5ProxyAgent(url, { ...(requestTls ? { requestTls } : {}) });
  }
  // An https proxy is verified with the same CA and verification setting as the API server, as
  // client-go's transport does (its TLS configuration serves both); its name is the proxy's.
  const proxyTls =
    proxy.protocol === 'https:' && tls !== undefined ? { secureContext: tls.secureContext, rejectUnauthorized: tls.rejectUnauthorized } : undefined;
  return new ProxyAgent({
    uri: proxy.href,
    ...(requestTls ? { requestTls } : {}),
    ...(proxyTls ? { proxyTls, clientFactory: withoutIpServername } : {}),
    allowH2: false,
    keepAliveTimeout: IDLE_TIMEOUT_MS,
  });
}
