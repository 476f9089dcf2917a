// The HTTP/2 client connection under the gRPC channel, against a scripted peer that writes raw
// frames (so it can break the protocol on purpose) and against node:http2's server (nghttp2, an
// independent implementation: Huffman-coded headers, its flow control and concurrency limit).
// Bad input from a server ends the connection with GOAWAY and a message saying what was wrong,
// and every call on it ends UNAVAILABLE with that message; nothing reaches the process.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { frameMessage, GrpcChannel } from '../grpc-channel.js';
import { GrpcStatus } from '../grpc-status.js';
import { callFails } from '../../../test/support/grpc-calls.js';
import { dataFrame, ErrorCode, Flag, type Frame, FrameReader, FrameType, goawayFrame, headersFrames, rstStreamFrame, Setting, settingsFrame, windowUpdateFrame } from './frames.js';
import { encodeHeaderBlock, HpackDecoder, type HeaderField } from './hpack.js';

const never = new AbortController().signal;

function tempSocket(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'rz-h2-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'peer.sock');
}

async function until(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A server that speaks raw frames: it records what the client sends and writes what a test says. */
interface RawPeer {
  socketPath: string;
  /** Frames from the client's connection, after its preface. */
  frames: Frame[];
  requestHeaders: Map<number, HeaderField[]>;
  send(...bytes: Buffer[]): void;
  closed(): boolean;
}

async function startRawPeer(t: TestContext, options: { settings?: Array<[number, number]>; preface?: Buffer; prefaceDelayMs?: number } = {}): Promise<RawPeer> {
  const socketPath = tempSocket(t);
  const frames: Frame[] = [];
  const requestHeaders = new Map<number, HeaderField[]>();
  const decoder = new HpackDecoder();
  let socket: net.Socket | undefined;
  let closed = false;
  const server = net.createServer((s) => {
    socket = s;
    s.on('error', () => {});
    s.on('close', () => (closed = true));
    const preface = options.preface ?? settingsFrame(options.settings ?? []);
    if (options.prefaceDelayMs === undefined) s.write(preface);
    else setTimeout(() => s.write(preface), options.prefaceDelayMs);
    const reader = new FrameReader();
    let clientPreface = 24;
    s.on('data', (chunk: Buffer) => {
      if (clientPreface > 0) {
        const skip = Math.min(clientPreface, chunk.length);
        clientPreface -= skip;
        chunk = chunk.subarray(skip);
      }
      reader.push(chunk, (frame) => {
        frames.push({ ...frame, payload: Buffer.from(frame.payload) });
        if (frame.type === FrameType.HEADERS) requestHeaders.set(frame.streamId, decoder.decode(frame.payload));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  t.after(async () => {
    socket?.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    socketPath,
    frames,
    requestHeaders,
    send: (...bytes) => socket?.write(Buffer.concat(bytes)),
    closed: () => closed,
  };
}

function channelTo(t: TestContext, socketPath: string, options: Partial<ConstructorParameters<typeof GrpcChannel>[0]> = {}): GrpcChannel {
  const channel = new GrpcChannel({ socketPath, reconnectIntervalMs: 50, ...options });
  t.after(() => channel.close());
  return channel;
}

const okHeaders = encodeHeaderBlock([[':status', '200'], ['content-type', 'application/grpc']]);
const okTrailers = encodeHeaderBlock([['grpc-status', '0']]);
/** A whole gRPC answer on a stream, as raw frames. */
function answer(streamId: number, message: Buffer): Buffer {
  return Buffer.concat([...headersFrames(streamId, okHeaders, false, 16_384), dataFrame(streamId, frameMessage(message), false), ...headersFrames(streamId, okTrailers, true, 16_384)]);
}
const goawaysOf = (peer: RawPeer) => peer.frames.filter((f) => f.type === FrameType.GOAWAY).map((f) => ({ code: f.payload.readUInt32BE(4), debug: f.payload.toString('utf8', 8) }));

test('the client opens with the preface, SETTINGS (no push, a 16 MiB window), a connection WINDOW_UPDATE, and acknowledges SETTINGS and PING', async (t) => {
  const peer = await startRawPeer(t);
  const channel = channelTo(t, peer.socketPath);
  channel.connect();
  await until(() => channel.state === 'ready', 'ready');
  const [settings, windowUpdate] = peer.frames;
  assert.equal(settings!.type, FrameType.SETTINGS);
  assert.deepEqual([settings!.payload.readUInt16BE(0), settings!.payload.readUInt32BE(2), settings!.payload.readUInt16BE(6), settings!.payload.readUInt32BE(8)], [Setting.ENABLE_PUSH, 0, Setting.INITIAL_WINDOW_SIZE, 16 * 1024 * 1024]);
  assert.equal(windowUpdate!.type, FrameType.WINDOW_UPDATE);
  assert.equal(windowUpdate!.payload.readUInt32BE(0), 16 * 1024 * 1024 - 65_535);
  await until(() => peer.frames.some((f) => f.type === FrameType.SETTINGS && f.flags & Flag.ACK), 'SETTINGS ACK');
  peer.send(Buffer.from('000008060000000000' + '0102030405060708', 'hex'));
  await until(() => peer.frames.some((f) => f.type === FrameType.PING), 'PING ACK');
  const ping = peer.frames.find((f) => f.type === FrameType.PING)!;
  assert.equal(ping.flags, Flag.ACK);
  assert.equal(ping.payload.toString('hex'), '0102030405060708');
});

test('a raw answer: padded DATA, trailers split over CONTINUATION frames, priority and unknown frames ignored', async (t) => {
  const peer = await startRawPeer(t);
  const channel = channelTo(t, peer.socketPath);
  const call = channel.unary('/x/Y', Buffer.from('q'), 2000, never);
  await until(() => peer.requestHeaders.has(1), 'the request');
  const headers = Object.fromEntries(peer.requestHeaders.get(1)!);
  assert.equal(headers[':path'], '/x/Y');
  assert.equal(headers[':authority'], 'localhost');
  const message = frameMessage(Buffer.from('padded answer'));
  const padded = Buffer.concat([Buffer.from([4]), message, Buffer.alloc(4)]);
  const dataHeader = Buffer.from([0, 0, padded.length, FrameType.DATA, Flag.PADDED, 0, 0, 0, 1]);
  const trailers = encodeHeaderBlock([['grpc-status', '0'], ['x-note', 'n'.repeat(100)]]);
  peer.send(
    ...headersFrames(1, okHeaders, false, 16_384),
    Buffer.from('000005020000000001' + '0000000010', 'hex'), // PRIORITY
    Buffer.from('000003fa0000000000' + '010203', 'hex'), // unknown type 0xfa
    dataHeader, padded,
    ...headersFrames(1, trailers, true, 40), // HEADERS + CONTINUATION x 2
  );
  assert.equal((await call).toString(), 'padded answer');
});

for (const bad of [
  { name: 'an oversized frame', bytes: Buffer.concat([Buffer.from([0, 0x4e, 0x20, FrameType.DATA, 0, 0, 0, 0, 1]), Buffer.alloc(20_000)]), code: ErrorCode.FRAME_SIZE_ERROR, message: /frame of 20000 octets, over the 16384 allowed/ },
  { name: 'a HEADERS block that does not decode', bytes: headersFrames(1, Buffer.from([0xbf, 0x80]), false, 16_384)[0]!, code: ErrorCode.COMPRESSION_ERROR, message: /header block from the server does not decode: header index 63/ },
  { name: 'RST_STREAM on stream 0', bytes: rstStreamFrame(0, 0), code: ErrorCode.PROTOCOL_ERROR, message: /RST_STREAM frame on stream 0/ },
  { name: 'DATA on a stream never opened', bytes: dataFrame(99, Buffer.from('x'), false), code: ErrorCode.PROTOCOL_ERROR, message: /DATA on stream 99, which was never opened/ },
  { name: 'HEADERS on a server-initiated stream', bytes: headersFrames(2, okHeaders, false, 16_384)[0]!, code: ErrorCode.PROTOCOL_ERROR, message: /stream 2, which only a server could open/ },
  { name: 'a frame in the middle of a header block', bytes: Buffer.concat([Buffer.from([0, 0, 1, FrameType.HEADERS, 0, 0, 0, 0, 1, 0x88]), dataFrame(1, Buffer.alloc(1), false)]), code: ErrorCode.PROTOCOL_ERROR, message: /inside the header block of stream 1/ },
  { name: 'a connection WINDOW_UPDATE over 2^31-1', bytes: windowUpdateFrame(0, 0x7fffffff), code: ErrorCode.FLOW_CONTROL_ERROR, message: /connection window over 2\^31-1/ },
  { name: 'MAX_FRAME_SIZE out of range', bytes: settingsFrame([[Setting.MAX_FRAME_SIZE, 100]]), code: ErrorCode.PROTOCOL_ERROR, message: /SETTINGS_MAX_FRAME_SIZE 100 out of range/ },
]) {
  test(`bad input, ${bad.name}: GOAWAY ${bad.code} to the server, every call on the connection ends UNAVAILABLE saying why, the channel reconnects`, async (t) => {
    const peer = await startRawPeer(t);
    const channel = channelTo(t, peer.socketPath);
    const calls = [channel.unary('/x/A', Buffer.alloc(0), 5000, never), channel.unary('/x/B', Buffer.alloc(0), 5000, never)];
    await until(() => peer.requestHeaders.size === 2, 'both calls');
    peer.send(bad.bytes);
    for (const call of calls) await callFails(call, GrpcStatus.UNAVAILABLE, bad.message);
    await until(() => goawaysOf(peer).length === 1, 'GOAWAY');
    assert.equal(goawaysOf(peer)[0]!.code, bad.code);
    assert.match(goawaysOf(peer)[0]!.debug, bad.message);
    await until(() => peer.closed(), 'the connection to close');
    await until(() => channel.state === 'ready', 'a new connection');
  });
}

test('garbage instead of HTTP/2: the attempt fails with a clear message and is retried', async (t) => {
  const peer = await startRawPeer(t, { preface: Buffer.from('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n') });
  const channel = channelTo(t, peer.socketPath);
  const states: string[] = [];
  channel.onStateChange((s) => states.push(s));
  await callFails(channel.unary('/x/Y', Buffer.alloc(0), 2000, never), GrpcStatus.UNAVAILABLE, /before its SETTINGS \(is it an HTTP\/2 server\?\).*FRAME_SIZE_ERROR/);
  await until(() => states.filter((s) => s === 'connecting').length >= 2, 'a second attempt');
});

test('a frame other than SETTINGS first is refused', async (t) => {
  const peer = await startRawPeer(t, { preface: Buffer.from('000008060000000000' + '0000000000000000', 'hex') });
  const channel = channelTo(t, peer.socketPath);
  await callFails(channel.unary('/x/Y', Buffer.alloc(0), 2000, never), GrpcStatus.UNAVAILABLE, /frame of type 6 before the server's SETTINGS/);
});

test('GOAWAY: calls above the last stream id end UNAVAILABLE at once, the one below completes, then the connection closes', async (t) => {
  const peer = await startRawPeer(t);
  const channel = channelTo(t, peer.socketPath);
  const first = channel.unary('/x/A', Buffer.alloc(0), 5000, never);
  const second = channel.unary('/x/B', Buffer.alloc(0), 5000, never);
  await until(() => peer.requestHeaders.size === 2, 'both calls');
  peer.send(goawayFrame(1, ErrorCode.NO_ERROR, 'restarting'));
  await callFails(second, GrpcStatus.UNAVAILABLE, /GOAWAY \(NO_ERROR: restarting\) before processing the call/);
  assert.ok(!peer.closed());
  peer.send(answer(1, Buffer.from('done')));
  assert.equal((await first).toString(), 'done');
  await until(() => peer.closed(), 'the connection to close after its last stream');
});

test('a stream error (DATA before the response headers) resets that stream only', async (t) => {
  const peer = await startRawPeer(t);
  const channel = channelTo(t, peer.socketPath);
  const first = channel.unary('/x/A', Buffer.alloc(0), 5000, never);
  const second = channel.unary('/x/B', Buffer.alloc(0), 5000, never);
  await until(() => peer.requestHeaders.size === 2, 'both calls');
  peer.send(dataFrame(1, Buffer.from('early'), false), answer(3, Buffer.from('fine')));
  await callFails(first, GrpcStatus.INTERNAL, /DATA before the response headers \(PROTOCOL_ERROR\)/);
  assert.equal((await second).toString(), 'fine');
  await until(() => peer.frames.some((f) => f.type === FrameType.RST_STREAM && f.streamId === 1), 'the reset');
  assert.equal(peer.frames.find((f) => f.type === FrameType.RST_STREAM)!.payload.readUInt32BE(0), ErrorCode.PROTOCOL_ERROR);
});

test('send-side flow control: a request larger than the peer window waits for WINDOW_UPDATE; frames split at the peer max frame size', async (t) => {
  const peer = await startRawPeer(t, { settings: [[Setting.INITIAL_WINDOW_SIZE, 10]] });
  const channel = channelTo(t, peer.socketPath);
  const dataOf = (id: number) => peer.frames.filter((f) => f.type === FrameType.DATA && f.streamId === id);
  const call = channel.unary('/x/A', Buffer.alloc(100, 1), 5000, never);
  await until(() => dataOf(1).length === 1, 'the first 10 octets');
  assert.equal(dataOf(1)[0]!.payload.length, 10);
  peer.send(windowUpdateFrame(1, 50));
  await until(() => dataOf(1).length === 2, 'the next 50 octets');
  assert.equal(dataOf(1)[1]!.payload.length, 50);
  assert.equal(dataOf(1)[1]!.flags & Flag.END_STREAM, 0);
  // A SETTINGS change of the initial window applies to open streams too (10 -> 100: +90).
  peer.send(settingsFrame([[Setting.INITIAL_WINDOW_SIZE, 100]]));
  await until(() => dataOf(1).length === 3, 'the rest');
  assert.equal(dataOf(1)[2]!.payload.length, 45);
  assert.equal(dataOf(1)[2]!.flags & Flag.END_STREAM, Flag.END_STREAM);
  assert.deepEqual(Buffer.concat(dataOf(1).map((f) => f.payload)), frameMessage(Buffer.alloc(100, 1)));
  peer.send(answer(1, Buffer.from('ok')));
  assert.equal((await call).toString(), 'ok');

  // The connection window (65535, never raised by this peer) now holds 65535 - 105.
  peer.send(settingsFrame([[Setting.INITIAL_WINDOW_SIZE, 1 << 20]]));
  const acks = () => peer.frames.filter((f) => f.type === FrameType.SETTINGS && f.flags & Flag.ACK).length;
  await until(() => acks() === 3, 'the new initial window to be taken');
  const big = channel.unary('/x/B', Buffer.alloc(70_000, 2), 5000, never);
  await until(() => dataOf(3).reduce((n, f) => n + f.payload.length, 0) === 65_535 - 105, 'the connection window');
  assert.deepEqual(dataOf(3).map((f) => f.payload.length), [16_384, 16_384, 16_384, 16_278]);
  peer.send(windowUpdateFrame(0, 10_000));
  await until(() => dataOf(3).some((f) => f.flags & Flag.END_STREAM), 'the end of the request');
  assert.equal(dataOf(3).reduce((n, f) => n + f.payload.length, 0), 70_005);
  peer.send(answer(3, Buffer.from('big ok')));
  assert.equal((await big).toString(), 'big ok');
});

test('receive-side flow control: a large answer is taken whole and the windows are handed back as data is consumed', async (t) => {
  const peer = await startRawPeer(t, { settings: [[Setting.MAX_FRAME_SIZE, 16_384]] });
  const channel = channelTo(t, peer.socketPath, { maxReceiveMessageBytes: 32 * 1024 * 1024 });
  const size = 20 * 1024 * 1024;
  const call = channel.unary('/x/A', Buffer.alloc(0), 20_000, never);
  await until(() => peer.requestHeaders.size === 1, 'the call');
  const body = frameMessage(Buffer.alloc(size, 3));
  const frames: Buffer[] = [...headersFrames(1, okHeaders, false, 16_384)];
  for (let at = 0; at < body.length; at += 16_384) frames.push(dataFrame(1, body.subarray(at, at + 16_384), false));
  // A peer may not send past the window: 16 MiB; the rest after the client's WINDOW_UPDATEs.
  const windowOctets = 16 * 1024 * 1024;
  peer.send(...frames.slice(0, 1 + windowOctets / 16_384));
  await until(() => peer.frames.filter((f) => f.type === FrameType.WINDOW_UPDATE && f.streamId === 1).length > 0, 'a stream WINDOW_UPDATE');
  const updates = peer.frames.filter((f) => f.type === FrameType.WINDOW_UPDATE && f.payload.readUInt32BE(0) === 8 * 1024 * 1024);
  assert.deepEqual(updates.map((f) => f.streamId).sort(), [0, 1]);
  peer.send(...frames.slice(1 + windowOctets / 16_384), ...headersFrames(1, okTrailers, true, 16_384));
  assert.equal((await call).length, size);
});

async function startNodeServer(t: TestContext, settings: http2.Settings, onStream: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void): Promise<string> {
  const socketPath = tempSocket(t);
  const server = http2.createServer({ settings });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => sessions.add(s));
  server.on('stream', onStream);
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  t.after(async () => {
    for (const s of sessions) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return socketPath;
}

test('nghttp2: Huffman-coded trailers with every printable ASCII character and latin1 octets arrive exactly', async (t) => {
  const printable = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)).join('');
  const trailers = { 'grpc-status': '5', 'grpc-message': 'no%20such%20volume', 'x-printable': printable, 'x-tab': 'a\tb', 'x-repeat': 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee' };
  const socketPath = await startNodeServer(t, {}, (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    stream.end();
  });
  const channel = channelTo(t, socketPath);
  for (let i = 0; i < 3; i++) {
    // Three times: the second and third come from nghttp2's dynamic table.
    const err = await callFails(channel.unary('/x/Y', Buffer.alloc(0), 2000, never), GrpcStatus.NOT_FOUND, /^no such volume$/);
    assert.equal(err.metadata['x-printable'], printable);
    assert.equal(err.metadata['x-tab'], 'a\tb');
    assert.equal(err.metadata['x-repeat'], trailers['x-repeat']);
  }
});

test('nghttp2: the peer MAX_CONCURRENT_STREAMS holds further calls in a queue; a 1 MiB request crosses its 64 KiB windows', async (t) => {
  let active = 0;
  let maxActive = 0;
  const socketPath = await startNodeServer(t, { maxConcurrentStreams: 1 }, (stream) => {
    active++;
    maxActive = Math.max(maxActive, active);
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('close', () => active--);
    stream.on('end', () => {
      const length = Buffer.concat(chunks).length;
      setTimeout(() => {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        stream.end(frameMessage(Buffer.from(String(length))));
      }, 20);
    });
  });
  const channel = channelTo(t, socketPath);
  const answers = await Promise.all([
    channel.unary('/x/A', Buffer.alloc(1024 * 1024, 1), 5000, never),
    channel.unary('/x/B', Buffer.alloc(10), 5000, never),
    channel.unary('/x/C', Buffer.alloc(20), 5000, never),
  ]);
  assert.deepEqual(answers.map((a) => a.toString()), [String(1024 * 1024 + 5), '15', '25']);
  assert.equal(maxActive, 1);
});

test('a process whose only work is a CSI call stays alive while the call connects and runs, then exits', async (t) => {
  // A slow server: its SETTINGS come 200 ms after the connection, its answer 200 ms after the
  // request; in between the client process has nothing else to do.
  const peer = await startRawPeer(t, { prefaceDelayMs: 200 });
  const socketPath = peer.socketPath;
  const dir = mkdtempSync(join(tmpdir(), 'rz-h2-child-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(dir, 'one-call.mts');
  writeFileSync(script, `
import { GrpcChannel } from ${JSON.stringify(fileURLToPath(new URL('../grpc-channel.ts', import.meta.url)))};
const channel = new GrpcChannel({ socketPath: ${JSON.stringify(socketPath)} });
const answer = await channel.unary('/x/Y', Buffer.alloc(0), 5000, new AbortController().signal);
process.stdout.write(answer.toString());
`);
  const answered = (async () => {
    await until(() => peer.requestHeaders.has(1), 'the request', 15_000);
    await new Promise((r) => setTimeout(r, 200));
    peer.send(answer(1, Buffer.from('answered')));
  })();
  // Exit code 13 and "unsettled top-level await" if nothing held the process while it waited.
  const child = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], { cwd: fileURLToPath(new URL('../../..', import.meta.url)), encoding: 'utf8', timeout: 20_000 });
  await answered;
  assert.equal(child.stdout, 'answered');
});
