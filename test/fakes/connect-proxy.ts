// A small HTTP proxy on loopback for the proxy tests: CONNECT tunnels (what a client uses for an
// https server) and absolute-form requests (for an http server), over plain HTTP or TLS. It is the
// only resolver of the names it is given (e.g. kube-api.proxy-only.test → 127.0.0.1) and reaches
// nothing else: a target not in its table gets 502. It can demand Basic proxy credentials (407),
// records what it was asked, and is bounded (at most 64 connections; close() ends them all).
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface ConnectProxyOptions {
  /** Host names the proxy resolves, to loopback addresses. */
  readonly hosts: Readonly<Record<string, string>>;
  /** Basic credentials the proxy demands (407 without them). */
  readonly credentials?: { readonly user: string; readonly password: string };
  /** Serve the proxy itself over TLS (an https:// proxy URL). */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
}

export interface ProxiedRequest {
  /** CONNECT for a tunnel, else the forwarded request's method. */
  readonly method: string;
  /** host:port of a tunnel, or the absolute URL of a forwarded request. */
  readonly target: string;
  readonly proxyAuthorization: string | undefined;
}

const MAX_CONNECTIONS = 64;

export class ConnectProxy {
  readonly requests: ProxiedRequest[] = [];
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: http.Server,
    private readonly options: ConnectProxyOptions,
  ) {}

  static async start(options: ConnectProxyOptions): Promise<ConnectProxy> {
    const server = options.tls ? https.createServer({ cert: options.tls.cert, key: options.tls.key }) : http.createServer();
    server.maxConnections = MAX_CONNECTIONS;
    const proxy = new ConnectProxy(server, options);
    server.on('connection', (socket: net.Socket) => proxy.track(socket));
    server.on('secureConnection', (socket: net.Socket) => proxy.track(socket));
    server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => proxy.tunnel(req, socket, head));
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => proxy.forward(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** The proxy's URL, with credentials when given (e.g. http://user:pw@127.0.0.1:port). */
  url(credentials?: { user: string; password: string }): string {
    const { port } = this.server.address() as AddressInfo;
    const auth = credentials ? `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@` : '';
    return `${this.options.tls ? 'https' : 'http'}://${auth}127.0.0.1:${port}`;
  }

  /** Tunnels opened (CONNECT requests answered 200). */
  get tunnels(): number {
    return this.requests.filter((r) => r.method === 'CONNECT').length;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => {});
  }

  private authorized(req: http.IncomingMessage): boolean {
    const creds = this.options.credentials;
    if (!creds) return true;
    return req.headers['proxy-authorization'] === `Basic ${Buffer.from(`${creds.user}:${creds.password}`).toString('base64')}`;
  }

  /** The loopback address for host, if the proxy knows it (its table, or a loopback literal). */
  private resolve(host: string): string | undefined {
    const bare = host.startsWith('[') ? host.slice(1, -1) : host;
    if (bare in this.options.hosts) return this.options.hosts[bare];
    return bare === '127.0.0.1' || bare === '::1' ? bare : undefined;
  }

  private tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer): void {
    this.track(client);
    const target = req.url ?? '';
    this.requests.push({ method: 'CONNECT', target, proxyAuthorization: req.headers['proxy-authorization'] });
    if (!this.authorized(req)) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const colon = target.lastIndexOf(':');
    const address = this.resolve(target.slice(0, colon));
    const port = Number(target.slice(colon + 1));
    if (address === undefined || !Number.isInteger(port)) {
      client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const upstream = net.connect({ host: address, port }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    this.track(upstream);
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    const target = req.url ?? '';
    this.requests.push({ method: req.method ?? '', target, proxyAuthorization: req.headers['proxy-authorization'] });
    if (!this.authorized(req)) {
      res.writeHead(407, { 'Proxy-Authenticate': 'Basic realm="test"' }).end();
      return;
    }
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      res.writeHead(400).end();
      return;
    }
    const address = this.resolve(url.hostname);
    if (address === undefined) {
      res.writeHead(502).end();
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = http.request({ host: address, port: url.port || 80, method: req.method, path: url.pathname + url.search, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  }
}
