// HTTP/2 frames (RFC 9113 sections 4 and 6): the 9-octet header, and what each frame type a client
// receives carries. The reader takes bytes as they come off the socket, in pieces of any size,
// and yields whole frames, checking what can be checked without connection state (lengths,
// stream 0 or not, padding). The writers build the frames a unary gRPC client sends.

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const Flag = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

export const ErrorCode = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  SETTINGS_TIMEOUT: 0x4,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  CONNECT_ERROR: 0xa,
  ENHANCE_YOUR_CALM: 0xb,
  INADEQUATE_SECURITY: 0xc,
  HTTP_1_1_REQUIRED: 0xd,
} as const;
const ERROR_NAMES: readonly string[] = Object.keys(ErrorCode);
export function errorCodeName(code: number): string {
  return ERROR_NAMES[code] ?? `0x${code.toString(16)}`;
}

export const Setting = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
} as const;

export const FRAME_HEADER_OCTETS = 9;
export const DEFAULT_MAX_FRAME_SIZE = 16_384;
export const MAX_ALLOWED_FRAME_SIZE = 16_777_215;
export const MAX_WINDOW = 0x7fffffff;
export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** A connection error (RFC 9113 section 5.4.1): the connection ends with GOAWAY carrying `code`. */
export class Http2ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(`${message} (${errorCodeName(code)})`);
    this.name = 'Http2ProtocolError';
  }
}

/** A frame with its padding and priority fields removed: `payload` is what the type carries. */
export interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
  /** The payload's length before padding was removed: what flow control counts for DATA. */
  readonly octets: number;
}

/** Reassembles frames from socket chunks of any size. */
export class FrameReader {
  private leftover: Buffer | undefined;
  /** Our SETTINGS_MAX_FRAME_SIZE: a longer frame is a FRAME_SIZE_ERROR. */
  maxFrameSize = DEFAULT_MAX_FRAME_SIZE;

  /** Appends `chunk` and calls `onFrame` for each complete frame; throws Http2ProtocolError. */
  push(chunk: Buffer, onFrame: (frame: Frame) => void): void {
    const buffer = this.leftover ? Buffer.concat([this.leftover, chunk]) : chunk;
    this.leftover = undefined;
    let at = 0;
    while (buffer.length - at >= FRAME_HEADER_OCTETS) {
      const length = buffer.readUIntBE(at, 3);
      if (length > this.maxFrameSize) throw new Http2ProtocolError(ErrorCode.FRAME_SIZE_ERROR, `frame of ${length} octets, over the ${this.maxFrameSize} allowed`);
      if (buffer.length - at < FRAME_HEADER_OCTETS + length) break;
      const type = buffer[at + 3]!;
      const flags = buffer[at + 4]!;
      const streamId = buffer.readUInt32BE(at + 5) & MAX_WINDOW;
      const raw = buffer.subarray(at + FRAME_HEADER_OCTETS, at + FRAME_HEADER_OCTETS + length);
      at += FRAME_HEADER_OCTETS + length;
      const frame = checkFrame(type, flags, streamId, raw);
      if (frame) onFrame(frame);
    }
    if (at < buffer.length) this.leftover = buffer.subarray(at);
  }
}

const TYPE_NAMES: readonly string[] = Object.keys(FrameType);

/** Frame-level checks (RFC 9113 section 6); strips padding and priority. Unknown types yield undefined. */
function checkFrame(type: number, flags: number, streamId: number, raw: Buffer): Frame | undefined {
  const name = TYPE_NAMES[type] ?? '';
  const needsStream = (): void => {
    if (streamId === 0) throw new Http2ProtocolError(ErrorCode.PROTOCOL_ERROR, `${name} frame on stream 0`);
  };
  const needsConnection = (): void => {
    if (streamId !== 0) throw new Http2ProtocolError(ErrorCode.PROTOCOL_ERROR, `${name} frame on stream ${streamId}, not 0`);
  };
  const needsLength = (expected: number): void => {
    if (raw.length !== expected) throw new Http2ProtocolError(ErrorCode.FRAME_SIZE_ERROR, `${name} frame of ${raw.length} octets, not ${expected}`);
  };
  let payload = raw;
  switch (type) {
    case FrameType.DATA:
    case FrameType.HEADERS: {
      needsStream();
      if (flags & Flag.PADDED) {
        if (raw.length < 1) throw new Http2ProtocolError(ErrorCode.FRAME_SIZE_ERROR, `padded ${name} frame without a pad length`);
        const padding = raw[0]!;
        if (padding >= raw.length) throw new Http2ProtocolError(ErrorCode.PROTOCOL_ERROR, `${name} frame padding (${padding}) not shorter than the frame (${raw.length})`);
        payload = raw.subarray(1, raw.length - padding);
      }
      if (type === FrameType.HEADERS && flags & Flag.PRIORITY) {
        if (payload.length < 5) throw new Http2ProtocolError(ErrorCode.FRAME_SIZE_ERROR, 'HEADERS frame too short for its priority fields');
        payload = payload.subarray(5);
      }
      break;
    }
    case FrameType.PRIORITY:
      needsStream();
      needsLength(5);
      break;
    case FrameType.RST_STREAM:
      needsStream();
      needsLength(4);
      break;
    case FrameType.SETTINGS:
      needsConnection();
      if (flags & Flag.ACK) needsLength(0);
      else if (raw.length % 6 !== 0) throw new Http2ProtocolError(ErrorCode.FRAME_SIZE_ERROR, `SETTINGS frame of ${raw.length} octets, not a multiple of 6`);
      break;
    case FrameType.PUSH_PROMISE:
      // We sent ENABLE_PUSH 0.
      throw new Http2ProtocolError(ErrorCode.PROTOCOL_ERROR, 'PUSH_PROMISE received though push is disabled');
    case FrameType.PING:
      needsConnection();
      needsLength(8);
      break;
    case FrameType.GOAWAY:
      needsConnection();
      if (raw.length < 8) throw new Http2ProtocolError(ErrorCode.FRAME_SIZE_ERROR, `GOAWAY frame of ${raw.length} octets, under 8`);
      break;
    case FrameType.WINDOW_UPDATE:
      needsLength(4);
      break;
    case FrameType.CONTINUATION:
      needsStream();
      break;
    default:
      return undefined; // unknown frame types are ignored (RFC 9113 section 4.1)
  }
  return { type, flags, streamId, payload, octets: raw.length };
}

function frame(type: number, flags: number, streamId: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_OCTETS + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(streamId, 5);
  out.set(payload, FRAME_HEADER_OCTETS);
  return out;
}

export function settingsFrame(settings: ReadonlyArray<readonly [id: number, value: number]>): Buffer {
  const payload = Buffer.allocUnsafe(6 * settings.length);
  settings.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, 6 * i);
    payload.writeUInt32BE(value, 6 * i + 2);
  });
  return frame(FrameType.SETTINGS, 0, 0, payload);
}

export function settingsAckFrame(): Buffer {
  return frame(FrameType.SETTINGS, Flag.ACK, 0, Buffer.alloc(0));
}

export function pingAckFrame(opaque: Uint8Array): Buffer {
  return frame(FrameType.PING, Flag.ACK, 0, opaque);
}

export function windowUpdateFrame(streamId: number, increment: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(increment, 0);
  return frame(FrameType.WINDOW_UPDATE, 0, streamId, payload);
}

export function rstStreamFrame(streamId: number, code: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(code, 0);
  return frame(FrameType.RST_STREAM, 0, streamId, payload);
}

export function goawayFrame(lastStreamId: number, code: number, debug: string): Buffer {
  const text = Buffer.from(debug, 'utf8');
  const payload = Buffer.allocUnsafe(8 + text.length);
  payload.writeUInt32BE(lastStreamId, 0);
  payload.writeUInt32BE(code, 4);
  text.copy(payload, 8);
  return frame(FrameType.GOAWAY, 0, 0, payload);
}

/** A header block as HEADERS plus as many CONTINUATION frames as `maxFrameSize` needs. */
export function headersFrames(streamId: number, block: Buffer, endStream: boolean, maxFrameSize: number): Buffer[] {
  const frames: Buffer[] = [];
  const endStreamFlag = endStream ? Flag.END_STREAM : 0;
  for (let at = 0; at === 0 || at < block.length; at += maxFrameSize) {
    const piece = block.subarray(at, at + maxFrameSize);
    const last = at + maxFrameSize >= block.length;
    frames.push(frame(at === 0 ? FrameType.HEADERS : FrameType.CONTINUATION, (at === 0 ? endStreamFlag : 0) | (last ? Flag.END_HEADERS : 0), streamId, piece));
  }
  return frames;
}

export function dataFrame(streamId: number, data: Uint8Array, endStream: boolean): Buffer {
  return frame(FrameType.DATA, endStream ? Flag.END_STREAM : 0, streamId, data);
}
