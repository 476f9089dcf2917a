// The chaos proxy on plain TCP: it forwards, cut() resets open connections, blackhole() delivers
// nothing (old or new connections) until restore() delivers everything that waited.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type Socket } from 'node:net';
import { ControlledProxy } from './proxy.js';

async function echoServer(t: { after(fn: () => unknown): void }): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    s.on('data', (d) => s.write(d));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.after(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return (server.address() as { port: number }).port;
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

async function until(what: string, check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('forwards both ways; cut() resets open connections; new ones work afterwards', async (t) => {
  const proxy = await ControlledProxy.start({ host: '127.0.0.1', port: await echoServer(t) });
  t.after(() => proxy.close());
  const a = client(proxy.port);
  a.socket.write('hello');
  await until('echo', () => a.received() === 'hello');
  assert.equal(proxy.cut(), 1);
  assert.equal(await a.closed, 'ECONNRESET');
  const b = client(proxy.port);
  b.socket.write('again');
  await until('echo after cut', () => b.received() === 'again');
  b.socket.destroy();
});

test('blackhole() holds old and new connections without losing bytes; restore() delivers them', async (t) => {
  const proxy = await ControlledProxy.start({ host: '127.0.0.1', port: await echoServer(t) });
  t.after(() => proxy.close());
  const old = client(proxy.port);
  old.socket.write('1');
  await until('first echo', () => old.received() === '1');
  proxy.blackhole();
  old.socket.write('2');
  const fresh = client(proxy.port);
  fresh.socket.write('x');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(old.received(), '1');
  assert.equal(fresh.received(), '');
  proxy.restore();
  await until('held bytes delivered', () => old.received() === '12' && fresh.received() === 'x');
  old.socket.destroy();
  fresh.socket.destroy();
});
