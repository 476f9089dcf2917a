// A minimal gRPC client for unary calls over one HTTP/2 connection to a unix socket: the only
// shape of gRPC a CSI sidecar needs. Written for issue 15 in place of @grpc/grpc-js, whose
// general machinery (resolvers, load balancing, channelz, retries, compression) the sidecar
// pays for and never uses. Measured on this machine (Node 26.12.1, 2 cores shared with other
// work, so each figure is a median of alternating runs):
//   - client CPU per call against the grpc-go mock driver (bench/grpc-probe.ts, 3 x 3000 calls at
//     concurrency 10): grpc-js 174.8 µs vs bare node:http2 72.1 µs at load 2; at load 11,
//     grpc-js 310.6, bare 77.0, this client with codec.ts 141.9 µs;
//   - a fresh process starting the CSI client and making 5 calls (bench/grpc-startup-probe.ts,
//     both trees bundled like the resizer): with grpc-js + protobufjs 372 ms CPU, 68.9 MiB peak
//     RSS; with this client and codec.ts 259 ms, 61.1 MiB;
//   - bench/run.ts burst-high (N 300) + startup, ours/upstream, before -> after, two pairs of runs
//     on a loaded machine (the ratios move with noise as much as with this change):
//     burst CPU 1.33 -> 1.38 and 1.31 -> 1.24; peak RSS 1.56 -> 1.42 and 1.49 -> 1.42 (ours
//     104 -> 95.8 and 99.5 -> 94.8 MiB); start-up CPU 2.49 -> 2.62 and 2.50 -> 2.56 (ours 0.43 ->
//     0.38 and 0.55 -> 0.41 cpu-s).
// The HTTP/2 underneath is our own too (./http2/: frames, HPACK, the client connection), no
// longer node:http2: loading node:http2 pulled in its core, compat and util modules and assert
// (with assertion_error, colors ...), compiled at every start, and each Http2Session and stream
// goes through nghttp2 and Node's stream machinery. A unary call needs a small part of HTTP/2
// (see http2/connection.ts), written in ~1050 lines. Measured against b1be3ba (node:http2):
//   - bench/grpc-probe.ts with BEFORE_ROOT (arms alternating, median of 5 rounds): 3000 calls at
//     concurrency 10, load 4.1: 65.4 -> 35.0 µs per call (bare node:http2 55.6); 2000 calls at
//     concurrency 1, load 3.5: 145.5 -> 127.9 µs;
//   - bench/grpc-startup-probe.ts (fresh process, CSI start + 5 calls, 12 alternating runs, load
//     5.1): 143 -> 121 ms to the last answer, CPU 182 -> 146 ms, peak RSS 59.3 -> 53.3 MiB;
//   - the resizer loads 12 fewer builtins (http2 and its binding, assert and its helpers);
//     see the commit messages for the resizer's start-up (bench/startup-probe.ts).
// Protocol rules: grpc/grpc doc/PROTOCOL-HTTP2.md (see grpc-status.ts for the status mapping).
//
// The channel keeps at most one session. It connects when asked, and after a failed attempt or a
// lost session it tries again every reconnectIntervalMs until closed. A call made while an attempt
// is under way waits for it; with no connection and none coming it fails UNAVAILABLE at once
// (gRPC's default fail-fast). Calls in flight on a session that goes away (socket closed, server
// killed, GOAWAY before the call was processed) fail UNAVAILABLE.
import net from 'node:net';
import type { TimerHandle } from '../base/clock.js';
import { setLongTimeout } from '../base/long-timer.js';
import {
  decodeGrpcMessage,
  GrpcStatus,
  GrpcStatusError,
  grpcStatusOfHttpStatus,
  grpcStatusOfResetCode,
  grpcTimeoutHeader,
  parseGrpcStatus,
} from './grpc-status.js';
import { type ClientStream, Http2ClientConnection, type StreamEnd, type StreamHandler } from './http2/connection.js';
import { errorCodeName } from './http2/frames.js';
import type { HeaderField } from './http2/hpack.js';

export type ChannelState = 'idle' | 'connecting' | 'ready' | 'transientFailure' | 'shutdown';

export interface GrpcChannelOptions {
  socketPath: string;
  /** Wait between connection attempts (gRPC's backoff, fixed: a local socket comes back quickly). */
  reconnectIntervalMs?: number;
  /** An attempt that has not completed the HTTP/2 handshake by then fails. */
  connectAttemptTimeoutMs?: number;
  /** The largest response message accepted (gRPC's default receive limit: 4 MiB). */
  maxReceiveMessageBytes?: number;
  userAgent?: string;
}

export const DEFAULT_MAX_RECEIVE_MESSAGE_BYTES = 4 * 1024 * 1024;
const MESSAGE_HEADER_BYTES = 5;

type StateListener = (state: ChannelState) => void;

interface Session {
  readonly connection: Http2ClientConnection;
  /** No new calls: it is going away (GOAWAY received, or closed). */
  draining: boolean;
  lost: boolean;
  readonly calls: Set<UnaryCall>;
}

export class GrpcChannel {
  private readonly socketPath: string;
  private readonly reconnectIntervalMs: number;
  private readonly connectAttemptTimeoutMs: number;
  private readonly maxReceiveMessageBytes: number;
  private readonly userAgent: string;
  private stateValue: ChannelState = 'idle';
  private readonly listeners = new Set<StateListener>();
  private session: Session | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private lastError = '';
  // Resolved when the attempt under way ends, either way.
  private attempt: Promise<void> | undefined;
  private attemptConnection: Http2ClientConnection | undefined;

  constructor(options: GrpcChannelOptions) {
    this.socketPath = options.socketPath;
    this.reconnectIntervalMs = options.reconnectIntervalMs ?? 1000;
    this.connectAttemptTimeoutMs = options.connectAttemptTimeoutMs ?? 20_000;
    this.maxReceiveMessageBytes = options.maxReceiveMessageBytes ?? DEFAULT_MAX_RECEIVE_MESSAGE_BYTES;
    this.userAgent = options.userAgent ?? 'csi-resizer';
  }

  get state(): ChannelState {
    return this.stateValue;
  }

  /** Why the last attempt or session failed, for messages. */
  get lastFailure(): string {
    return this.lastError;
  }

  onStateChange(listener: StateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts connecting unless connected, connecting or closed. */
  connect(): void {
    if (this.stateValue !== 'idle' && this.stateValue !== 'transientFailure') return;
    if (this.reconnectTimer !== undefined) {
      clearTimeout(this.reconnectTimer);
      this.reconnectTimer = undefined;
    }
    this.startAttempt();
  }

  /** Closes the session; calls in flight end UNAVAILABLE. Idempotent. */
  close(): void {
    if (this.stateValue === 'shutdown') return;
    this.setState('shutdown');
    if (this.reconnectTimer !== undefined) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const session = this.session;
    this.session = undefined;
    if (session) this.loseSession(session, 'Channel closed');
    // An attempt under way ends now (its 'close' wakes whoever waits for it).
    this.attemptConnection?.destroy('Channel closed');
  }

  /**
   * One unary call: sends `message` (an encoded protobuf) to `path` and resolves with the encoded
   * response. Rejects with a GrpcStatusError: the server's status, DEADLINE_EXCEEDED after
   * timeoutMs (any length; the server is told through grpc-timeout), CANCELLED when `signal`
   * aborts, UNAVAILABLE without a connection.
   */
  async unary(path: string, message: Uint8Array, timeoutMs: number, signal: AbortSignal): Promise<Buffer> {
    const started = Date.now();
    if (this.stateValue === 'shutdown') throw new GrpcStatusError(GrpcStatus.UNAVAILABLE, 'Channel closed');
    let session = this.usableSession();
    if (!session) {
      this.connect();
      // A call waiting for the connection keeps the process alive, as one in flight does.
      this.attemptConnection?.ref();
      if (this.attempt) await waitUntil(this.attempt, started + timeoutMs, signal);
      session = this.usableSession();
      if (signal.aborted) throw new GrpcStatusError(GrpcStatus.CANCELLED, 'Cancelled on client');
      if (Date.now() - started >= timeoutMs) throw deadlineExceeded(timeoutMs);
      if (!session) throw new GrpcStatusError(GrpcStatus.UNAVAILABLE, `No connection established. Last error: ${this.lastError || 'none'}`);
    }
    return new UnaryCall(session, this.maxReceiveMessageBytes).run(
      [
        [':method', 'POST'],
        [':scheme', 'http'],
        [':path', path],
        [':authority', 'localhost'],
        ['content-type', 'application/grpc'],
        ['te', 'trailers'],
        ['grpc-timeout', grpcTimeoutHeader(timeoutMs - (Date.now() - started))],
        ['user-agent', this.userAgent],
      ],
      frameMessage(message),
      timeoutMs - (Date.now() - started),
      timeoutMs,
      signal,
    );
  }

  private usableSession(): Session | undefined {
    const session = this.session;
    return this.stateValue === 'ready' && session && !session.draining ? session : undefined;
  }

  private setState(state: ChannelState): void {
    if (this.stateValue === state || this.stateValue === 'shutdown') return;
    this.stateValue = state;
    for (const listener of this.listeners) listener(state);
  }

  private startAttempt(): void {
    this.setState('connecting');
    let settle!: () => void;
    this.attempt = new Promise<void>((resolve) => (settle = resolve));
    const socket = net.connect(this.socketPath);
    // An idle connection keeps no process alive by itself; a call in flight should (ref()).
    socket.unref();
    let established = false;
    const endAttempt = () => {
      clearTimeout(attemptTimer);
      this.attempt = undefined;
      this.attemptConnection = undefined;
      settle();
    };
    const connection: Http2ClientConnection = new Http2ClientConnection(socket, {
      onReady: () => {
        if (this.stateValue === 'shutdown') {
          connection.destroy('Channel closed');
          return;
        }
        established = true;
        // Unreferenced until a call is in flight (a waiting call may have referenced it).
        if (session.calls.size === 0) connection.unref();
        this.session = session;
        this.lastError = '';
        this.setState('ready');
        endAttempt();
      },
      onGoaway: (code, debug) => {
        // Calls the server has taken may still complete; new ones go to a new session.
        session.draining = true;
        if (this.session === session) this.replaceSession(`Server sent GOAWAY (${errorCodeName(code)}${debug ? `: ${debug}` : ''})`);
      },
      onClose: (reason) => {
        if (!established) {
          this.lastError = reason || 'connection closed before the HTTP/2 handshake';
          endAttempt();
          this.retryLater();
          return;
        }
        this.loseSession(session, reason);
        if (this.session === session) this.replaceSession(reason);
      },
    });
    const session: Session = { connection, draining: false, lost: false, calls: new Set() };
    this.attemptConnection = connection;
    const attemptTimer = setTimeout(() => connection.destroy(`no HTTP/2 handshake within ${this.connectAttemptTimeoutMs}ms`), this.connectAttemptTimeoutMs);
    attemptTimer.unref();
  }

  /** The current session is gone or going: try again now, and every interval after. */
  private replaceSession(reason: string): void {
    this.session = undefined;
    this.lastError = reason;
    if (this.stateValue === 'shutdown') return;
    this.setState('transientFailure');
    this.startAttempt();
  }

  private retryLater(): void {
    if (this.stateValue === 'shutdown') return;
    this.setState('transientFailure');
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect();
    }, this.reconnectIntervalMs);
    this.reconnectTimer.unref();
  }

  private loseSession(session: Session, details: string): void {
    session.draining = true;
    if (session.lost) return;
    session.lost = true;
    for (const call of session.calls) call.fail(new GrpcStatusError(GrpcStatus.UNAVAILABLE, details));
    session.calls.clear();
    session.connection.destroy(details);
  }
}

/** The gRPC length-prefixed message: flag 0 (not compressed), 4-byte big-endian length, bytes. */
export function frameMessage(message: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(MESSAGE_HEADER_BYTES + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, MESSAGE_HEADER_BYTES);
  return frame;
}

function deadlineExceeded(timeoutMs: number): GrpcStatusError {
  return new GrpcStatusError(GrpcStatus.DEADLINE_EXCEEDED, `Deadline exceeded after ${timeoutMs}ms`);
}

/** Waits for `promise`, but not past `deadline` (epoch ms) or the signal. */
async function waitUntil(promise: Promise<void>, deadline: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return;
  let timer: TimerHandle | undefined;
  let onAbort: (() => void) | undefined;
  await Promise.race([
    promise,
    new Promise<void>((resolve) => {
      timer = setLongTimeout(resolve, deadline - Date.now());
      onAbort = resolve;
      signal.addEventListener('abort', onAbort, { once: true });
    }),
  ]);
  timer?.cancel();
  if (onAbort) signal.removeEventListener('abort', onAbort);
}

/** One call on one stream: collects the response message and the status, whichever way they come. */
class UnaryCall implements StreamHandler {
  private stream: ClientStream | undefined;
  private settled = false;
  private resolve!: (message: Buffer) => void;
  private reject!: (err: GrpcStatusError) => void;
  private cleanup: () => void = () => {};
  private readonly chunks: Buffer[] = [];
  private receivedBytes = 0;
  private expectedBytes = -1;
  private httpStatus = 0;
  private sawHeaders = false;
  // Until the response headers say otherwise (an HTTP error, another content type): then the
  // body is not made of gRPC messages and is ignored.
  private isGrpcResponse = true;
  private status: { code: GrpcStatus; details: string; metadata: Record<string, string> } | undefined;

  constructor(
    private readonly session: Session,
    private readonly maxReceiveMessageBytes: number,
  ) {}

  run(headers: readonly HeaderField[], frame: Buffer, remainingMs: number, timeoutMs: number, signal: AbortSignal): Promise<Buffer> {
    const result = new Promise<Buffer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    if (signal.aborted) {
      this.fail(new GrpcStatusError(GrpcStatus.CANCELLED, 'Cancelled on client'));
      return result;
    }
    if (remainingMs <= 0) {
      this.fail(deadlineExceeded(timeoutMs));
      return result;
    }
    const onAbort = () => this.cancel(new GrpcStatusError(GrpcStatus.CANCELLED, 'Cancelled on client'));
    signal.addEventListener('abort', onAbort, { once: true });
    // Our own timer for every length: beyond Node's timer limit setLongTimeout waits in steps.
    const deadline = setLongTimeout(() => this.cancel(deadlineExceeded(timeoutMs)), remainingMs);
    this.cleanup = () => {
      signal.removeEventListener('abort', onAbort);
      deadline.cancel();
    };
    this.session.calls.add(this);
    if (this.session.calls.size === 1) this.session.connection.ref();
    try {
      this.stream = this.session.connection.request(headers, frame, this);
    } catch (err) {
      this.fail(new GrpcStatusError(GrpcStatus.INTERNAL, `Cannot start a stream: ${(err as Error).message}`, {}, { cause: err }));
    }
    return result;
  }

  /** Ends the call with `err`, resetting the stream (RST_STREAM CANCEL) if it is still open. */
  cancel(err: GrpcStatusError): void {
    if (this.settled) return;
    this.fail(err);
    this.stream?.cancel();
  }

  fail(err: GrpcStatusError): void {
    if (this.settle()) this.reject(err);
  }

  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.cleanup();
    this.session.calls.delete(this);
    if (this.session.calls.size === 0) this.session.connection.unref();
    return true;
  }

  onHeaders(fields: HeaderField[], endStream: boolean): void {
    if (this.sawHeaders) {
      this.onTrailers(fields);
      return;
    }
    this.sawHeaders = true;
    let contentType = '';
    let hasStatus = false;
    for (const [name, value] of fields) {
      if (name === ':status') this.httpStatus = Number(value);
      else if (name === 'content-type') contentType = value;
      else if (name === 'grpc-status') hasStatus = true;
    }
    this.isGrpcResponse = this.httpStatus === 200 && contentType.startsWith('application/grpc');
    // Trailers-only: the status comes in the headers and nothing follows.
    if (hasStatus || endStream) this.onTrailers(fields);
  }

  private onTrailers(fields: HeaderField[]): void {
    const metadata: Record<string, string> = {};
    for (const [name, value] of fields) {
      if (name.startsWith(':')) continue;
      const previous = metadata[name];
      metadata[name] = previous === undefined ? value : `${previous}, ${value}`;
    }
    const code = metadata['grpc-status'];
    if (code === undefined) return;
    this.status = { code: parseGrpcStatus(code), details: decodeGrpcMessage(metadata['grpc-message'] ?? ''), metadata };
  }

  onData(chunk: Buffer): void {
    if (this.settled || !this.isGrpcResponse) return;
    this.chunks.push(chunk);
    this.receivedBytes += chunk.length;
    if (this.expectedBytes >= 0 || this.receivedBytes < MESSAGE_HEADER_BYTES) return;
    const head = this.chunks.length === 1 ? chunk : Buffer.concat(this.chunks);
    const flag = head[0]!;
    const length = head.readUInt32BE(1);
    if (flag !== 0) {
      // We never offer compression (no grpc-accept-encoding), so a compressed message is an error.
      const what = flag === 1 ? 'a compressed message, but no compression was negotiated' : `an invalid message flag ${flag}`;
      this.cancel(new GrpcStatusError(GrpcStatus.INTERNAL, `Received ${what}`));
      return;
    }
    if (length > this.maxReceiveMessageBytes) {
      this.cancel(new GrpcStatusError(GrpcStatus.RESOURCE_EXHAUSTED, `Received message larger than max (${length} vs. ${this.maxReceiveMessageBytes})`));
      return;
    }
    this.expectedBytes = MESSAGE_HEADER_BYTES + length;
  }

  onEnd(end: StreamEnd): void {
    if (this.settled) return;
    if (this.status) {
      this.finish(this.status);
      return;
    }
    switch (end.kind) {
      case 'lost':
        this.fail(new GrpcStatusError(GrpcStatus.UNAVAILABLE, end.reason));
        return;
      case 'error':
        this.fail(new GrpcStatusError(GrpcStatus.INTERNAL, end.reason));
        return;
      case 'complete':
      case 'reset':
        break;
      default: {
        const unknown: never = end;
        throw new Error(`unhandled stream end ${String(unknown)}`);
      }
    }
    const resetCode = end.kind === 'reset' ? end.code : 0;
    // No status. A server going away (GOAWAY, then resetting what it took, then closing) ends
    // calls this way too: whether the connection is going decides between UNAVAILABLE and the
    // reset code, so look once what already arrived with this frame has been read.
    setImmediate(() => this.endWithoutStatus(resetCode));
  }

  private endWithoutStatus(resetCode: number): void {
    if (this.settled) return;
    if (this.session.lost || this.session.draining || this.session.connection.draining) {
      this.fail(new GrpcStatusError(GrpcStatus.UNAVAILABLE, 'Connection dropped'));
    } else if (this.httpStatus !== 0 && this.httpStatus !== 200) {
      this.fail(new GrpcStatusError(grpcStatusOfHttpStatus(this.httpStatus), `Received HTTP status code ${this.httpStatus}`));
    } else if (!this.isGrpcResponse) {
      this.fail(new GrpcStatusError(GrpcStatus.UNKNOWN, 'Received a response that is not gRPC (content-type)'));
    } else if (resetCode !== 0) {
      this.fail(new GrpcStatusError(grpcStatusOfResetCode(resetCode), `Received RST_STREAM with code ${resetCode}`));
    } else {
      this.fail(new GrpcStatusError(GrpcStatus.INTERNAL, 'Server closed the stream without sending a status'));
    }
  }

  private finish(status: { code: GrpcStatus; details: string; metadata: Record<string, string> }): void {
    if (status.code !== GrpcStatus.OK) {
      this.fail(new GrpcStatusError(status.code, status.details, status.metadata));
      return;
    }
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    if (this.expectedBytes < 0 || body.length < this.expectedBytes) {
      this.fail(new GrpcStatusError(GrpcStatus.INTERNAL, body.length === 0 ? 'Server sent no response message for a unary call' : 'Server sent a truncated response message'));
      return;
    }
    if (body.length > this.expectedBytes) {
      this.fail(new GrpcStatusError(GrpcStatus.INTERNAL, 'Server sent more than one response message for a unary call'));
      return;
    }
    if (this.settle()) this.resolve(body.subarray(MESSAGE_HEADER_BYTES));
  }
}
