// The client side of one HTTP/2 connection (RFC 9113) over a socket, as much of it as unary
// gRPC needs: the preface and SETTINGS exchange, requests as HEADERS + DATA on client streams
// (queued beyond the peer's MAX_CONCURRENT_STREAMS), responses as header blocks (HPACK, with
// CONTINUATION) and DATA, flow control both ways, PING, RST_STREAM and GOAWAY. Whatever the peer
// sends that breaks the protocol ends the connection with GOAWAY and a message saying what was
// wrong; every stream then ends 'lost' with that message. Nothing the peer sends can throw out
// of a socket callback.
import type { Socket } from 'node:net';
import {
  CLIENT_PREFACE,
  DEFAULT_MAX_FRAME_SIZE,
  dataFrame,
  ErrorCode,
  errorCodeName,
  Flag,
  type Frame,
  FrameReader,
  FrameType,
  goawayFrame,
  headersFrames,
  Http2ProtocolError,
  MAX_ALLOWED_FRAME_SIZE,
  MAX_WINDOW,
  pingAckFrame,
  rstStreamFrame,
  Setting,
  settingsAckFrame,
  settingsFrame,
  windowUpdateFrame,
} from './frames.js';
import { encodeHeaderBlock, HpackDecoder, HpackError, type HeaderField } from './hpack.js';

/** How a stream ended, as its handler hears it (never for a stream the caller cancelled). */
export type StreamEnd =
  /** The peer ended its side (END_STREAM). */
  | { kind: 'complete' }
  /** The peer reset the stream (RST_STREAM). */
  | { kind: 'reset'; code: number }
  /** The peer broke the protocol on this stream only; we reset it. */
  | { kind: 'error'; reason: string }
  /** The connection went away, or GOAWAY said the peer never processed the stream. */
  | { kind: 'lost'; reason: string };

export interface StreamHandler {
  /** A header block: the response headers, then possibly trailers (endStream set). */
  onHeaders(fields: HeaderField[], endStream: boolean): void;
  onData(chunk: Buffer): void;
  onEnd(end: StreamEnd): void;
}

export interface ConnectionEvents {
  /** The peer's first SETTINGS arrived: the connection is usable. */
  onReady(): void;
  /** GOAWAY arrived (streams it refused have already ended 'lost'); no new streams. */
  onGoaway(code: number, debug: string): void;
  /** The socket is closed and every stream has ended. Called once. */
  onClose(reason: string): void;
}

/**
 * Our receive window, per stream and for the connection: generous, so a 4 MiB reply never waits
 * for a WINDOW_UPDATE round trip; what was consumed is handed back once half of it is used.
 */
export const RECEIVE_WINDOW = 16 * 1024 * 1024;
const DEFAULT_WINDOW = 65_535;
/** The largest header block (all its frames) we take before decoding it. */
const MAX_HEADER_BLOCK_OCTETS = 1024 * 1024;

export class ClientStream {
  /** 0 until it is sent (it may wait for the peer's concurrency limit). */
  id = 0;
  sendWindow = 0;
  receiveWindow = RECEIVE_WINDOW;
  receiveUnacked = 0;
  /** The body not yet sent for lack of flow-control window. */
  pendingBody: Buffer | undefined;
  localEnded = false;
  remoteEnded = false;
  sawHeaders = false;
  closed = false;

  constructor(
    private readonly connection: Http2ClientConnection,
    readonly headerBlock: Buffer,
    readonly body: Buffer,
    readonly handler: StreamHandler,
  ) {}

  /** Ends the stream from our side (RST_STREAM, CANCEL by default); the handler hears nothing more. */
  cancel(code: number = ErrorCode.CANCEL): void {
    this.connection.cancelStream(this, code);
  }
}

export class Http2ClientConnection {
  private readonly reader = new FrameReader();
  private readonly decoder = new HpackDecoder();
  /** Streams sent and not yet closed, by id. */
  private readonly streams = new Map<number, ClientStream>();
  /** Streams waiting for the peer's MAX_CONCURRENT_STREAMS to allow them, oldest first. */
  private queued: ClientStream[] = [];
  private nextStreamId = 1;
  private peerMaxConcurrentStreams = Infinity;
  private peerInitialWindow = DEFAULT_WINDOW;
  private peerMaxFrameSize = DEFAULT_MAX_FRAME_SIZE;
  private connectionSendWindow = DEFAULT_WINDOW;
  private connectionReceiveWindow = RECEIVE_WINDOW;
  private connectionReceiveUnacked = 0;
  private headerBlock: { streamId: number; endStream: boolean; chunks: Buffer[]; octets: number } | undefined;
  private isReady = false;
  private isGoingAway = false;
  private isClosed = false;
  private closeReason = '';
  private closeReported = false;
  private out: Buffer[] = [];
  private flushScheduled = false;

  constructor(
    private readonly socket: Socket,
    private readonly events: ConnectionEvents,
  ) {
    this.out.push(
      CLIENT_PREFACE,
      settingsFrame([
        [Setting.ENABLE_PUSH, 0],
        [Setting.INITIAL_WINDOW_SIZE, RECEIVE_WINDOW],
      ]),
      windowUpdateFrame(0, RECEIVE_WINDOW - DEFAULT_WINDOW),
    );
    this.flush();
    socket.on('data', (chunk: Buffer) => this.onSocketData(chunk));
    socket.on('error', (err: Error) => {
      this.closeReason ||= err.message;
    });
    socket.on('close', () => this.onSocketClose());
  }

  /** No new streams: GOAWAY received, or closed. */
  get draining(): boolean {
    return this.isGoingAway || this.isClosed;
  }

  ref(): void {
    this.socket.ref();
  }

  unref(): void {
    this.socket.unref();
  }

  /**
   * Starts a request: `fields` (pseudo-headers first, lowercase names) and `body`, which ends the
   * stream. The handler hears the outcome, at once if the connection cannot take the stream.
   */
  request(fields: readonly HeaderField[], body: Buffer, handler: StreamHandler): ClientStream {
    const stream = new ClientStream(this, encodeHeaderBlock(fields), body, handler);
    if (this.isClosed || this.isGoingAway) {
      stream.closed = true;
      handler.onEnd({ kind: 'lost', reason: this.isClosed ? this.closeReason || 'Connection closed' : 'Connection is going away (GOAWAY)' });
      return stream;
    }
    if (this.streams.size < this.peerMaxConcurrentStreams) this.open(stream);
    else this.queued.push(stream);
    this.scheduleFlush();
    return stream;
  }

  /** Closes the connection: GOAWAY with `code` when given, then the socket; streams end 'lost'. */
  destroy(reason: string, code?: number): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.closeReason = reason;
    if (code !== undefined && !this.socket.destroyed) {
      // Highest stream the peer opened: none, a client accepts no streams.
      this.out.push(goawayFrame(0, code, reason.slice(0, 200)));
      this.flush();
    }
    this.endAll({ kind: 'lost', reason });
    this.socket.destroy();
  }

  cancelStream(stream: ClientStream, code: number): void {
    if (stream.closed) return;
    stream.closed = true;
    stream.pendingBody = undefined;
    if (stream.id === 0) {
      this.queued = this.queued.filter((s) => s !== stream);
      return;
    }
    this.streams.delete(stream.id);
    if (!this.isClosed) this.out.push(rstStreamFrame(stream.id, code));
    this.afterStreamClosed();
    this.scheduleFlush();
  }

  private open(stream: ClientStream): void {
    if (this.nextStreamId > MAX_WINDOW) {
      // Stream ids are used up (2^30 requests): this connection takes no more.
      stream.closed = true;
      stream.handler.onEnd({ kind: 'lost', reason: 'HTTP/2 stream ids exhausted on this connection' });
      if (!this.isGoingAway) {
        this.isGoingAway = true;
        this.events.onGoaway(ErrorCode.NO_ERROR, 'stream ids exhausted');
      }
      return;
    }
    stream.id = this.nextStreamId;
    this.nextStreamId += 2;
    stream.sendWindow = this.peerInitialWindow;
    this.streams.set(stream.id, stream);
    const endStream = stream.body.length === 0;
    this.out.push(...headersFrames(stream.id, stream.headerBlock, endStream, this.peerMaxFrameSize));
    if (endStream) stream.localEnded = true;
    else {
      stream.pendingBody = stream.body;
      this.sendBody(stream);
    }
  }

  /** Sends as much of the stream's body as the windows and the frame size allow. */
  private sendBody(stream: ClientStream): void {
    let body = stream.pendingBody;
    while (body) {
      const octets = Math.min(body.length, stream.sendWindow, this.connectionSendWindow, this.peerMaxFrameSize);
      if (octets <= 0) break;
      const last = octets === body.length;
      this.out.push(dataFrame(stream.id, body.subarray(0, octets), last));
      stream.sendWindow -= octets;
      this.connectionSendWindow -= octets;
      body = last ? undefined : body.subarray(octets);
      if (last) stream.localEnded = true;
    }
    stream.pendingBody = body;
  }

  private sendPendingBodies(): void {
    for (const stream of this.streams.values()) {
      if (stream.pendingBody) this.sendBody(stream);
      if (this.connectionSendWindow <= 0) return;
    }
  }

  /**
   * Writes what is queued once the current tick's work is done: the calls a burst of answers
   * sets off (each answer resolves a call, whose caller starts the next) go out in one write.
   */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    process.nextTick(this.flushOnTick);
  }

  private readonly flushOnTick = (): void => {
    this.flushScheduled = false;
    this.flush();
  };

  private flush(): void {
    if (this.out.length === 0) return;
    const bytes = this.out.length === 1 ? this.out[0]! : Buffer.concat(this.out);
    this.out = [];
    if (!this.socket.destroyed) this.socket.write(bytes);
  }

  private onSocketData(chunk: Buffer): void {
    if (this.isClosed) return;
    try {
      this.reader.push(chunk, (frame) => {
        if (!this.isClosed) this.onFrame(frame);
      });
    } catch (err) {
      this.failConnection(err);
    }
    this.flush();
  }

  private failConnection(err: unknown): void {
    const before = this.isReady ? '' : ' before its SETTINGS (is it an HTTP/2 server?)';
    if (err instanceof Http2ProtocolError) {
      this.destroy(`HTTP/2 protocol error from the server${before}: ${err.message}`, err.code);
    } else if (err instanceof HpackError) {
      this.destroy(`HTTP/2 header block from the server does not decode: ${err.message} (COMPRESSION_ERROR)`, ErrorCode.COMPRESSION_ERROR);
    } else {
      this.destroy(`Internal error handling the server's HTTP/2 frames: ${err instanceof Error ? err.message : String(err)}`, ErrorCode.INTERNAL_ERROR);
    }
  }

  private onSocketClose(): void {
    if (!this.isClosed) {
      this.isClosed = true;
      this.closeReason ||= 'Connection dropped';
      this.endAll({ kind: 'lost', reason: this.closeReason });
    }
    if (this.closeReported) return;
    this.closeReported = true;
    this.events.onClose(this.closeReason);
  }

  private endAll(end: StreamEnd): void {
    const streams = [...this.queued, ...this.streams.values()];
    this.queued = [];
    this.streams.clear();
    for (const stream of streams) this.end(stream, end);
  }

  private end(stream: ClientStream, end: StreamEnd): void {
    if (stream.closed) return;
    stream.closed = true;
    stream.pendingBody = undefined;
    if (stream.id !== 0) this.streams.delete(stream.id);
    stream.handler.onEnd(end);
  }

  private afterStreamClosed(): void {
    while (this.queued.length > 0 && this.streams.size < this.peerMaxConcurrentStreams && !this.draining) this.open(this.queued.shift()!);
    // After GOAWAY the connection is done once its last stream is.
    if (this.isGoingAway && this.streams.size === 0 && this.queued.length === 0) this.destroy('Server sent GOAWAY');
  }

  private onFrame(frame: Frame): void {
    if (this.headerBlock && (frame.type !== FrameType.CONTINUATION || frame.streamId !== this.headerBlock.streamId)) {
      throw new Http2ProtocolError(ErrorCode.PROTOCOL_ERROR, `frame of type ${frame.type} on stream ${frame.streamId} inside the header block of stream ${this.headerBlock.streamId}`);
    }
    if (!this.isReady && frame.type !== FrameType.SETTINGS) {
      throw new Http2ProtocolError(ErrorCode.PROTOCOL_ERROR, `frame of type ${frame.type} before the server's SETTINGS`);
    }
    switch (frame.type) {
      case FrameType.DATA:
        this.onData(frame);
        return;
      case FrameType.HEADERS:
        this.checkStreamId(frame.streamId, 'HEADERS');
        this.headerBlock = { streamId: frame.streamId, endStream: (frame.flags & Flag.END_STREAM) !== 0, chunks: [], octets: 0 };
        this.onHeaderFragment(frame);
        return;
      case FrameType.CONTINUATION:
        if (!this.headerBlock) throw new Http2ProtocolError(ErrorCode.PROTOCOL_ERROR, `CONTINUATION on stream ${frame.streamId} without HEADERS`);
        this.onHeaderFragment(frame);
        return;
      case FrameType.PRIORITY:
        return;
      case FrameType.RST_STREAM: {
        this.checkStreamId(frame.streamId, 'RST_STREAM');
        const stream = this.streams.get(frame.streamId);
        if (stream) {
          this.end(stream, { kind: 'reset', code: frame.payload.readUInt32BE(0) });
          this.afterStreamClosed();
        }
        return;
      }
      case FrameType.SETTINGS:
        if (frame.flags & Flag.ACK) return;
        this.applySettings(frame.payload);
        this.out.push(settingsAckFrame());
        if (!this.isReady) {
          this.isReady = true;
          this.events.onReady();
        }
        return;
      case FrameType.PING:
        if (!(frame.flags & Flag.ACK)) this.out.push(pingAckFrame(frame.payload));
        return;
      case FrameType.GOAWAY:
        this.onGoaway(frame.payload);
        return;
      case FrameType.WINDOW_UPDATE:
        this.onWindowUpdate(frame);
        return;
      default:
        return;
    }
  }

  /** A frame for a stream the server could not have: one it pushed, or one we never opened. */
  private checkStreamId(streamId: number, what: string): void {
    if (streamId % 2 === 0) throw new Http2ProtocolError(ErrorCode.PROTOCOL_ERROR, `${what} on stream ${streamId}, which only a server could open`);
    if (streamId >= this.nextStreamId) throw new Http2ProtocolError(ErrorCode.PROTOCOL_ERROR, `${what} on stream ${streamId}, which was never opened`);
  }

  private onData(frame: Frame): void {
    this.checkStreamId(frame.streamId, 'DATA');
    // Flow control counts every DATA octet, padding included, whatever became of the stream.
    this.connectionReceiveWindow -= frame.octets;
    if (this.connectionReceiveWindow < 0) throw new Http2ProtocolError(ErrorCode.FLOW_CONTROL_ERROR, 'DATA beyond the connection window');
    this.connectionReceiveUnacked += frame.octets;
    if (this.connectionReceiveUnacked >= RECEIVE_WINDOW / 2) {
      this.out.push(windowUpdateFrame(0, this.connectionReceiveUnacked));
      this.connectionReceiveWindow += this.connectionReceiveUnacked;
      this.connectionReceiveUnacked = 0;
    }
    const stream = this.streams.get(frame.streamId);
    if (!stream) return; // closed or cancelled by us: what is in flight still arrives
    const endStream = (frame.flags & Flag.END_STREAM) !== 0;
    if (stream.remoteEnded) return this.resetStream(stream, ErrorCode.STREAM_CLOSED, 'Server sent DATA after ending the stream');
    if (!stream.sawHeaders) return this.resetStream(stream, ErrorCode.PROTOCOL_ERROR, 'Server sent DATA before the response headers');
    stream.receiveWindow -= frame.octets;
    if (stream.receiveWindow < 0) return this.resetStream(stream, ErrorCode.FLOW_CONTROL_ERROR, 'Server sent DATA beyond the stream window');
    stream.receiveUnacked += frame.octets;
    if (!endStream && stream.receiveUnacked >= RECEIVE_WINDOW / 2) {
      this.out.push(windowUpdateFrame(stream.id, stream.receiveUnacked));
      stream.receiveWindow += stream.receiveUnacked;
      stream.receiveUnacked = 0;
    }
    if (frame.payload.length > 0) stream.handler.onData(frame.payload);
    if (endStream && !stream.closed) this.remoteEnded(stream);
  }

  private onHeaderFragment(frame: Frame): void {
    const block = this.headerBlock!;
    block.chunks.push(frame.payload);
    block.octets += frame.payload.length;
    if (block.octets > MAX_HEADER_BLOCK_OCTETS) throw new Http2ProtocolError(ErrorCode.ENHANCE_YOUR_CALM, `header block over ${MAX_HEADER_BLOCK_OCTETS} octets`);
    if (!(frame.flags & Flag.END_HEADERS)) return;
    this.headerBlock = undefined;
    // Decoded whatever became of the stream: the decoder's table must follow the server's.
    const fields = this.decoder.decode(block.chunks.length === 1 ? block.chunks[0]! : Buffer.concat(block.chunks));
    const stream = this.streams.get(block.streamId);
    if (!stream) return;
    if (stream.remoteEnded) return this.resetStream(stream, ErrorCode.STREAM_CLOSED, 'Server sent HEADERS after ending the stream');
    const status = fields.find(([name]) => name === ':status')?.[1] ?? '';
    // An informational response (1xx) comes before the real one and says nothing to us.
    if (!stream.sawHeaders && status.length === 3 && status[0] === '1' && !block.endStream) return;
    if (stream.sawHeaders && !block.endStream) return this.resetStream(stream, ErrorCode.PROTOCOL_ERROR, 'Server sent trailers that do not end the stream');
    stream.sawHeaders = true;
    stream.handler.onHeaders(fields, block.endStream);
    if (block.endStream && !stream.closed) this.remoteEnded(stream);
  }

  private remoteEnded(stream: ClientStream): void {
    stream.remoteEnded = true;
    // The server answered before taking the whole request: tell it we stop sending.
    if (!stream.localEnded) this.out.push(rstStreamFrame(stream.id, ErrorCode.CANCEL));
    this.end(stream, { kind: 'complete' });
    this.afterStreamClosed();
  }

  /** A stream error (RFC 9113 section 5.4.2): reset the stream, the connection goes on. */
  private resetStream(stream: ClientStream, code: number, reason: string): void {
    this.out.push(rstStreamFrame(stream.id, code));
    this.end(stream, { kind: 'error', reason: `${reason} (${errorCodeName(code)})` });
    this.afterStreamClosed();
  }

  private applySettings(payload: Buffer): void {
    for (let at = 0; at < payload.length; at += 6) {
      const id = payload.readUInt16BE(at);
      const value = payload.readUInt32BE(at + 2);
      switch (id) {
        case Setting.ENABLE_PUSH:
          if (value > 1) throw new Http2ProtocolError(ErrorCode.PROTOCOL_ERROR, `SETTINGS_ENABLE_PUSH ${value}`);
          if (value === 1) throw new Http2ProtocolError(ErrorCode.PROTOCOL_ERROR, 'a server set SETTINGS_ENABLE_PUSH to 1');
          break;
        case Setting.MAX_CONCURRENT_STREAMS:
          this.peerMaxConcurrentStreams = value;
          break;
        case Setting.INITIAL_WINDOW_SIZE: {
          if (value > MAX_WINDOW) throw new Http2ProtocolError(ErrorCode.FLOW_CONTROL_ERROR, `SETTINGS_INITIAL_WINDOW_SIZE ${value} over 2^31-1`);
          const delta = value - this.peerInitialWindow;
          this.peerInitialWindow = value;
          for (const stream of this.streams.values()) {
            stream.sendWindow += delta;
            if (stream.sendWindow > MAX_WINDOW) throw new Http2ProtocolError(ErrorCode.FLOW_CONTROL_ERROR, `stream ${stream.id} window over 2^31-1`);
          }
          break;
        }
        case Setting.MAX_FRAME_SIZE:
          if (value < DEFAULT_MAX_FRAME_SIZE || value > MAX_ALLOWED_FRAME_SIZE) throw new Http2ProtocolError(ErrorCode.PROTOCOL_ERROR, `SETTINGS_MAX_FRAME_SIZE ${value} out of range`);
          this.peerMaxFrameSize = value;
          break;
        default:
          // HEADER_TABLE_SIZE: our encoder never uses the dynamic table. MAX_HEADER_LIST_SIZE:
          // our requests are a few hundred octets. Unknown settings are ignored (RFC 9113 section 6.5.2).
          break;
      }
    }
    this.sendPendingBodies();
    this.afterStreamClosed();
  }

  private onGoaway(payload: Buffer): void {
    const lastStreamId = payload.readUInt32BE(0) & MAX_WINDOW;
    const code = payload.readUInt32BE(4);
    // Debug data is free text for people: kept short, it ends up in call errors and logs.
    const debug = payload.toString('utf8', 8, 8 + 200);
    const wasGoingAway = this.isGoingAway;
    this.isGoingAway = true;
    // Streams above lastStreamId were never processed: they may be retried elsewhere.
    const reason = `Server sent GOAWAY (${errorCodeName(code)}${debug ? `: ${debug}` : ''}) before processing the call`;
    const refused = [...this.queued, ...[...this.streams.values()].filter((s) => s.id > lastStreamId)];
    this.queued = [];
    for (const stream of refused) this.end(stream, { kind: 'lost', reason });
    if (!wasGoingAway) this.events.onGoaway(code, debug);
    this.afterStreamClosed();
  }

  private onWindowUpdate(frame: Frame): void {
    const increment = frame.payload.readUInt32BE(0) & MAX_WINDOW;
    if (frame.streamId === 0) {
      if (increment === 0) throw new Http2ProtocolError(ErrorCode.PROTOCOL_ERROR, 'WINDOW_UPDATE of 0 on the connection');
      this.connectionSendWindow += increment;
      if (this.connectionSendWindow > MAX_WINDOW) throw new Http2ProtocolError(ErrorCode.FLOW_CONTROL_ERROR, 'connection window over 2^31-1');
      this.sendPendingBodies();
      return;
    }
    this.checkStreamId(frame.streamId, 'WINDOW_UPDATE');
    const stream = this.streams.get(frame.streamId);
    if (!stream) return;
    if (increment === 0) return this.resetStream(stream, ErrorCode.PROTOCOL_ERROR, 'Server sent a WINDOW_UPDATE of 0');
    stream.sendWindow += increment;
    if (stream.sendWindow > MAX_WINDOW) return this.resetStream(stream, ErrorCode.FLOW_CONTROL_ERROR, 'Server grew the stream window over 2^31-1');
    if (stream.pendingBody) this.sendBody(stream);
  }
}
