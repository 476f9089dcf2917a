// Test-only HTTP/2 framing, for peers that must send what no HTTP/2 library would: frames cut
// from a byte stream (9-byte header, RFC 9113 §4.1), frames written from parts, and header blocks
// of literal fields (HPACK "literal without indexing, new name", no Huffman), enough to answer a
// gRPC call by hand. Nothing here decodes a header block.

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

export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
  /** The whole frame as it was on the wire. */
  raw: Buffer;
}

export function encodeFrame(type: number, flags: number, streamId: number, payload: Uint8Array = Buffer.alloc(0)): Buffer {
  const out = Buffer.alloc(9 + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(streamId & 0x7fffffff, 5);
  out.set(payload, 9);
  return out;
}

/** Cuts a byte stream into frames; `skipPreface` for the client-to-server direction. */
export class FrameReader {
  private pending: Buffer = Buffer.alloc(0);
  private prefaceLeft: number;

  constructor(skipPreface: boolean) {
    this.prefaceLeft = skipPreface ? CLIENT_PREFACE.length : 0;
  }

  /** The preface bytes (if any) and the complete frames in `chunk` and what came before it. */
  push(chunk: Buffer): { preface: Buffer; frames: Frame[] } {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let preface: Buffer = Buffer.alloc(0);
    if (this.prefaceLeft > 0) {
      const n = Math.min(this.prefaceLeft, this.pending.length);
      preface = this.pending.subarray(0, n);
      this.pending = this.pending.subarray(n);
      this.prefaceLeft -= n;
    }
    const frames: Frame[] = [];
    while (this.pending.length >= 9) {
      const length = this.pending.readUIntBE(0, 3);
      if (this.pending.length < 9 + length) break;
      const raw = this.pending.subarray(0, 9 + length);
      frames.push({ type: raw[3]!, flags: raw[4]!, streamId: raw.readUInt32BE(5) & 0x7fffffff, payload: raw.subarray(9), raw });
      this.pending = this.pending.subarray(9 + length);
    }
    return { preface, frames };
  }
}

function hpackInteger(value: number, prefixBits: number, firstByte: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [firstByte | value];
  const out = [firstByte | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

/** A header block of literal fields (lower-case names), no indexing and no Huffman. */
export function literalHeaderBlock(fields: ReadonlyArray<readonly [string, string]>): Buffer {
  const bytes: number[] = [];
  for (const [name, value] of fields) {
    const n = Buffer.from(name, 'latin1');
    const v = Buffer.from(value, 'utf8');
    bytes.push(0x00, ...hpackInteger(n.length, 7, 0), ...n, ...hpackInteger(v.length, 7, 0), ...v);
  }
  return Buffer.from(bytes);
}

/** A gRPC length-prefixed message: flag, 4-byte big-endian length, bytes. */
export function grpcFrame(message: Uint8Array, flag = 0, declaredLength = message.length): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out[0] = flag;
  out.writeUInt32BE(declaredLength, 1);
  out.set(message, 5);
  return out;
}
