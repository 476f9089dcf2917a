// A small SOCKS5 proxy on loopback for the proxy tests (RFC 1928 CONNECT, with RFC 1929
// username/password when credentials are given). Like the HTTP proxy fake it is the only resolver
// of the names it is given and reaches nothing else (reply 4, host unreachable); it records the
// targets asked for and is bounded (at most 64 connections; close() ends them all).
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface Socks5ProxyOptions {
  readonly hosts: Readonly<Record<string, string>>;
  readonly credentials?: { readonly user: string; readonly password: string };
}

const MAX_CONNECTIONS = 64;

export class Socks5Proxy {
  /** host:port of every CONNECT asked for, as the client named it. */
  readonly targets: string[] = [];
  /** user:password pairs the client authenticated with. */
  readonly logins: string[] = [];
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    private readonly options: Socks5ProxyOptions,
  ) {}

  static async start(options: Socks5ProxyOptions): Promise<Socks5Proxy> {
    const server = net.createServer();
    server.maxConnections = MAX_CONNECTIONS;
    const proxy = new Socks5Proxy(server, options);
    server.on('connection', (socket) => proxy.serve(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  url(credentials?: { user: string; password: string }): string {
    const { port } = this.server.address() as AddressInfo;
    const auth = credentials ? `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@` : '';
    return `socks5://${auth}127.0.0.1:${port}`;
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

  private serve(client: net.Socket): void {
    this.track(client);
    let buffered = Buffer.alloc(0);
    let stage: 'greeting' | 'login' | 'request' | 'piping' = 'greeting';
    const onData = (data: Buffer) => {
      buffered = Buffer.concat([buffered, data]);
      for (;;) {
        const used = this.step(client, stage, buffered, (next) => {
          stage = next;
        });
        if (used === 0) return;
        buffered = buffered.subarray(used);
        if (stage === 'piping') {
          client.removeListener('data', onData);
          return;
        }
      }
    };
    client.on('data', onData);
  }

  /** Handles one message of the handshake if it is complete; returns the bytes it used (0: wait for more). */
  private step(client: net.Socket, stage: string, buf: Buffer, advance: (next: 'login' | 'request' | 'piping') => void): number {
    const creds = this.options.credentials;
    if (stage === 'greeting') {
      if (buf.length < 2 || buf.length < 2 + buf[1]!) return 0;
      const methods = [...buf.subarray(2, 2 + buf[1]!)];
      const method = creds ? 2 : 0;
      if (buf[0] !== 5 || !methods.includes(method)) {
        client.end(Buffer.from([5, 0xff]));
        return buf.length;
      }
      client.write(Buffer.from([5, method]));
      advance(creds ? 'login' : 'request');
      return 2 + buf[1]!;
    }
    if (stage === 'login') {
      if (buf.length < 2) return 0;
      const ulen = buf[1]!;
      if (buf.length < 3 + ulen) return 0;
      const plen = buf[2 + ulen]!;
      if (buf.length < 3 + ulen + plen) return 0;
      const user = buf.toString('utf8', 2, 2 + ulen);
      const password = buf.toString('utf8', 3 + ulen, 3 + ulen + plen);
      this.logins.push(`${user}:${password}`);
      const ok = creds !== undefined && user === creds.user && password === creds.password;
      client.write(Buffer.from([1, ok ? 0 : 1]));
      if (!ok) client.end();
      else advance('request');
      return 3 + ulen + plen;
    }
    // request: VER CMD RSV ATYP DST.ADDR DST.PORT
    if (buf.length < 5) return 0;
    const atyp = buf[3]!;
    let host: string;
    let end: number;
    if (atyp === 1) {
      end = 4 + 4;
      if (buf.length < end + 2) return 0;
      host = [...buf.subarray(4, 8)].join('.');
    } else if (atyp === 3) {
      end = 5 + buf[4]!;
      if (buf.length < end + 2) return 0;
      host = buf.toString('utf8', 5, end);
    } else if (atyp === 4) {
      end = 4 + 16;
      if (buf.length < end + 2) return 0;
      host = Array.from({ length: 8 }, (_, i) => buf.readUInt16BE(4 + 2 * i).toString(16)).join(':');
    } else {
      client.end(Buffer.from([5, 8, 0, 1, 0, 0, 0, 0, 0, 0]));
      return buf.length;
    }
    const port = buf.readUInt16BE(end);
    this.targets.push(`${host}:${port}`);
    const address = host in this.options.hosts ? this.options.hosts[host]! : host === '127.0.0.1' ? host : undefined;
    if (buf[1] !== 1 || address === undefined) {
      client.end(Buffer.from([5, address === undefined ? 4 : 7, 0, 1, 0, 0, 0, 0, 0, 0]));
      return buf.length;
    }
    const rest = buf.subarray(end + 2);
    const upstream = net.connect({ host: address, port }, () => {
      client.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 0]));
      if (rest.length > 0) upstream.write(rest);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    this.track(upstream);
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
    advance('piping');
    return buf.length;
  }
}
