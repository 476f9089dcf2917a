// A gRPC server written on node:http2 for tests that need a driver to break the protocol in ways
// a gRPC library will not: refuse streams, send GOAWAY, oversized or extra messages, data after
// the status, or never answer. Probe and GetPluginInfo are answered like a healthy driver (so a
// CsiClient can start against it); every other call goes to the test's handler.
import http2 from 'node:http2';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create, toBinary } from '@bufbuild/protobuf';
import { GetPluginInfoResponseSchema, ProbeResponseSchema } from '../../src/csi/proto/gen/csi_pb.js';
import { grpcFrame } from './h2-frames.js';

export interface GrpcH2Call {
  readonly path: string;
  /** The request's headers (grpc-timeout among them). */
  readonly headers: http2.IncomingHttpHeaders;
  readonly stream: http2.ServerHttp2Stream;
  readonly session: http2.ServerHttp2Session;
  /** The request's message bytes, without the 5-byte gRPC prefix. */
  readonly request: Buffer;
  /** How many calls to this path arrived before this one (0 for the first). */
  readonly index: number;
}

export type GrpcH2Handler = (call: GrpcH2Call) => void;

/** Answers with one message and status OK (headers, DATA, trailers). */
export function answer(stream: http2.ServerHttp2Stream, message: Uint8Array): void {
  if (stream.destroyed) return;
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(grpcFrame(message));
}

/** Answers with a status only (trailers-only response). */
export function fail(stream: http2.ServerHttp2Stream, code: number, message: string): void {
  if (stream.destroyed) return;
  stream.respond(
    { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(code), 'grpc-message': encodeURIComponent(message) },
    { endStream: true },
  );
}

export class GrpcH2Server {
  readonly socketPath: string;
  /** Every stream opened, by path, in order of arrival (refused ones included). */
  readonly streams = new Map<string, number>();
  readonly sessions = new Set<http2.ServerHttp2Session>();
  private server: http2.Http2Server | undefined;

  private constructor(
    private readonly dir: string,
    private readonly handler: GrpcH2Handler,
    readonly driverName: string,
  ) {
    this.socketPath = join(dir, 'csi.sock');
  }

  static async start(handler: GrpcH2Handler, driverName = 'h2.csi.test'): Promise<GrpcH2Server> {
    const server = new GrpcH2Server(mkdtempSync(join(tmpdir(), 'rz-h2-')), handler, driverName);
    await server.listen();
    return server;
  }

  get address(): string {
    return `unix://${this.socketPath}`;
  }

  /** Calls that reached `path`. */
  count(path: string): number {
    return this.streams.get(path) ?? 0;
  }

  /** Ends every session at once (the driver process dies); the socket stays free for listen(). */
  async kill(): Promise<void> {
    for (const session of this.sessions) session.destroy();
    this.sessions.clear();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async listen(): Promise<void> {
    rmSync(this.socketPath, { force: true });
    const server = http2.createServer();
    server.on('session', (session) => {
      this.sessions.add(session);
      session.on('close', () => this.sessions.delete(session));
      session.on('error', () => {});
    });
    server.on('stream', (anyStream, headers) => {
      const stream = anyStream as http2.ServerHttp2Stream;
      stream.on('error', () => {});
      const path = String(headers[':path']);
      const index = this.streams.get(path) ?? 0;
      this.streams.set(path, index + 1);
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const body = Buffer.concat(chunks);
        const call: GrpcH2Call = { path, headers, stream, session: stream.session as http2.ServerHttp2Session, request: body.subarray(5), index };
        if (path === '/csi.v1.Identity/Probe') answer(stream, toBinary(ProbeResponseSchema, create(ProbeResponseSchema)));
        else if (path === '/csi.v1.Identity/GetPluginInfo') {
          answer(stream, toBinary(GetPluginInfoResponseSchema, create(GetPluginInfoResponseSchema, { name: this.driverName })));
        } else this.handler(call);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.socketPath, () => resolve());
    });
    this.server = server;
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
