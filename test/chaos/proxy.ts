// A loopback TCP proxy between a resizer and the API server that the chaos test controls. It
// forwards bytes untouched (TLS passes through end to end), and can
//   cut()        reset every open connection at once (watch streams and requests in flight), and
//   blackhole()  stop delivering anything, both ways, on old and new connections: bytes stay in
//                the kernel's buffers and new connections are accepted but not forwarded, the way
//                a network partition looks to both ends; restore() delivers what waited and
//                connects what was accepted, like a network that comes back.
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface ProxyStats {
  accepted: number;
  cut: number;
}

interface Pair {
  client: Socket;
  upstream?: Socket;
}

export class ControlledProxy {
  private readonly pairs = new Set<Pair>();
  private holding = false;
  private readonly held: Pair[] = [];
  readonly stats: ProxyStats = { accepted: 0, cut: 0 };

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(target: { host: string; port: number }): Promise<ControlledProxy> {
    if (!['127.0.0.1', 'localhost', '::1'].includes(target.host)) throw new Error(`the proxy only forwards to loopback, not ${target.host}`);
    let proxy: ControlledProxy | undefined;
    const server = createServer({ pauseOnConnect: true }, (client) => proxy!.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('proxy has no address');
    proxy = new ControlledProxy(server, address.port, target);
    return proxy;
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  get openConnections(): number {
    return this.pairs.size;
  }

  /** Resets every open connection (RST to both ends). */
  cut(): number {
    const n = this.pairs.size;
    for (const pair of [...this.pairs]) this.drop(pair, true);
    this.held.length = 0;
    this.stats.cut += n;
    return n;
  }

  /** Stops delivering bytes both ways, and holds new connections unconnected. */
  blackhole(): void {
    this.holding = true;
    for (const pair of this.pairs) {
      pair.client.pause();
      pair.upstream?.pause();
    }
  }

  /** Delivers what waited and connects the connections accepted meanwhile. */
  restore(): void {
    this.holding = false;
    for (const pair of this.pairs) {
      if (pair.upstream) {
        pair.client.resume();
        pair.upstream.resume();
      }
    }
    for (const pair of this.held.splice(0)) this.connectUpstream(pair);
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.stats.accepted++;
    const pair: Pair = { client };
    this.pairs.add(pair);
    client.on('error', () => this.drop(pair, false));
    client.on('close', () => this.drop(pair, false));
    if (this.holding) this.held.push(pair);
    else this.connectUpstream(pair);
  }

  private connectUpstream(pair: Pair): void {
    if (!this.pairs.has(pair)) return;
    const upstream = connect({ host: this.target.host, port: this.target.port });
    pair.upstream = upstream;
    upstream.on('error', () => this.drop(pair, false));
    upstream.on('close', () => this.drop(pair, false));
    // Manual forwarding rather than pipe(): pipe() would resume a paused source on 'drain', and
    // blackhole() relies on pause() holding.
    pair.client.on('data', (chunk: Buffer) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => pair.client.write(chunk));
    pair.client.on('end', () => upstream.end());
    upstream.on('end', () => pair.client.end());
    if (this.holding) upstream.pause();
    else pair.client.resume();
  }

  private drop(pair: Pair, reset: boolean): void {
    if (!this.pairs.delete(pair)) return;
    for (const s of [pair.client, pair.upstream]) {
      if (!s) continue;
      if (reset) s.resetAndDestroy();
      else s.destroy();
    }
  }
}
