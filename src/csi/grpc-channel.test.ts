// The gRPC channel against a bare node:http2 server on a temp unix socket, scripted per test to
// answer the way real servers (and broken ones) do: framing, statuses in trailers or alone,
// HTTP errors, stream resets, oversize and compressed messages, deadlines, cancellation, and the
// session going away and coming back. Calls against real gRPC servers are in connection.test.ts
// (grpc-js) and the integration tests (the grpc-go mock driver).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { frameMessage, GrpcChannel } from './grpc-channel.js';
import { GrpcStatus } from './grpc-status.js';
import { callFails } from '../../test/support/grpc-calls.js';

type Handler = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, body: Buffer) => void;

interface TestServer {
  socketPath: string;
  handle(handler: Handler): void;
  requests: Array<{ headers: http2.IncomingHttpHeaders; body: Buffer }>;
  sessions: Set<http2.ServerHttp2Session>;
  listen(): Promise<void>;
  close(): Promise<void>;
}

async function startServer(t: TestContext): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'rz-grpc-'));
  const socketPath = join(dir, 'csi.sock');
  let handler: Handler = (stream) => replyOk(stream, Buffer.alloc(0));
  let server: http2.Http2Server | undefined;
  const requests: TestServer['requests'] = [];
  const sessions = new Set<http2.ServerHttp2Session>();
  const s: TestServer = {
    socketPath,
    requests,
    sessions,
    handle: (h) => (handler = h),
    async listen() {
      server = http2.createServer();
      server.on('session', (session) => {
        sessions.add(session);
        session.on('close', () => sessions.delete(session));
      });
      server.on('stream', (stream, headers) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('error', () => {});
        stream.on('end', () => {
          const body = Buffer.concat(chunks);
          requests.push({ headers, body });
          handler(stream as http2.ServerHttp2Stream, headers, body);
        });
      });
      await new Promise<void>((resolve) => server!.listen(socketPath, resolve));
    },
    async close() {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      server = undefined;
    },
  };
  await s.listen();
  t.after(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return s;
}

function replyOk(stream: http2.ServerHttp2Stream, message: Buffer): void {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(frameMessage(message));
}

function replyTrailersOnly(stream: http2.ServerHttp2Stream, code: number, message?: string): void {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(code), ...(message === undefined ? {} : { 'grpc-message': message }) }, { endStream: true });
}

function channelFor(t: TestContext, server: TestServer, options: Partial<ConstructorParameters<typeof GrpcChannel>[0]> = {}): GrpcChannel {
  const channel = new GrpcChannel({ socketPath: server.socketPath, reconnectIntervalMs: 100, ...options });
  t.after(() => channel.close());
  return channel;
}

const never = new AbortController().signal;

async function until(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('a unary call sends the gRPC request headers and one length-prefixed message, and returns the answer', async (t) => {
  const server = await startServer(t);
  server.handle((stream, _headers, body) => replyOk(stream, Buffer.concat([Buffer.from('echo:'), body.subarray(5)])));
  const channel = channelFor(t, server);
  const answer = await channel.unary('/csi.v1.Identity/Probe', Buffer.from('hello'), 2500, never);
  assert.equal(answer.toString(), 'echo:hello');
  const { headers, body } = server.requests[0]!;
  assert.equal(headers[':method'], 'POST');
  assert.equal(headers[':scheme'], 'http');
  assert.equal(headers[':path'], '/csi.v1.Identity/Probe');
  assert.equal(headers['content-type'], 'application/grpc');
  assert.equal(headers['te'], 'trailers');
  assert.match(String(headers['grpc-timeout']), /^2[45]\d\dm$/);
  assert.match(String(headers['user-agent']), /csi-resizer/);
  assert.deepEqual([...body], [0, 0, 0, 0, 5, ...Buffer.from('hello')]);
  assert.equal(channel.state, 'ready');
});

test('an empty request and an empty response are one 5-byte frame each', async (t) => {
  const server = await startServer(t);
  const channel = channelFor(t, server);
  const answer = await channel.unary('/x/Y', Buffer.alloc(0), 1000, never);
  assert.equal(answer.length, 0);
  assert.deepEqual([...server.requests[0]!.body], [0, 0, 0, 0, 0]);
});

test('a response split across many DATA chunks is put back together', async (t) => {
  const server = await startServer(t);
  const big = Buffer.alloc(300_000, 7);
  server.handle((stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    const frame = frameMessage(big);
    stream.write(frame.subarray(0, 3)); // even the 5-byte header in pieces
    stream.write(frame.subarray(3, 100));
    stream.end(frame.subarray(100));
  });
  const answer = await channelFor(t, server).unary('/x/Y', Buffer.alloc(0), 5000, never);
  assert.ok(answer.equals(big));
});

test('a status in the trailers: code and percent-decoded message', async (t) => {
  const server = await startServer(t);
  server.handle((stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '11', 'grpc-message': 'size 100%25 over %E2%9C%93' }));
    stream.end();
  });
  const err = await callFails(channelFor(t, server).unary('/x/Y', Buffer.alloc(0), 1000, never), GrpcStatus.OUT_OF_RANGE, /^size 100% over ✓$/);
  assert.equal(err.message, '11 OUT_OF_RANGE: size 100% over ✓');
  assert.equal(err.metadata['grpc-status'], '11');
});

test('trailers-only: the status in the response headers, no body', async (t) => {
  const server = await startServer(t);
  server.handle((stream) => replyTrailersOnly(stream, GrpcStatus.NOT_FOUND, 'no such volume'));
  await callFails(channelFor(t, server).unary('/x/Y', Buffer.alloc(0), 1000, never), GrpcStatus.NOT_FOUND, /^no such volume$/);
  server.handle((stream) => replyTrailersOnly(stream, GrpcStatus.UNIMPLEMENTED));
  await callFails(channelFor(t, server).unary('/x/Y', Buffer.alloc(0), 1000, never), GrpcStatus.UNIMPLEMENTED, /^$/);
});

test('an unknown grpc-status reads as Unknown', async (t) => {
  const server = await startServer(t);
  server.handle((stream) => replyTrailersOnly(stream, 42, 'future code'));
  await callFails(channelFor(t, server).unary('/x/Y', Buffer.alloc(0), 1000, never), GrpcStatus.UNKNOWN, /future code/);
});

for (const [httpStatus, code] of [[404, GrpcStatus.UNIMPLEMENTED], [503, GrpcStatus.UNAVAILABLE], [500, GrpcStatus.UNKNOWN], [400, GrpcStatus.INTERNAL]] as const) {
  test(`HTTP ${httpStatus} without grpc-status ends the call ${code}`, async (t) => {
    const server = await startServer(t);
    server.handle((stream) => {
      stream.respond({ ':status': httpStatus, 'content-type': 'text/plain' });
      stream.end('not grpc');
    });
    await callFails(channelFor(t, server).unary('/x/Y', Buffer.alloc(0), 1000, never), code, new RegExp(`HTTP status code ${httpStatus}`));
  });
}

for (const [rstCode, code] of [
  [http2.constants.NGHTTP2_REFUSED_STREAM, GrpcStatus.UNAVAILABLE],
  [http2.constants.NGHTTP2_CANCEL, GrpcStatus.CANCELLED],
  [http2.constants.NGHTTP2_ENHANCE_YOUR_CALM, GrpcStatus.RESOURCE_EXHAUSTED],
  [http2.constants.NGHTTP2_INTERNAL_ERROR, GrpcStatus.INTERNAL],
  [http2.constants.NGHTTP2_NO_ERROR, GrpcStatus.INTERNAL],
] as const) {
  test(`a stream reset with HTTP/2 code ${rstCode} before any status ends the call ${code}`, async (t) => {
    const server = await startServer(t);
    server.handle((stream) => stream.close(rstCode));
    const channel = channelFor(t, server);
    await callFails(channel.unary('/x/Y', Buffer.alloc(0), 1000, never), code);
    // The session itself is fine: the next call works.
    server.handle((stream) => replyOk(stream, Buffer.from('ok')));
    assert.equal((await channel.unary('/x/Y', Buffer.alloc(0), 1000, never)).toString(), 'ok');
  });
}

test('OK without a message, with two messages, or with a truncated one is Internal', async (t) => {
  const server = await startServer(t);
  const channel = channelFor(t, server);
  const okWith = (body: Buffer) => (stream: http2.ServerHttp2Stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(body);
  };
  server.handle(okWith(Buffer.alloc(0)));
  await callFails(channel.unary('/x/Y', Buffer.alloc(0), 1000, never), GrpcStatus.INTERNAL, /no response message/);
  server.handle(okWith(Buffer.concat([frameMessage(Buffer.from('a')), frameMessage(Buffer.from('b'))])));
  await callFails(channel.unary('/x/Y', Buffer.alloc(0), 1000, never), GrpcStatus.INTERNAL, /more than one response message/);
  server.handle(okWith(frameMessage(Buffer.from('abcdef')).subarray(0, 8)));
  await callFails(channel.unary('/x/Y', Buffer.alloc(0), 1000, never), GrpcStatus.INTERNAL, /truncated/);
});

test('a response message over 4 MiB is refused ResourceExhausted; one of exactly 4 MiB is accepted', async (t) => {
  const server = await startServer(t);
  const channel = channelFor(t, server);
  server.handle((stream) => replyOk(stream, Buffer.alloc(4 * 1024 * 1024 + 1)));
  await callFails(channel.unary('/x/Y', Buffer.alloc(0), 10_000, never), GrpcStatus.RESOURCE_EXHAUSTED, /larger than max \(4194305 vs\. 4194304\)/);
  server.handle((stream) => replyOk(stream, Buffer.alloc(4 * 1024 * 1024, 1)));
  assert.equal((await channel.unary('/x/Y', Buffer.alloc(0), 10_000, never)).length, 4 * 1024 * 1024);
});

test('a 200 response that is not gRPC (another content type, no grpc-status) is Unknown', async (t) => {
  const server = await startServer(t);
  server.handle((stream) => {
    stream.respond({ ':status': 200, 'content-type': 'text/html' });
    stream.end('<html>hello</html>');
  });
  await callFails(channelFor(t, server).unary('/x/Y', Buffer.alloc(0), 1000, never), GrpcStatus.UNKNOWN, /not gRPC/);
});

test('a compressed message (none was negotiated) or an invalid flag is Internal', async (t) => {
  const server = await startServer(t);
  const channel = channelFor(t, server);
  for (const flag of [1, 2]) {
    server.handle((stream) => {
      const frame = frameMessage(Buffer.from('zz'));
      frame[0] = flag;
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(frame);
    });
    await callFails(channel.unary('/x/Y', Buffer.alloc(0), 1000, never), GrpcStatus.INTERNAL, flag === 1 ? /compressed/ : /invalid message flag 2/);
  }
});

test('deadline: a server that never answers ends the call DeadlineExceeded at the deadline and the stream is reset', async (t) => {
  const server = await startServer(t);
  let reset: Promise<number> | undefined;
  server.handle((stream) => {
    reset = new Promise((resolve) => stream.on('close', () => resolve(stream.rstCode)));
  });
  const channel = channelFor(t, server);
  const started = Date.now();
  await callFails(channel.unary('/x/Y', Buffer.alloc(0), 300, never), GrpcStatus.DEADLINE_EXCEEDED, /Deadline exceeded after 300ms/);
  const elapsed = Date.now() - started;
  assert.ok(elapsed >= 290 && elapsed < 2000, `ended after ${elapsed} ms`);
  await until(() => reset !== undefined, 'the server to see the call');
  assert.equal(await reset, http2.constants.NGHTTP2_CANCEL);
  // What is left of the 300 ms once connected (the call started the connection).
  assert.match(String(server.requests[0]!.headers['grpc-timeout']), /^(2[5-9]\d|300)m$/);
});

test('abort: the call ends Cancelled at once and the server sees the reset; an already aborted signal sends nothing', async (t) => {
  const server = await startServer(t);
  let reset: Promise<number> | undefined;
  server.handle((stream) => {
    reset = new Promise((resolve) => stream.on('close', () => resolve(stream.rstCode)));
  });
  const channel = channelFor(t, server);
  const controller = new AbortController();
  const call = channel.unary('/x/Y', Buffer.alloc(0), 10_000, controller.signal);
  await until(() => reset !== undefined, 'the server to see the call');
  controller.abort();
  await callFails(call, GrpcStatus.CANCELLED, /Cancelled on client/);
  assert.equal(await reset, http2.constants.NGHTTP2_CANCEL);
  await callFails(channel.unary('/x/Y', Buffer.alloc(0), 10_000, AbortSignal.abort()), GrpcStatus.CANCELLED);
  assert.equal(server.requests.length, 1);
});

test('session loss: calls in flight fail Unavailable, the channel reports it and reconnects when the server is back', async (t) => {
  const server = await startServer(t);
  server.handle(() => {}); // hang
  const channel = channelFor(t, server);
  const states: string[] = [];
  channel.onStateChange((s) => states.push(s));
  const inFlight = [callFails(channel.unary('/x/A', Buffer.alloc(0), 10_000, never), GrpcStatus.UNAVAILABLE),
    callFails(channel.unary('/x/B', Buffer.alloc(0), 10_000, never), GrpcStatus.UNAVAILABLE)];
  await until(() => server.requests.length === 2, 'both calls to arrive');
  const downAt = Date.now();
  await server.close(); // the driver dies: every session destroyed, socket gone
  await Promise.all(inFlight);
  assert.ok(Date.now() - downAt < 1000, 'in-flight calls were not failed promptly');
  await until(() => channel.state !== 'ready', 'the channel to notice');
  // While the server is away a call fails fast (no waiting for the deadline).
  const failFastAt = Date.now();
  await until(() => channel.state === 'transientFailure', 'a failed reconnect attempt');
  await callFails(channel.unary('/x/C', Buffer.alloc(0), 10_000, never), GrpcStatus.UNAVAILABLE, /No connection established/);
  assert.ok(Date.now() - failFastAt < 1000);
  server.handle((stream) => replyOk(stream, Buffer.from('back')));
  await server.listen();
  await until(() => channel.state === 'ready', 'the channel to reconnect', 3000);
  assert.equal((await channel.unary('/x/D', Buffer.alloc(0), 1000, never)).toString(), 'back');
  const afterLoss = states.slice(states.indexOf('ready') + 1);
  assert.deepEqual(afterLoss.slice(0, 2), ['transientFailure', 'connecting'], states.join(' '));
  assert.equal(afterLoss.at(-1), 'ready');
});

test('GOAWAY: the call the server already took completes, the next call goes to a new session', async (t) => {
  const server = await startServer(t);
  const channel = channelFor(t, server);
  let release: (() => void) | undefined;
  server.handle((stream) => {
    // Answer later, after telling the client to go away.
    release = () => replyOk(stream, Buffer.from('finished'));
    stream.session!.goaway(http2.constants.NGHTTP2_NO_ERROR, stream.id);
  });
  const first = channel.unary('/x/A', Buffer.alloc(0), 5000, never);
  await until(() => release !== undefined, 'the first call');
  await until(() => server.sessions.size === 2 || channel.state !== 'ready', 'the client to react to GOAWAY');
  release!();
  assert.equal((await first).toString(), 'finished');
  server.handle((stream) => replyOk(stream, Buffer.from('second')));
  await until(() => channel.state === 'ready', 'the new session');
  assert.equal((await channel.unary('/x/B', Buffer.alloc(0), 5000, never)).toString(), 'second');
});

test('connecting: a call made while the first attempt runs waits for it; with no server the attempt fails and retries', async (t) => {
  const server = await startServer(t);
  const channel = channelFor(t, server);
  server.handle((stream) => replyOk(stream, Buffer.from('hi')));
  // No connect() first: the call starts the attempt and waits for it.
  assert.equal((await channel.unary('/x/Y', Buffer.alloc(0), 2000, never)).toString(), 'hi');

  const dir = mkdtempSync(join(tmpdir(), 'rz-grpc-none-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const lonely = new GrpcChannel({ socketPath: join(dir, 'none.sock'), reconnectIntervalMs: 50 });
  t.after(() => lonely.close());
  let attempts = 0;
  lonely.onStateChange((s) => {
    if (s === 'connecting') attempts++;
  });
  lonely.connect();
  await until(() => attempts >= 3, 'three attempts');
  assert.match(lonely.lastFailure, /ENOENT/);
  await callFails(lonely.unary('/x/Y', Buffer.alloc(0), 1000, never), GrpcStatus.UNAVAILABLE, /ENOENT/);
});

test('close: calls in flight end Unavailable, later calls fail, a second close does nothing', async (t) => {
  const server = await startServer(t);
  server.handle(() => {});
  const channel = channelFor(t, server);
  const call = channel.unary('/x/Y', Buffer.alloc(0), 10_000, never);
  await until(() => server.requests.length === 1, 'the call');
  channel.close();
  channel.close();
  await callFails(call, GrpcStatus.UNAVAILABLE, /Channel closed/);
  await callFails(channel.unary('/x/Y', Buffer.alloc(0), 1000, never), GrpcStatus.UNAVAILABLE, /Channel closed/);
  assert.equal(channel.state, 'shutdown');
});

test('a peer that never completes the HTTP/2 handshake: the attempt times out and is retried; close ends a waiting call', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rz-grpc-mute-'));
  const socketPath = join(dir, 'mute.sock');
  const sockets = new Set<net.Socket>();
  const mute = net.createServer((socket) => sockets.add(socket)); // accepts, says nothing
  await new Promise<void>((resolve) => mute.listen(socketPath, resolve));
  t.after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => mute.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });
  const channel = new GrpcChannel({ socketPath, reconnectIntervalMs: 20, connectAttemptTimeoutMs: 100 });
  t.after(() => channel.close());
  channel.connect();
  await until(() => sockets.size >= 2, 'a second attempt after the first timed out');
  assert.match(channel.lastFailure, /no HTTP\/2 handshake within 100ms/);
  const waiting = callFails(channel.unary('/x/Y', Buffer.alloc(0), 10_000, never), GrpcStatus.UNAVAILABLE);
  channel.close();
  const closedAt = Date.now();
  await waiting;
  assert.ok(Date.now() - closedAt < 500);
});
