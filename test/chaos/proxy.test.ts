// The chaos proxy on plain TCP: it forwards, cut() resets open connections, blackhole() delivers
// nothing (old or new connections) until restore() delivers everything that waited.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type Socket } from 'node:net';
import { ControlledProxy } from './proxy.js';
import { eventually } from '../support/eventually.js';

/** An echo server on loopback; `received` is every byte it got, over all connections. */
async function echoServer(t: { after(fn: () => unknown): void }): Promise<{ port: number; received: () => string }> {
  const sockets = new Set<Socket>();
  let received = '';
  const server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    s.on('data', (d) => {
      received += d.toString();
      s.write(d);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.after(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { port: (server.address() as { port: number }).port, received: () => received };
}

function client(port: number): { socket: Socket; received: () => string; closed: Promise<string> } {
  const socket = connect({ host: '127.0.0.1', port });
  let data = '';
  socket.on('data', (d) => (data += d.toString()));
  const closed = new Promise<string>((resolve) => {
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    socket.on('close', () => resolve('closed'));
  });
  return { socket, received: () => data, closed };
}

test('forwards both ways; cut() resets open connections; new ones work afterwards', async (t) => {
  const proxy = await ControlledProxy.start({ host: '127.0.0.1', port: (await echoServer(t)).port });
  t.after(() => proxy.close());
  const a = client(proxy.port);
  a.socket.write('hello');
  await eventually('echo', () => a.received() === 'hello');
  assert.equal(proxy.cut(), 1);
  assert.equal(await a.closed, 'ECONNRESET');
  const b = client(proxy.port);
  b.socket.write('again');
  await eventually('echo after cut', () => b.received() === 'again');
  b.socket.destroy();
});

test('blackhole() holds old and new connections without losing bytes; restore() delivers them', async (t) => {
  const echo = await echoServer(t);
  const proxy = await ControlledProxy.start({ host: '127.0.0.1', port: echo.port });
  t.after(() => proxy.close());
  const old = client(proxy.port);
  old.socket.write('1');
  await eventually('first echo', () => old.received() === '1');
  proxy.blackhole();
  old.socket.write('2');
  const fresh = client(proxy.port);
  fresh.socket.write('x');
  // The proxy has the fresh connection, and then three round trips straight to the echo server
  // (each several event-loop turns, all in this process) went after both writes: a proxy that
  // forwarded would have passed '2' and 'x' on by then. The echo server got neither.
  await eventually('fresh connection accepted', () => proxy.stats.accepted === 2);
  const direct = client(echo.port);
  for (const probe of ['a', 'ab', 'abc']) {
    direct.socket.write(probe.at(-1)!);
    await eventually(`direct echo ${probe}`, () => direct.received() === probe);
  }
  direct.socket.destroy();
  assert.equal(echo.received(), '1abc');
  assert.equal(old.received(), '1');
  assert.equal(fresh.received(), '');
  proxy.restore();
  await eventually('held bytes delivered', () => old.received() === '12' && fresh.received() === 'x');
  old.socket.destroy();
  fresh.socket.destroy();
});
