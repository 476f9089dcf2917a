// The frame reader takes socket bytes in pieces of any size (every split point, one byte at a
// time) and yields the same frames; it refuses what RFC 9113 sections 4 and 6 make connection errors;
// the writers split header blocks and lay out frames as the reader (and nghttp2) read them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  dataFrame,
  ErrorCode,
  Flag,
  type Frame,
  FrameReader,
  FrameType,
  goawayFrame,
  headersFrames,
  Http2ProtocolError,
  pingAckFrame,
  rstStreamFrame,
  settingsAckFrame,
  settingsFrame,
  windowUpdateFrame,
} from './frames.js';

function raw(type: number, flags: number, streamId: number, payload: number[] | Buffer): Buffer {
  const body = Buffer.from(payload);
  const header = Buffer.alloc(9);
  header.writeUIntBE(body.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, body]);
}

type Seen = { type: number; flags: number; streamId: number; payload: string; octets: number };
const seen = (frame: Frame): Seen => ({ type: frame.type, flags: frame.flags, streamId: frame.streamId, payload: frame.payload.toString('hex'), octets: frame.octets });

function readAll(chunks: Buffer[]): Seen[] {
  const reader = new FrameReader();
  const frames: Seen[] = [];
  for (const chunk of chunks) reader.push(chunk, (frame) => frames.push(seen(frame)));
  return frames;
}

const wire = Buffer.concat([
  raw(FrameType.SETTINGS, 0, 0, [0, 3, 0, 0, 0, 100, 0, 4, 0, 1, 0, 0]),
  // HEADERS, padded (2 octets of padding) and with priority fields (5 octets), no END_HEADERS.
  raw(FrameType.HEADERS, Flag.PADDED | Flag.PRIORITY, 1, [2, 0, 0, 0, 3, 16, 0x88, 0, 0]),
  raw(FrameType.CONTINUATION, Flag.END_HEADERS, 1, [0xc0]),
  raw(FrameType.DATA, Flag.PADDED, 1, [3, 0xaa, 0xbb, 0, 0, 0]),
  raw(FrameType.DATA, Flag.END_STREAM, 1, []),
  raw(0x42, 0, 0, [1, 2, 3]), // unknown type: skipped
  raw(FrameType.PRIORITY, 0, 3, [0, 0, 0, 1, 16]),
  raw(FrameType.PING, 0, 0, [1, 2, 3, 4, 5, 6, 7, 8]),
  raw(FrameType.WINDOW_UPDATE, 0, 1, [0, 0, 1, 0]),
  raw(FrameType.RST_STREAM, 0, 3, [0, 0, 0, 8]),
  raw(FrameType.GOAWAY, 0, 0, [0, 0, 0, 3, 0, 0, 0, 0, 0x62, 0x79, 0x65]),
  raw(FrameType.SETTINGS, Flag.ACK, 0, []),
]);
const expected: Seen[] = [
  { type: FrameType.SETTINGS, flags: 0, streamId: 0, payload: '000300000064000400010000', octets: 12 },
  { type: FrameType.HEADERS, flags: Flag.PADDED | Flag.PRIORITY, streamId: 1, payload: '88', octets: 9 },
  { type: FrameType.CONTINUATION, flags: Flag.END_HEADERS, streamId: 1, payload: 'c0', octets: 1 },
  { type: FrameType.DATA, flags: Flag.PADDED, streamId: 1, payload: 'aabb', octets: 6 },
  { type: FrameType.DATA, flags: Flag.END_STREAM, streamId: 1, payload: '', octets: 0 },
  { type: FrameType.PRIORITY, flags: 0, streamId: 3, payload: '0000000110', octets: 5 },
  { type: FrameType.PING, flags: 0, streamId: 0, payload: '0102030405060708', octets: 8 },
  { type: FrameType.WINDOW_UPDATE, flags: 0, streamId: 1, payload: '00000100', octets: 4 },
  { type: FrameType.RST_STREAM, flags: 0, streamId: 3, payload: '00000008', octets: 4 },
  { type: FrameType.GOAWAY, flags: 0, streamId: 0, payload: '0000000300000000627965', octets: 11 },
  { type: FrameType.SETTINGS, flags: Flag.ACK, streamId: 0, payload: '', octets: 0 },
];

test('frames in one chunk: padding and priority removed, unknown types skipped', () => {
  assert.deepEqual(readAll([wire]), expected);
});

test('frames split at every position into two chunks read the same', () => {
  for (let at = 0; at <= wire.length; at++) assert.deepEqual(readAll([wire.subarray(0, at), wire.subarray(at)]), expected, `split at ${at}`);
});

test('frames delivered one byte at a time read the same', () => {
  assert.deepEqual(readAll([...wire].map((byte) => Buffer.from([byte]))), expected);
});

test('the reserved bit of the stream id is ignored', () => {
  const frame = raw(FrameType.DATA, 0, 5, [1]);
  frame[5]! |= 0x80;
  assert.equal(readAll([frame])[0]!.streamId, 5);
});

const malformed: Array<{ name: string; bytes: Buffer; code: number; message: RegExp }> = [
  { name: 'a frame longer than our max frame size', bytes: raw(FrameType.DATA, 0, 1, Buffer.alloc(16_385)), code: ErrorCode.FRAME_SIZE_ERROR, message: /16385 octets, over the 16384/ },
  { name: 'garbage (an HTTP/1.1 answer)', bytes: Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n'), code: ErrorCode.FRAME_SIZE_ERROR, message: /over the 16384 allowed/ },
  { name: 'DATA on stream 0', bytes: raw(FrameType.DATA, 0, 0, [1]), code: ErrorCode.PROTOCOL_ERROR, message: /DATA frame on stream 0/ },
  { name: 'HEADERS on stream 0', bytes: raw(FrameType.HEADERS, Flag.END_HEADERS, 0, [0x88]), code: ErrorCode.PROTOCOL_ERROR, message: /HEADERS frame on stream 0/ },
  { name: 'CONTINUATION on stream 0', bytes: raw(FrameType.CONTINUATION, 0, 0, []), code: ErrorCode.PROTOCOL_ERROR, message: /CONTINUATION frame on stream 0/ },
  { name: 'RST_STREAM on stream 0', bytes: raw(FrameType.RST_STREAM, 0, 0, [0, 0, 0, 0]), code: ErrorCode.PROTOCOL_ERROR, message: /stream 0/ },
  { name: 'PRIORITY on stream 0', bytes: raw(FrameType.PRIORITY, 0, 0, [0, 0, 0, 0, 0]), code: ErrorCode.PROTOCOL_ERROR, message: /stream 0/ },
  { name: 'SETTINGS on a stream', bytes: raw(FrameType.SETTINGS, 0, 1, []), code: ErrorCode.PROTOCOL_ERROR, message: /SETTINGS frame on stream 1, not 0/ },
  { name: 'PING on a stream', bytes: raw(FrameType.PING, 0, 1, Buffer.alloc(8)), code: ErrorCode.PROTOCOL_ERROR, message: /PING frame on stream 1/ },
  { name: 'GOAWAY on a stream', bytes: raw(FrameType.GOAWAY, 0, 1, Buffer.alloc(8)), code: ErrorCode.PROTOCOL_ERROR, message: /GOAWAY frame on stream 1/ },
  { name: 'SETTINGS not a multiple of 6', bytes: raw(FrameType.SETTINGS, 0, 0, [0, 1, 0, 0, 0]), code: ErrorCode.FRAME_SIZE_ERROR, message: /not a multiple of 6/ },
  { name: 'a SETTINGS ACK with a payload', bytes: raw(FrameType.SETTINGS, Flag.ACK, 0, [0, 1, 0, 0, 0, 0]), code: ErrorCode.FRAME_SIZE_ERROR, message: /SETTINGS frame of 6 octets, not 0/ },
  { name: 'PING of 7 octets', bytes: raw(FrameType.PING, 0, 0, Buffer.alloc(7)), code: ErrorCode.FRAME_SIZE_ERROR, message: /PING frame of 7 octets, not 8/ },
  { name: 'GOAWAY of 4 octets', bytes: raw(FrameType.GOAWAY, 0, 0, Buffer.alloc(4)), code: ErrorCode.FRAME_SIZE_ERROR, message: /under 8/ },
  { name: 'WINDOW_UPDATE of 3 octets', bytes: raw(FrameType.WINDOW_UPDATE, 0, 0, Buffer.alloc(3)), code: ErrorCode.FRAME_SIZE_ERROR, message: /not 4/ },
  { name: 'RST_STREAM of 5 octets', bytes: raw(FrameType.RST_STREAM, 0, 1, Buffer.alloc(5)), code: ErrorCode.FRAME_SIZE_ERROR, message: /not 4/ },
  { name: 'padding as long as the frame', bytes: raw(FrameType.DATA, Flag.PADDED, 1, [3, 0, 0]), code: ErrorCode.PROTOCOL_ERROR, message: /padding \(3\) not shorter/ },
  { name: 'a padded frame without a pad length', bytes: raw(FrameType.DATA, Flag.PADDED, 1, []), code: ErrorCode.FRAME_SIZE_ERROR, message: /without a pad length/ },
  { name: 'HEADERS too short for priority', bytes: raw(FrameType.HEADERS, Flag.PRIORITY, 1, [0, 0, 0]), code: ErrorCode.FRAME_SIZE_ERROR, message: /priority/ },
  { name: 'PUSH_PROMISE (push is disabled)', bytes: raw(FrameType.PUSH_PROMISE, Flag.END_HEADERS, 1, [0, 0, 0, 2]), code: ErrorCode.PROTOCOL_ERROR, message: /push is disabled/ },
];
for (const { name, bytes, code, message } of malformed) {
  test(`refused: ${name}`, () => {
    assert.throws(() => readAll([bytes]), (err: unknown) => err instanceof Http2ProtocolError && err.code === code && message.test(err.message));
  });
}

test('a header block is split into HEADERS and CONTINUATION frames at the peer max frame size', () => {
  const block = Buffer.alloc(40_000, 7);
  const frames = readAll(headersFrames(3, block, true, 16_384));
  assert.deepEqual(frames.map((f) => [f.type, f.flags, f.streamId, f.octets]), [
    [FrameType.HEADERS, Flag.END_STREAM, 3, 16_384],
    [FrameType.CONTINUATION, 0, 3, 16_384],
    [FrameType.CONTINUATION, Flag.END_HEADERS, 3, 7232],
  ]);
  assert.deepEqual(readAll(headersFrames(5, Buffer.alloc(16_384), false, 16_384)).map((f) => [f.type, f.flags]), [[FrameType.HEADERS, Flag.END_HEADERS]]);
  assert.deepEqual(readAll(headersFrames(5, Buffer.alloc(0), false, 16_384)).map((f) => [f.type, f.flags, f.octets]), [[FrameType.HEADERS, Flag.END_HEADERS, 0]]);
});

test('the writers lay out each frame as RFC 9113 does', () => {
  assert.equal(settingsFrame([[2, 0], [4, 0x01000000]]).toString('hex'), '00000c040000000000' + '000200000000' + '000401000000');
  assert.equal(settingsAckFrame().toString('hex'), '000000040100000000');
  assert.equal(pingAckFrame(Buffer.from('0102030405060708', 'hex')).toString('hex'), '000008060100000000' + '0102030405060708');
  assert.equal(windowUpdateFrame(0, 0xff0001).toString('hex'), '000004080000000000' + '00ff0001');
  assert.equal(rstStreamFrame(7, ErrorCode.CANCEL).toString('hex'), '000004030000000007' + '00000008');
  assert.equal(goawayFrame(0, ErrorCode.PROTOCOL_ERROR, 'no').toString('hex'), '00000a070000000000' + '0000000000000001' + '6e6f');
  assert.equal(dataFrame(1, Buffer.from('hi'), true).toString('hex'), '000002000100000001' + '6869');
});
