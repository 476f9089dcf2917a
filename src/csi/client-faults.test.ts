// The CSI client against drivers that break the connection or the protocol: what must hold
// whatever gRPC library is underneath. Each test talks to the CsiClient port only; the driver is
// the fault driver behind a frame-aware proxy (test/support/h2-fault-proxy.ts) or a gRPC server
// written on node:http2 (test/support/grpc-h2-server.ts) that does what gRPC libraries will not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { status } from '@grpc/grpc-js';
import { create, toBinary } from '@bufbuild/protobuf';
import { silentLogger } from '../observability/log/logger.js';
import { createMetrics } from '../observability/metrics.js';
import { FaultDriver } from '../../test/fakes/fault-driver.js';
import { H2FaultProxy } from '../../test/support/h2-fault-proxy.js';
import { answer, fail, GrpcH2Server, type GrpcH2Handler } from '../../test/support/grpc-h2-server.js';
import { encodeFrame, Flag, FrameType, grpcFrame, literalHeaderBlock } from '../../test/support/h2-frames.js';
import { eventually } from '../../test/support/eventually.js';
import { GrpcCsiClient } from './client.js';
import { CsiError } from './errors.js';
import { failure } from '../../test/support/csi-failure.js';
import { ControllerGetCapabilitiesResponseSchema, ControllerServiceCapability_RPC_Type } from './proto/gen/csi_pb.js';

const never = new AbortController().signal;
const CAPABILITIES = '/csi.v1.Controller/ControllerGetCapabilities';
const MiB = 1024 * 1024;

type After = { after(fn: () => unknown): void };

async function startClient(
  t: After,
  address: string,
  timeoutMs = 2000,
  connectAttemptTimeoutMs?: number,
  connectionLossGraceMs?: number,
): Promise<GrpcCsiClient> {
  const client = await GrpcCsiClient.start(
    { address, timeoutMs, log: silentLogger, metrics: createMetrics(), probeIntervalMs: 50, connectAttemptTimeoutMs, connectionLossGraceMs },
    never,
  );
  t.after(() => client.close());
  return client;
}

async function proxiedDriver(t: After): Promise<{ driver: FaultDriver; proxy: H2FaultProxy }> {
  const driver = await FaultDriver.start();
  t.after(() => driver.stop());
  const proxy = await H2FaultProxy.start(driver.socketPath);
  t.after(() => proxy.close());
  return { driver, proxy };
}

async function h2Driver(t: After, handler: GrpcH2Handler): Promise<GrpcH2Server> {
  const server = await GrpcH2Server.start(handler);
  t.after(() => server.stop());
  return server;
}

const capabilitiesAnswer = toBinary(
  ControllerGetCapabilitiesResponseSchema,
  create(ControllerGetCapabilitiesResponseSchema, {
    capabilities: [{ type: { case: 'rpc', value: { type: ControllerServiceCapability_RPC_Type.EXPAND_VOLUME } } }],
  }),
);

// A DATA frame on stream 0 is a connection error (PROTOCOL_ERROR) for the client; an empty
// SETTINGS frame with a bad length is another.
const brokenConnections: Array<{ name: string; breakAfterResponse: (proxy: H2FaultProxy) => void }> = [
  {
    name: 'a protocol error (DATA on stream 0) right behind the response',
    breakAfterResponse: (proxy) => proxy.afterNextResponse(() => encodeFrame(FrameType.DATA, 0, 0, Buffer.from('bad'))),
  },
  {
    name: 'a malformed SETTINGS frame right behind the response',
    breakAfterResponse: (proxy) => proxy.afterNextResponse(() => encodeFrame(FrameType.SETTINGS, 0, 0, Buffer.alloc(5))),
  },
  {
    name: 'the socket closed right behind the response',
    breakAfterResponse: (proxy) =>
      proxy.afterNextResponse((connection) => {
        setImmediate(() => connection.client.end());
      }),
  },
];

for (const broken of brokenConnections) {
  test(`after ${broken.name}, the next call goes out on a new connection and succeeds`, async (t) => {
    const { proxy } = await proxiedDriver(t);
    const client = await startClient(t, `unix://${proxy.socketPath}`);
    for (let round = 1; round <= 5; round++) {
      broken.breakAfterResponse(proxy);
      await client.getControllerCapabilities(never);
      // Made in the same turn as the answer above arrived: the connection is already broken.
      const caps = await client.getControllerCapabilities(never).catch((err: unknown) => assert.fail(`round ${round}: ${String(err)}`));
      assert.equal(caps.expandVolume, true);
    }
    assert.ok(proxy.accepted >= 6, `only ${proxy.accepted} connections for 5 broken ones`);
  });
}

test('after the driver restarted, the next call goes out on a new connection and succeeds', async (t) => {
  const driver = await FaultDriver.start();
  t.after(() => driver.stop());
  const client = await startClient(t, driver.address);
  for (let round = 1; round <= 3; round++) {
    await driver.restart();
    const caps = await client.getControllerCapabilities(never).catch((err: unknown) => assert.fail(`round ${round}: ${String(err)}`));
    assert.equal(caps.expandVolume, true);
  }
});

// A driver's own status arrives with its response headers, either before it (a status in
// trailers) or with it (Trailers-Only, as grpc-go, grpc-js and C-core servers send an error).
const driverFailures: Array<{ name: string; code: status; answer: (stream: http2.ServerHttp2Stream) => void }> = [
  { name: 'Unavailable, Trailers-Only', code: status.UNAVAILABLE, answer: (stream) => fail(stream, status.UNAVAILABLE, 'driver busy') },
  { name: 'Internal, Trailers-Only', code: status.INTERNAL, answer: (stream) => fail(stream, status.INTERNAL, 'driver busy') },
  {
    name: 'Unavailable in trailers after headers',
    code: status.UNAVAILABLE,
    answer: (stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': String(status.UNAVAILABLE), 'grpc-message': 'driver busy' }));
      stream.end();
    },
  },
];

for (const { name, code, answer: fails } of driverFailures) {
  test(`a driver's own ${name}: returned at once, without the connection-loss grace, and not sent again`, async (t) => {
    const server = await h2Driver(t, (call) => fails(call.stream));
    // A grace far beyond the call's bound below: waiting for it would fail the test.
    const client = await startClient(t, server.address, 60_000, undefined, 60_000);
    const started = Date.now();
    const err = await failure(client.getControllerCapabilities(never));
    assert.ok(Date.now() - started < 30_000, `ended after ${Date.now() - started} ms`);
    assert.equal(err.code, code, err.message);
    assert.equal(err.details, 'driver busy');
    assert.equal(server.count(CAPABILITIES), 1);
  });
}

test('a driver that resets a call with RST_STREAM INTERNAL_ERROR on a healthy connection: Internal after the grace, not sent again', async (t) => {
  const server = await h2Driver(t, (call) => call.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
  const client = await startClient(t, server.address, 5000, undefined, 100);
  const err = await failure(client.getControllerCapabilities(never));
  assert.equal(err.code, status.INTERNAL, err.message);
  assert.equal(server.count(CAPABILITIES), 1);
  assert.equal(client.connectionState, 'ready');
});

test('a call refused with RST_STREAM REFUSED_STREAM is sent again once and succeeds', async (t) => {
  const server = await h2Driver(t, (call) => {
    if (call.index === 0) call.stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
    else answer(call.stream, capabilitiesAnswer);
  });
  const client = await startClient(t, server.address);
  assert.equal((await client.getControllerCapabilities(never)).expandVolume, true);
  assert.equal(server.count(CAPABILITIES), 2);
});

test('a call refused twice is not sent a third time: it fails Unavailable, non-final', async (t) => {
  const server = await h2Driver(t, (call) => call.stream.close(http2.constants.NGHTTP2_REFUSED_STREAM));
  const client = await startClient(t, server.address);
  const err = await failure(client.getControllerCapabilities(never));
  assert.equal(err.code, status.UNAVAILABLE, err.message);
  assert.equal(err.failure, 'inProgress');
  assert.equal(server.count(CAPABILITIES), 2);
});

test('a call above the last stream id of a GOAWAY is sent again on a new connection and succeeds', async (t) => {
  const { driver, proxy } = await proxiedDriver(t);
  const client = await startClient(t, `unix://${proxy.socketPath}`);
  let refused: number | undefined;
  proxy.onClientFrame = (frame, connection) => {
    if (frame.streamId === 0) return 'forward';
    if (refused === undefined && frame.type === FrameType.HEADERS) {
      refused = frame.streamId;
      // A graceful restart: the driver took nothing after the previous stream.
      connection.client.write(encodeFrame(FrameType.GOAWAY, 0, 0, Buffer.concat([uint32(frame.streamId - 2), uint32(0)])));
    }
    return frame.streamId === refused ? 'drop' : 'forward';
  };
  assert.equal((await client.getControllerCapabilities(never)).expandVolume, true);
  assert.equal(driver.callsOf('ControllerGetCapabilities').length, 1);
  assert.equal(proxy.accepted, 2);
});

test('a response message over 4 MiB ends the call ResourceExhausted; one of exactly 4 MiB is taken', async (t) => {
  // An unknown field 15 (tag 0x7a) whose length takes 4 bytes as a varint fills the rest.
  const fieldBytes = 4 * MiB - 1 - 4;
  const exactly4MiB = Buffer.concat([Buffer.from([0x7a]), varint(fieldBytes), Buffer.alloc(fieldBytes)]);
  assert.equal(exactly4MiB.length, 4 * MiB);
  const server = await h2Driver(t, (call) => {
    if (call.index === 0) answer(call.stream, Buffer.alloc(4 * MiB + 1));
    else answer(call.stream, exactly4MiB);
  });
  const client = await startClient(t, server.address);
  const err = await failure(client.getControllerCapabilities(never));
  assert.equal(err.code, status.RESOURCE_EXHAUSTED, err.message);
  assert.match(err.details, /larger than max/i);
  assert.equal((await client.getControllerCapabilities(never)).expandVolume, false);
});

test('two response messages on a unary call end it with a clear status', async (t) => {
  const server = await h2Driver(t, (call) => {
    call.stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    call.stream.on('wantTrailers', () => call.stream.sendTrailers({ 'grpc-status': '0' }));
    call.stream.end(Buffer.concat([grpcFrame(capabilitiesAnswer), grpcFrame(capabilitiesAnswer)]));
  });
  const client = await startClient(t, server.address);
  const err = await failure(client.getControllerCapabilities(never));
  // grpc-go's code for it (grpc-js alone: Unimplemented).
  assert.equal(err.code, status.INTERNAL, err.message);
  assert.equal(err.details, 'grpc: cardinality violation: the driver sent a second response message on a unary call');
});

// grpc-go ends each of these Internal; grpc-js alone says Unimplemented, "No message received".
const withoutResponse: Array<{ name: string; body: Buffer }> = [
  { name: 'status OK without a response message', body: Buffer.alloc(0) },
  { name: 'status OK after half a message', body: grpcFrame(Buffer.alloc(10), 0, 100) },
  { name: 'status OK after part of a message prefix', body: Buffer.from([0, 0, 0]) },
];

for (const { name, body } of withoutResponse) {
  test(`${name}: Internal, as grpc-go reports it`, async (t) => {
    const server = await h2Driver(t, (call) => {
      call.stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      call.stream.on('wantTrailers', () => call.stream.sendTrailers({ 'grpc-status': '0' }));
      call.stream.end(body);
    });
    const client = await startClient(t, server.address);
    const err = await failure(client.getControllerCapabilities(never));
    assert.equal(err.code, status.INTERNAL, err.message);
    assert.equal(err.details, 'grpc: cardinality violation: the driver ended the call OK without a (complete) response message');
    assert.equal(err.failure, 'final');
  });
}

// grpc-js refuses these before decoding and, for the first three, hands over a status without
// code or details; each must reach the port with grpc-go's code and a message that says why.
const undecodableAnswers: Array<{ name: string; headers: http2.OutgoingHttpHeaders; message: Buffer; code: status; details: RegExp }> = [
  {
    name: 'a message flagged compressed without grpc-encoding',
    headers: {},
    message: grpcFrame(capabilitiesAnswer, 1),
    code: status.INTERNAL,
    details: /flagged compressed, but its grpc-encoding is identity, absent or not one of deflate and gzip/,
  },
  {
    name: 'a message flagged compressed under grpc-encoding identity',
    headers: { 'grpc-encoding': 'identity' },
    message: grpcFrame(capabilitiesAnswer, 1),
    code: status.INTERNAL,
    details: /flagged compressed, but its grpc-encoding is identity/,
  },
  {
    name: 'a message compressed with an encoding grpc-js does not know (snappy)',
    headers: { 'grpc-encoding': 'snappy' },
    message: grpcFrame(capabilitiesAnswer, 1),
    code: status.INTERNAL,
    details: /cannot decompress/,
  },
  {
    name: 'a gzip message that is not gzip',
    headers: { 'grpc-encoding': 'gzip' },
    message: grpcFrame(capabilitiesAnswer, 1),
    code: status.INTERNAL,
    details: /decompress gzip/,
  },
];

for (const undecodable of undecodableAnswers) {
  test(`${undecodable.name}: ${status[undecodable.code]} with a message that says why, never a status without a code`, async (t) => {
    const server = await h2Driver(t, (call) => {
      call.stream.respond({ ':status': 200, 'content-type': 'application/grpc', ...undecodable.headers }, { waitForTrailers: true });
      call.stream.on('wantTrailers', () => call.stream.sendTrailers({ 'grpc-status': '0' }));
      call.stream.end(undecodable.message);
    });
    const metrics = createMetrics();
    const client = await GrpcCsiClient.start({ address: server.address, timeoutMs: 2000, log: silentLogger, metrics, probeIntervalMs: 50 }, never);
    t.after(() => client.close());
    const err = await failure(client.getControllerCapabilities(never));
    assert.equal(err.code, undecodable.code, err.message);
    assert.match(err.details, undecodable.details);
    assert.doesNotMatch(err.message, /undefined/);
    const labels = (await metrics.csiOperations.get()).values
      .filter((v) => v.metricName === 'csi_sidecar_operations_seconds_count' && v.labels['method_name'] === CAPABILITIES)
      .map((v) => v.labels['grpc_status_code']);
    assert.deepEqual(labels, ['Internal']);
  });
}

// What grpc-go's client makes of each grpc-status: [sent, code, Go's name of it, details].
const statusCodes: Array<[string, number, string, RegExp]> = [
  ['abc', status.UNKNOWN, 'Unknown', /^transport: malformed grpc-status/],
  ['99999999999', status.UNKNOWN, 'Unknown', /^transport: malformed grpc-status/],
  ['99', 99, 'Code(99)', /^odd$/],
  ['-1', 4294967295, 'Code(4294967295)', /^odd$/],
];

for (const [sent, code, codeName, details] of statusCodes) {
  test(`grpc-status ${sent} is ${codeName}, final, as grpc-go reads it`, async (t) => {
    const server = await h2Driver(t, (call) => {
      call.stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': sent, 'grpc-message': 'odd' }, { endStream: true });
    });
    const metrics = createMetrics();
    const client = await GrpcCsiClient.start({ address: server.address, timeoutMs: 2000, log: silentLogger, metrics, probeIntervalMs: 50 }, never);
    t.after(() => client.close());
    const err = await failure(client.getControllerCapabilities(never));
    assert.equal(err.code, code, err.message);
    assert.equal(err.codeName, codeName);
    assert.match(err.details, details);
    assert.equal(err.message, `rpc error: code = ${codeName} desc = ${err.details}`);
    assert.equal(err.failure, 'final');
    const labels = (await metrics.csiOperations.get()).values
      .filter((v) => v.metricName === 'csi_sidecar_operations_seconds_count' && v.labels['method_name'] === CAPABILITIES)
      .map((v) => v.labels['grpc_status_code']);
    assert.deepEqual(labels, [codeName]);
  });
}

test("a driver's RST_STREAM CANCEL before the deadline stays Cancelled, non-final", async (t) => {
  const server = await h2Driver(t, (call) => call.stream.close(http2.constants.NGHTTP2_CANCEL));
  const client = await startClient(t, server.address, 5000);
  const started = Date.now();
  const err = await failure(client.getControllerCapabilities(never));
  assert.ok(Date.now() - started < 4000, 'ended by the driver, not by the deadline');
  assert.equal(err.code, status.CANCELLED, err.message);
  assert.equal(err.failure, 'inProgress');
});

test("a driver that resets with CANCEL when its grpc-timeout runs out, as grpc-go's server does: DeadlineExceeded, as grpc-go's client reports it", async (t) => {
  const server = await h2Driver(t, (call) => {
    const timeout = /^(\d+)m$/.exec(String(call.headers['grpc-timeout']));
    assert.ok(timeout, `grpc-timeout ${String(call.headers['grpc-timeout'])}`);
    const timer = setTimeout(() => call.stream.close(http2.constants.NGHTTP2_CANCEL), Number(timeout[1]));
    call.stream.once('close', () => clearTimeout(timer));
  });
  const client = await startClient(t, server.address, 300);
  for (let round = 1; round <= 5; round++) {
    const err = await failure(client.getControllerCapabilities(never));
    assert.equal(err.code, status.DEADLINE_EXCEEDED, `round ${round}: ${err.message}`);
    assert.equal(err.message, 'rpc error: code = DeadlineExceeded desc = context deadline exceeded');
  }
});

/**
 * The driver answers one message and then keeps sending `rest` in 64 KiB pieces, as fast as the
 * client takes them, up to 20 MiB. Returns how much it could send before the client ended the
 * stream, and the client's largest growth of ArrayBuffer memory meanwhile.
 */
async function offer20MiB(
  t: After,
  first: Buffer,
  rest: (piece: number) => Buffer,
): Promise<{ err: CsiError; sentBytes: number; growthBytes: number; elapsedMs: number }> {
  let sentBytes = 0;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const server = await h2Driver(t, (call) => {
    const stream = call.stream;
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
    stream.on('close', done);
    stream.write(first);
    let piece = 0;
    const pump = () => {
      while (!stream.destroyed && sentBytes < 20 * MiB) {
        const chunk = rest(piece++);
        sentBytes += chunk.length;
        if (!stream.write(chunk)) {
          stream.once('drain', pump);
          return;
        }
      }
      if (!stream.destroyed) stream.end();
    };
    pump();
  });
  const client = await startClient(t, server.address, 10_000);
  globalThis.gc?.();
  const base = process.memoryUsage().arrayBuffers;
  let peak = base;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().arrayBuffers);
  }, 5);
  try {
    const started = Date.now();
    const err = await failure(client.getControllerCapabilities(never));
    const elapsedMs = Date.now() - started;
    await finished;
    peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    return { err, sentBytes, growthBytes: peak - base, elapsedMs };
  } finally {
    clearInterval(sampler);
  }
}

const PIECE = 64 * 1024;
const zeros = Buffer.alloc(PIECE);
const endlessOffers: Array<{ name: string; first: Buffer; rest: (piece: number) => Buffer }> = [
  { name: 'data after the message (zero bytes: empty messages)', first: grpcFrame(capabilitiesAnswer), rest: () => zeros },
  {
    name: 'a second message of 4 MiB after the first',
    first: grpcFrame(capabilitiesAnswer),
    rest: (i) => (i === 0 ? grpcFrame(Buffer.alloc(PIECE - 5), 0, 4 * MiB) : zeros),
  },
  { name: 'one message that says 20 MiB', first: grpcFrame(Buffer.alloc(0), 0, 20 * MiB), rest: () => zeros },
];

for (const offer of endlessOffers) {
  test(`${offer.name}: the call ends with a clear status and the client takes in a bounded amount of the 20 MiB offered`, async (t) => {
    const { err, sentBytes, growthBytes, elapsedMs } = await offer20MiB(t, offer.first, offer.rest);
    assert.notEqual(err.code, null, err.message);
    // Ended by what the driver sent, not by the 10 s deadline.
    assert.notEqual(err.code, status.DEADLINE_EXCEEDED, err.message);
    assert.ok(elapsedMs < 5000, `ended after ${elapsedMs} ms`);
    assert.ok(sentBytes < 8 * MiB, `the driver got ${(sentBytes / MiB).toFixed(1)} MiB of 20 into the client`);
    assert.ok(growthBytes < 16 * MiB, `client ArrayBuffer memory grew ${(growthBytes / MiB).toFixed(1)} MiB`);
  });
}

test('a hung driver: the call ends DeadlineExceeded at the --timeout, non-final', async (t) => {
  const server = await h2Driver(t, () => {});
  const client = await startClient(t, server.address, 400);
  const started = Date.now();
  const err = await failure(client.getControllerCapabilities(never));
  const elapsed = Date.now() - started;
  assert.equal(err.code, status.DEADLINE_EXCEEDED, err.message);
  assert.equal(err.failure, 'inProgress');
  assert.ok(elapsed >= 390 && elapsed < 2000, `ended after ${elapsed} ms`);
});

test('a driver that accepts the connection and never completes the HTTP/2 handshake: the attempt is given up and dialed anew', async (t) => {
  const { proxy } = await proxiedDriver(t);
  // The first connection never sees the driver's SETTINGS; later ones do.
  proxy.onServerFrame = (_frame, connection) => (connection.id === 1 ? 'drop' : 'forward');
  const client = await startClient(t, `unix://${proxy.socketPath}`, 2000, 300);
  assert.equal((await client.getControllerCapabilities(never)).expandVolume, true);
  assert.ok(proxy.accepted >= 2, `${proxy.accepted} connection(s)`);
});

test('close: a call in flight ends Cancelled at once, a later call fails', async (t) => {
  const server = await h2Driver(t, () => {});
  const client = await startClient(t, server.address, 60_000);
  const started = Date.now();
  const pending = failure(client.getControllerCapabilities(never));
  await eventually('the call reached the driver', () => server.count(CAPABILITIES) === 1);
  client.close();
  const err = await pending;
  assert.equal(err.code, status.CANCELLED, err.message);
  assert.ok(Date.now() - started < 5000);
  await assert.rejects(client.getControllerCapabilities(never), /closed/);
});

test('a 100,000-deep nested group in an unknown field is a decode error status, not a stack overflow', async (t) => {
  const depth = 100_000;
  // Field 16, wire type 3 (start group) = varint 0x83 0x01; wire type 4 (end group) = 0x84 0x01.
  const nested = Buffer.concat([Buffer.alloc(depth * 2, Buffer.from([0x83, 0x01])), Buffer.alloc(depth * 2, Buffer.from([0x84, 0x01]))]);
  const server = await h2Driver(t, (call) => answer(call.stream, nested));
  const client = await startClient(t, server.address);
  const err = await failure(client.getControllerCapabilities(never));
  assert.equal(err.code, status.INTERNAL, err.message);
  assert.doesNotMatch(err.message, /call stack/i);
  assert.ok(!(err.cause instanceof RangeError));
});

// The fuzz runs in lanes, each its own proxy and client with its own seed: most cases wait for
// the call's deadline, and lanes wait side by side, so all cases fit in a quarter of the time.
const FUZZ_LANES = 4;
const FUZZ_CASES_PER_LANE = 25;
const FUZZ_CALL_TIMEOUT_MS = 300;

interface FuzzOutcomes {
  ok: number;
  failed: number;
}

/** One lane: FUZZ_CASES_PER_LANE calls through `proxy`, half answered with random frames, half with the driver's frames damaged. */
async function fuzzLane(t: After, driver: FaultDriver, lane: number, outcomes: FuzzOutcomes): Promise<void> {
  const proxy = await H2FaultProxy.start(driver.socketPath);
  t.after(() => proxy.close());
  // A damaged handshake can leave an attempt waiting forever; a short attempt bound keeps the run
  // short. Start-up gets the default deadline (the other lanes may be busy), each fuzz call a short one.
  const client = await startClient(t, `unix://${proxy.socketPath}`, 5000, 1000);
  const random = mulberry32(0x5eed + lane);
  for (let i = 0; i < FUZZ_CASES_PER_LANE; i++) {
    const name = `lane ${lane} case ${i}`;
    if (i % 2 === 0) {
      // Generated: the driver never sees the request; the proxy answers with random frames.
      proxy.onServerFrame = undefined;
      proxy.onClientFrame = (frame, connection) => {
        if (frame.streamId === 0) return 'forward';
        if (frame.type === FrameType.HEADERS) connection.client.write(Buffer.concat(randomFrames(random, frame.streamId)));
        if (random() < 0.05) connection.client.end();
        return 'drop';
      };
    } else {
      // Mutated: the driver answers, and the proxy damages what it sends.
      proxy.onClientFrame = undefined;
      proxy.onServerFrame = (frame) => mutate(random, frame.raw);
    }
    const callStarted = Date.now();
    await client.getControllerCapabilities(never, { timeoutMs: FUZZ_CALL_TIMEOUT_MS }).then(
      () => outcomes.ok++,
      (err: unknown) => {
        assert.ok(err instanceof CsiError, `${name}: not a CsiError: ${String(err)}`);
        assert.notEqual(err.code, null, `${name}: no gRPC code: ${err.message}`);
        outcomes.failed++;
        if (process.env['FUZZ_DEBUG']) process.stderr.write(`${name}: ${err.message}\n`);
      },
    );
    assert.ok(Date.now() - callStarted < FUZZ_CALL_TIMEOUT_MS + 3000, `${name}: the call took ${Date.now() - callStarted} ms`);
  }
  // With the damage gone, the client works again.
  proxy.onClientFrame = undefined;
  proxy.onServerFrame = undefined;
  await eventually(`lane ${lane}: a call succeeds after the fuzz`, () => client.getControllerCapabilities(never).then(() => true), 10_000);
}

test(`no bytes a driver sends crash the client, reject unhandled or hang a call (bounded fuzz: ${FUZZ_LANES * FUZZ_CASES_PER_LANE} seeded cases)`, async (t) => {
  const driver = await FaultDriver.start();
  t.after(() => driver.stop());
  const thrown: unknown[] = [];
  const onThrown = (err: unknown) => thrown.push(err);
  process.on('uncaughtException', onThrown);
  process.on('unhandledRejection', onThrown);
  t.after(() => {
    process.off('uncaughtException', onThrown);
    process.off('unhandledRejection', onThrown);
  });
  const outcomes: FuzzOutcomes = { ok: 0, failed: 0 };
  const started = Date.now();
  // Every lane runs to its end before anything is asserted, so none is still calling when cleanup starts.
  const lanes = await Promise.allSettled(Array.from({ length: FUZZ_LANES }, (_, lane) => fuzzLane(t, driver, lane, outcomes)));
  for (const lane of lanes) if (lane.status === 'rejected') throw lane.reason;
  assert.deepEqual(thrown, []);
  assert.equal(outcomes.ok + outcomes.failed, FUZZ_LANES * FUZZ_CASES_PER_LANE, JSON.stringify(outcomes));
  t.diagnostic(`fuzz: ${JSON.stringify(outcomes)} in ${Date.now() - started} ms`);
});

function varint(value: number): Buffer {
  const out: number[] = [];
  while (value >= 0x80) {
    out.push((value & 0x7f) | 0x80);
    value = Math.floor(value / 128);
  }
  out.push(value);
  return Buffer.from(out);
}

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function randomBytes(random: () => number, max: number): Buffer {
  const out = Buffer.alloc(Math.floor(random() * max));
  for (let i = 0; i < out.length; i++) out[i] = Math.floor(random() * 256);
  return out;
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/** One to six frames for stream `streamId` (or another), legal and not. */
function randomFrames(random: () => number, streamId: number): Buffer[] {
  const frames: Buffer[] = [];
  const count = 1 + Math.floor(random() * 6);
  for (let i = 0; i < count; i++) {
    const id = pick(random, [streamId, streamId, streamId, 0, streamId + 2, Math.floor(random() * 0x7fffffff)]);
    const flags = random() < 0.5 ? pick(random, [0, Flag.END_STREAM, Flag.END_HEADERS, Flag.END_HEADERS | Flag.END_STREAM]) : Math.floor(random() * 256);
    const kind = Math.floor(random() * 12);
    frames.push(FRAME_MAKERS[Math.min(kind, FRAME_MAKERS.length - 1)]!({ random, id, flags, streamId }));
  }
  return frames;
}

/** What a frame maker draws from: the fuzz's random source, the stream id and flags already drawn, the call's stream. */
interface FrameDraw {
  random: () => number;
  id: number;
  flags: number;
  streamId: number;
}

/** The frame makers randomFrames picks from by the kind it drew (11: noise). */
const FRAME_MAKERS: ReadonlyArray<(draw: FrameDraw) => Buffer> = [
  ({ id }) =>
    encodeFrame(
      FrameType.HEADERS,
      Flag.END_HEADERS,
      id,
      literalHeaderBlock([
        [':status', '200'],
        ['content-type', 'application/grpc'],
      ]),
    ),
  ({ random, id }) =>
    encodeFrame(
      FrameType.HEADERS,
      Flag.END_HEADERS | Flag.END_STREAM,
      id,
      literalHeaderBlock(
        [
          ['grpc-status', String(Math.floor(random() * 20))],
          ['grpc-message', randomBytes(random, 20).toString('latin1')],
        ].map(([n, v]) => [n!, v!] as const),
      ),
    ),
  ({ random, id, flags }) => encodeFrame(FrameType.HEADERS, flags, id, randomBytes(random, 40)),
  ({ random, id, flags }) =>
    encodeFrame(
      FrameType.DATA,
      flags & ~Flag.PADDED,
      id,
      grpcFrame(randomBytes(random, 30), random() < 0.8 ? 0 : Math.floor(random() * 256), random() < 0.7 ? undefined : Math.floor(random() * 0xffffffff)),
    ),
  ({ random, id, flags }) => encodeFrame(FrameType.DATA, flags, id, randomBytes(random, 60)),
  ({ random, id }) => encodeFrame(FrameType.RST_STREAM, 0, id, uint32(Math.floor(random() * 16))),
  ({ random, streamId }) =>
    encodeFrame(
      FrameType.GOAWAY,
      0,
      0,
      Buffer.concat([uint32(Math.floor(random() * (streamId + 3))), uint32(Math.floor(random() * 16)), randomBytes(random, 10)]),
    ),
  ({ random, id }) =>
    encodeFrame(FrameType.WINDOW_UPDATE, 0, pick(random, [0, id]), uint32(pick(random, [0, 1, 65535, 0x7fffffff, Math.floor(random() * 0xffffffff)]))),
  ({ random, flags }) =>
    encodeFrame(
      FrameType.SETTINGS,
      flags & Flag.ACK,
      0,
      Buffer.concat([Buffer.from([0, 1 + Math.floor(random() * 7)]), uint32(Math.floor(random() * 0xffffffff))]),
    ),
  ({ random, id, flags }) =>
    encodeFrame(pick(random, [FrameType.PING, FrameType.PRIORITY, FrameType.PUSH_PROMISE, FrameType.CONTINUATION]), flags, id, randomBytes(random, 12)),
  ({ random, id, flags }) => encodeFrame(10 + Math.floor(random() * 240), flags, id, randomBytes(random, 20)),
  // Not a frame at all: a header that lies about the length, or noise.
  ({ random }) => randomBytes(random, 30),
];

/** A server frame forwarded, damaged, dropped or sent twice. */
function mutate(random: () => number, raw: Buffer): Buffer | 'forward' | 'drop' {
  const roll = random();
  if (roll < 0.4) return 'forward';
  if (roll < 0.5) return 'drop';
  if (roll < 0.6) return Buffer.concat([raw, raw]);
  const copy = Buffer.from(raw);
  const flips = 1 + Math.floor(random() * 3);
  for (let i = 0; i < flips; i++) copy[Math.floor(random() * copy.length)] = Math.floor(random() * 256);
  return roll < 0.9 ? copy : copy.subarray(0, Math.floor(random() * copy.length));
}

function uint32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value >>> 0);
  return out;
}
