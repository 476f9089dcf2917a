// The idle timeout of the API server's connections runs only while a connection waits in the pool:
// none while a request or a watch uses it (where it would be re-armed at every read and write), the
// idle timeout once the connection is back in the pool, none again when the next request takes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createSecureContext } from 'node:tls';
import { selfSigned } from '../../../test/support/self-signed.js';
import { ApiConnections, IDLE_TIMEOUT_MS } from './connections.js';

type Server = http.Server | https.Server;

async function listening(server: Server, t: { after: (fn: () => unknown) => void }): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

/** A GET through the agent, resolving to the socket's timeout while the answer is read, and the socket. */
function timeoutInUse(module: typeof http | typeof https, agent: http.Agent, port: number): Promise<{ inUse: number | undefined; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const req = module.request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      const socket = res.socket;
      const inUse = socket.timeout;
      res.resume();
      res.on('end', () => resolve({ inUse, socket }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The socket once the agent has put it back in its pool. */
async function pooled(agent: http.Agent, socket: Socket): Promise<void> {
  while (!Object.values(agent.freeSockets).some((sockets) => sockets?.includes(socket))) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function timersOverTwoRequests(module: typeof http | typeof https, agent: http.Agent, port: number): Promise<void> {
  const first = await timeoutInUse(module, agent, port);
  assert.ok(!first.inUse, `a timer on a connection in use: ${first.inUse}`);
  await pooled(agent, first.socket);
  assert.equal(first.socket.timeout, IDLE_TIMEOUT_MS, 'the idle timer on a pooled connection');
  const second = await timeoutInUse(module, agent, port);
  assert.equal(second.socket, first.socket, 'the pooled connection was reused');
  assert.ok(!second.inUse, `a timer on a reused connection in use: ${second.inUse}`);
  await pooled(agent, second.socket);
  assert.equal(second.socket.timeout, IDLE_TIMEOUT_MS);
}

test('http: no timer while a connection is in use, the idle timeout while it is pooled', async (t) => {
  const server = http.createServer((_req, res) => res.end('ok'));
  const port = await listening(server, t);
  const connections = new ApiConnections({ server: new URL(`http://127.0.0.1:${port}`), tls: undefined, proxy: undefined });
  t.after(() => connections.destroy());
  await timersOverTwoRequests(http, connections.requests, port);
});

test('https: no timer while a connection is in use, the idle timeout while it is pooled', async (t) => {
  const { cert, key } = selfSigned();
  const server = https.createServer({ cert, key }, (_req, res) => res.end('ok'));
  const port = await listening(server, t);
  const connections = new ApiConnections({
    server: new URL(`https://127.0.0.1:${port}`),
    tls: { secureContext: createSecureContext({ ca: cert }), rejectUnauthorized: true },
    proxy: undefined,
  });
  t.after(() => connections.destroy());
  await timersOverTwoRequests(https, connections.requests, port);
});

test('a pooled connection is closed after the idle timeout (the timer is the one Node acts on)', async (t) => {
  const server = http.createServer((_req, res) => res.end('ok'));
  const port = await listening(server, t);
  const connections = new ApiConnections({ server: new URL(`http://127.0.0.1:${port}`), tls: undefined, proxy: undefined });
  t.after(() => connections.destroy());
  const { socket } = await timeoutInUse(http, connections.requests, port);
  await pooled(connections.requests, socket);
  // What the timer does when it fires: the agent's own listener closes a socket that is idle in its pool.
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.emit('timeout');
  await closed;
  assert.ok(socket.destroyed);
});
