// A frame-aware proxy between a CSI client and a real gRPC server, both on temp unix sockets, that
// lets a test make the driver's side of the connection misbehave at frame boundaries: inject bytes
// after a response, close the socket, answer requests itself, or change what the server sends.
// Bytes are forwarded untouched unless a hook says otherwise.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Flag, FrameReader, FrameType, type Frame } from './h2-frames.js';

export interface ProxiedConnection {
  readonly id: number;
  /** The client's socket: writes reach the client as if the server sent them. */
  readonly client: Socket;
  /** Ends both sides at once. */
  destroy(): void;
}

/**
 * What to do with a frame. 'forward' passes it on; a Buffer (or several) is sent instead of it;
 * 'drop' swallows it.
 */
export type FrameDecision = 'forward' | 'drop' | Buffer | Buffer[];
export type FrameHook = (frame: Frame, connection: ProxiedConnection) => FrameDecision;

export class H2FaultProxy {
  readonly socketPath: string;
  /** Connections accepted so far. */
  accepted = 0;
  /** Frames from the server, before they reach the client. */
  onServerFrame: FrameHook | undefined;
  /** Frames from the client (after its preface), before they reach the server. */
  onClientFrame: FrameHook | undefined;
  private readonly open = new Set<ProxiedConnection>();
  private readonly afterResponse: Array<(connection: ProxiedConnection) => Buffer | void> = [];

  private constructor(
    private readonly server: Server,
    private readonly dir: string,
    private readonly upstreamPath: string,
  ) {
    this.socketPath = join(dir, 'proxy.sock');
  }

  static async start(upstreamPath: string): Promise<H2FaultProxy> {
    const dir = mkdtempSync(join(tmpdir(), 'rz-px-'));
    let proxy: H2FaultProxy | undefined;
    const server = createServer((client) => proxy!.accept(client));
    proxy = new H2FaultProxy(server, dir, upstreamPath);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(proxy!.socketPath, () => resolve());
    });
    return proxy;
  }

  get address(): string {
    return `unix://${this.socketPath}`;
  }

  /**
   * Runs `action` on the connection when the next complete response (a HEADERS frame with
   * END_STREAM from the server) is passed to the client; bytes it returns go out in the same
   * write, right behind that frame.
   */
  afterNextResponse(action: (connection: ProxiedConnection) => Buffer | void): void {
    this.afterResponse.push(action);
  }

  /** Ends every open connection (both sides). */
  destroyAll(): void {
    for (const c of this.open) c.destroy();
  }

  async close(): Promise<void> {
    this.destroyAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private accept(client: Socket): void {
    const upstream = connect(this.upstreamPath);
    const connection: ProxiedConnection = {
      id: ++this.accepted,
      client,
      destroy: () => {
        client.destroy();
        upstream.destroy();
      },
    };
    this.open.add(connection);
    const fromClient = new FrameReader(true);
    const fromServer = new FrameReader(false);
    const send = (to: Socket, decision: FrameDecision, frame: Frame) => {
      if (to.destroyed) return;
      if (decision === 'forward') to.write(frame.raw);
      else if (decision === 'drop') return;
      else for (const b of Array.isArray(decision) ? decision : [decision]) to.write(b);
    };
    client.on('data', (chunk: Buffer) => {
      const { preface, frames } = fromClient.push(chunk);
      if (preface.length > 0) upstream.write(preface);
      for (const frame of frames) send(upstream, this.onClientFrame?.(frame, connection) ?? 'forward', frame);
    });
    upstream.on('data', (chunk: Buffer) => {
      for (const frame of fromServer.push(chunk).frames) {
        const isResponseEnd = frame.type === FrameType.HEADERS && (frame.flags & Flag.END_STREAM) !== 0;
        const action = isResponseEnd ? this.afterResponse.shift() : undefined;
        if (!action) {
          send(client, this.onServerFrame?.(frame, connection) ?? 'forward', frame);
          continue;
        }
        const extra = action(connection);
        if (!client.destroyed) client.write(extra ? Buffer.concat([frame.raw, extra]) : frame.raw);
      }
    });
    const end = () => {
      this.open.delete(connection);
      connection.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', () => {});
    upstream.on('error', () => {});
  }
}
