// What the CSI layer assumes of @grpc/grpc-js, one test per workaround, each against plain
// grpc-js with our channel options and none of our code on the call path. Each test's name says
// the behaviour and, after the colon, the workaround that depends on it. A test here that fails
// after a grpc-js upgrade means that workaround is no longer needed, or no longer works: change
// the workaround, not the test (docs/architecture.md, "The CSI layer").
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { FaultDriver } from '../../test/fakes/fault-driver.js';
import { H2FaultProxy } from '../../test/support/h2-fault-proxy.js';
import { answer, fail, GrpcH2Server, type GrpcH2Handler } from '../../test/support/grpc-h2-server.js';
import { encodeFrame, FrameType, grpcFrame } from '../../test/support/h2-frames.js';
import { eventually } from '../../test/support/eventually.js';
import { MAX_TIMER_DELAY_MS } from '../base/long-timer.js';
import { CHANNEL_OPTIONS, CONNECTION_LOSS_GRACE_MS } from './driver-channel.js';

const CAPABILITIES = '/csi.v1.Controller/ControllerGetCapabilities';
const { READY, IDLE, CONNECTING } = grpc.connectivityState;

interface Ending {
  err: grpc.ServiceError | null;
  /** The call emitted 'metadata' (the driver's response headers) before it ended. */
  headers: boolean;
  /** The channel's state when the callback ran. */
  stateAtEnd: grpc.connectivityState;
}

function plainClient(t: TestContext, address: string): grpc.Client {
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  t.after(() => client.close());
  return client;
}

/** One call as DriverCalls makes it (wait-for-ready, a deadline), without our interceptor or timer. */
function plainCall(client: grpc.Client, deadline: number): { ended: Promise<Ending>; call: grpc.ClientUnaryCall } {
  let headers = false;
  let call!: grpc.ClientUnaryCall;
  const ended = new Promise<Ending>((resolve) => {
    call = client.makeUnaryRequest(
      CAPABILITIES,
      (bytes: Buffer) => bytes,
      (bytes: Buffer) => bytes,
      Buffer.alloc(0),
      new grpc.Metadata({ waitForReady: true }),
      { deadline },
      (err) => resolve({ err, headers, stateAtEnd: client.getChannel().getConnectivityState(false) }),
    );
  });
  call.on('metadata', () => (headers = true));
  return { ended, call };
}

async function h2Driver(t: TestContext, handler: GrpcH2Handler): Promise<GrpcH2Server> {
  const server = await GrpcH2Server.start(handler);
  t.after(() => server.stop());
  return server;
}

/** A socket that accepts connections and never says anything (no HTTP/2 SETTINGS). */
async function silentSocket(t: TestContext): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'rz-silent-'));
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(join(dir, 'csi.sock'), resolve));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return `unix://${join(dir, 'csi.sock')}`;
}

function waitUntilNot(client: grpc.Client, state: grpc.connectivityState, withinMs: number): Promise<boolean> {
  const channel = client.getChannel();
  if (channel.getConnectivityState(false) !== state) return Promise.resolve(true);
  return new Promise((resolve) => channel.watchConnectivityState(state, Date.now() + withinMs, (err) => resolve(!err)));
}

/** Runs event-loop turns (no timers: they may be mocked) until `done`, at most 2000 of them. */
async function turnsUntil(done: () => boolean): Promise<boolean> {
  for (let i = 0; i < 2000 && !done(); i++) await new Promise((resolve) => setImmediate(resolve));
  return done();
}

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Moves mock time forward `totalMs` in steps, letting I/O and promise continuations run between. */
async function advance(t: TestContext, totalMs: number, stepMs: number): Promise<void> {
  for (let passed = 0; passed < totalMs; passed += stepMs) {
    t.mock.timers.tick(stepMs);
    await flush();
  }
}

test("a connection attempt waits for the driver's HTTP/2 SETTINGS without a bound: DriverChannel gives up a hung attempt itself", async (t) => {
  const address = await silentSocket(t);
  // Mocked before the attempt starts, so any timer grpc-js set for it would be one we move.
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'] });
  const client = plainClient(t, address);
  client.getChannel().getConnectivityState(true);
  assert.ok(await turnsUntil(() => client.getChannel().getConnectivityState(false) === CONNECTING), 'the channel is connecting');
  await advance(t, 60 * 60_000, 60_000);
  assert.equal(grpc.connectivityState[client.getChannel().getConnectivityState(false)], 'CONNECTING', 'an hour later');
});

test('a lost connection parks the channel in IDLE, and it does not dial again until a call: DriverChannel dials at once', async (t) => {
  const driver = await FaultDriver.start();
  t.after(() => driver.stop());
  const proxy = await H2FaultProxy.start(driver.socketPath);
  t.after(() => proxy.close());
  // Mocked before the loss, so any timer grpc-js set to dial again would be one we move.
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'] });
  const client = plainClient(t, `unix://${proxy.socketPath}`);
  client.getChannel().getConnectivityState(true);
  assert.ok(await turnsUntil(() => client.getChannel().getConnectivityState(false) === READY), 'the channel is ready');
  proxy.destroyAll();
  assert.ok(await turnsUntil(() => client.getChannel().getConnectivityState(false) !== READY), 'the channel noticed the loss');
  assert.equal(grpc.connectivityState[client.getChannel().getConnectivityState(false)], 'IDLE');
  await advance(t, 10 * 60_000, 10_000);
  assert.equal(client.getChannel().getConnectivityState(false), IDLE, 'ten minutes later');
  assert.equal(proxy.accepted, 1);
});

test('a new call on a connection that a protocol error just broke fails Unavailable or Internal, with no response headers, while the channel still reads READY; the channel leaves READY within the grace: DriverCalls sends such a call once more after waiting for the channel', async (t) => {
  const driver = await FaultDriver.start();
  t.after(() => driver.stop());
  const proxy = await H2FaultProxy.start(driver.socketPath);
  t.after(() => proxy.close());
  const client = plainClient(t, `unix://${proxy.socketPath}`);
  for (let round = 1; round <= 3; round++) {
    // A DATA frame on stream 0 right behind the answer: a connection error for the client.
    proxy.afterNextResponse(() => encodeFrame(FrameType.DATA, 0, 0, Buffer.from('bad')));
    assert.equal((await plainCall(client, Date.now() + 5000).ended).err, null);
    const broken = await plainCall(client, Date.now() + 5000).ended;
    assert.ok(broken.err, `round ${round}: grpc-js sent the call again by itself`);
    assert.ok([grpc.status.UNAVAILABLE, grpc.status.INTERNAL].includes(broken.err.code), `round ${round}: ${broken.err.message}`);
    assert.equal(broken.headers, false);
    assert.deepEqual(broken.err.metadata.get('content-type'), []);
    assert.equal(grpc.connectivityState[broken.stateAtEnd], 'READY', `round ${round}: the channel had already left READY`);
    assert.ok(await waitUntilNot(client, READY, CONNECTION_LOSS_GRACE_MS), `round ${round}: still READY after ${CONNECTION_LOSS_GRACE_MS} ms`);
    client.getChannel().getConnectivityState(true);
  }
});

test("a driver's own status comes with its response headers: a 'metadata' event before a status in trailers, content-type in a Trailers-Only status's metadata: DriverCalls returns a driver's own Unavailable or Internal without the grace", async (t) => {
  const server = await h2Driver(t, (call) => {
    if (call.index === 0) return fail(call.stream, grpc.status.UNAVAILABLE, 'driver busy');
    call.stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    call.stream.on('wantTrailers', () => call.stream.sendTrailers({ 'grpc-status': String(grpc.status.INTERNAL), 'grpc-message': 'driver failed' }));
    call.stream.end();
  });
  const client = plainClient(t, server.address);
  const trailersOnly = await plainCall(client, Date.now() + 5000).ended;
  assert.equal(trailersOnly.err?.code, grpc.status.UNAVAILABLE);
  assert.equal(trailersOnly.headers, false);
  assert.deepEqual(trailersOnly.err.metadata.get('content-type'), ['application/grpc']);
  const withHeaders = await plainCall(client, Date.now() + 5000).ended;
  assert.equal(withHeaders.err?.code, grpc.status.INTERNAL);
  assert.equal(withHeaders.headers, true);
});

test('closing a channel fails a call still waiting for a connection Unavailable: a call on a replaced DriverChannel client is sent again', async (t) => {
  const client = plainClient(t, await silentSocket(t));
  client.getChannel().getConnectivityState(true);
  const { ended } = plainCall(client, Date.now() + 60_000);
  await eventually('the channel is connecting', () => client.getChannel().getConnectivityState(false) === CONNECTING, 5000, 10);
  client.close();
  const { err, headers } = await ended;
  assert.equal(err?.code, grpc.status.UNAVAILABLE, String(err));
  assert.equal(headers, false);
});

test('closing a channel leaves a call already sent running to its deadline: DriverCalls.close ends its calls itself', async (t) => {
  const server = await h2Driver(t, () => {});
  const client = plainClient(t, server.address);
  const { ended } = plainCall(client, Date.now() + 500);
  await eventually('the call reached the driver', () => server.count(CAPABILITIES) === 1, 5000, 10);
  client.close();
  const { err } = await ended;
  assert.equal(err?.code, grpc.status.DEADLINE_EXCEEDED, String(err));
});

test("a deadline beyond Node's timer limit is no deadline to grpc-js, though it sends the whole grpc-timeout: DriverCalls ends the call with its own timer", async (t) => {
  const timeouts: string[] = [];
  const server = await h2Driver(t, (call) => timeouts.push(String(call.headers['grpc-timeout'])));
  const client = plainClient(t, server.address);
  client.getChannel().getConnectivityState(true);
  await eventually('the channel is ready', () => client.getChannel().getConnectivityState(false) === READY, 5000, 10);
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: Date.now() });
  const deadlineMs = 30 * 24 * 3_600_000; // 30 days, above MAX_TIMER_DELAY_MS (24.8 days)
  assert.ok(deadlineMs > MAX_TIMER_DELAY_MS);
  let ending: Ending | 'pending' = 'pending';
  const { ended, call } = plainCall(client, Date.now() + deadlineMs);
  void ended.then((e) => (ending = e));
  // grpc-js starts a call from zero-delay timers, which the mock runs only when told.
  for (let i = 0; i < 100 && timeouts.length === 0; i++) {
    t.mock.timers.tick(0);
    await flush();
  }
  assert.equal(timeouts[0], `${deadlineMs / 1000}S`);
  await advance(t, deadlineMs + 3_600_000, 24 * 3_600_000);
  assert.equal(ending, 'pending', 'grpc-js ended the call');
  call.cancel();
  assert.equal((await ended).err?.code, grpc.status.CANCELLED);
});

test('a unary response with a second message holds the call, status and all, until its deadline: oneResponseMessage reads on', async (t) => {
  const message = Buffer.from([0x0a, 0x00]);
  const server = await h2Driver(t, (call) => {
    call.stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    call.stream.on('wantTrailers', () => call.stream.sendTrailers({ 'grpc-status': '0' }));
    call.stream.end(Buffer.concat([grpcFrame(message), grpcFrame(message)]));
  });
  const client = plainClient(t, server.address);
  const { err } = await plainCall(client, Date.now() + 500).ended;
  assert.equal(err?.code, grpc.status.DEADLINE_EXCEEDED, String(err));
});

test('status OK without a response message is Unimplemented "No message received": oneResponseMessage makes it Internal, as grpc-go', async (t) => {
  const server = await h2Driver(t, (call) => {
    call.stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    call.stream.on('wantTrailers', () => call.stream.sendTrailers({ 'grpc-status': '0' }));
    call.stream.end();
  });
  const { err } = await plainCall(plainClient(t, server.address), Date.now() + 5000).ended;
  assert.equal(err?.code, grpc.status.UNIMPLEMENTED);
  assert.equal(err.details, 'No message received');
});

// What grpc-js hands over for answers grpc-go reads otherwise (call-status.ts, reportedStatus).
const statusRows: Array<{ name: string; handler: GrpcH2Handler; code: unknown; details?: string | RegExp }> = [
  {
    name: 'a message flagged compressed without grpc-encoding: a status without code or details',
    handler: (call) => {
      call.stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      call.stream.on('wantTrailers', () => call.stream.sendTrailers({ 'grpc-status': '0' }));
      call.stream.end(grpcFrame(Buffer.from([0x0a, 0x00]), 1));
    },
    code: undefined,
  },
  {
    name: 'grpc-status abc: NaN',
    handler: (call) => call.stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': 'abc' }, { endStream: true }),
    code: NaN,
  },
  {
    name: 'grpc-status -1: -1',
    handler: (call) => call.stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '-1' }, { endStream: true }),
    code: -1,
  },
  {
    name: "a driver's RST_STREAM CANCEL: Cancelled, whenever it comes",
    handler: (call) => call.stream.close(http2.constants.NGHTTP2_CANCEL),
    code: grpc.status.CANCELLED,
  },
];

for (const row of statusRows) {
  test(`${row.name}: reportedStatus reads it as grpc-go does`, async (t) => {
    const server = await h2Driver(t, row.handler);
    const { err } = await plainCall(plainClient(t, server.address), Date.now() + 5000).ended;
    assert.ok(err);
    assert.ok(Object.is(err.code, row.code), `code ${String(err.code)}`);
  });
}

test("grpc-js's own deadline text is not grpc-go's: reportedStatus gives every ending at the deadline grpc-go's text", async (t) => {
  const server = await h2Driver(t, () => {});
  const { err } = await plainCall(plainClient(t, server.address), Date.now() + 200).ended;
  assert.equal(err?.code, grpc.status.DEADLINE_EXCEEDED);
  assert.notEqual(err.details, 'context deadline exceeded');
  assert.match(err.details, /^Deadline exceeded after /);
});

test('a driver that answers is still answered: the plain call succeeds (the rows above fail for the reason they name)', async (t) => {
  const server = await h2Driver(t, (call) => answer(call.stream, Buffer.from([0x0a, 0x00])));
  const { err, headers } = await plainCall(plainClient(t, server.address), Date.now() + 5000).ended;
  assert.equal(err, null);
  assert.equal(headers, true);
});
