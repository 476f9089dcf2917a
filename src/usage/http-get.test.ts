// The usage transport's own cases (TLS and unreachable servers are in the kubelet source's
// integration test): the size bound, a malformed answer, and the caller's abort.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { HttpGetError, httpGet, keepAliveAgent } from './http-get.js';

async function listen(t: { after(fn: () => Promise<void>): void }, server: http.Server | net.Server): Promise<URL> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Kept-alive and held connections would keep close() waiting.
        if (server instanceof http.Server) server.closeAllConnections();
      }),
  );
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`);
}

test('httpGet: any status with its body', async (t) => {
  const url = await listen(
    t,
    http.createServer((_req, res) => res.writeHead(418).end('teapot')),
  );
  const agent = keepAliveAgent('http:');
  t.after(async () => agent.destroy());
  const answer = await httpGet({ url, agent, maxBytes: 100 }, new AbortController().signal);
  assert.equal(answer.statusCode, 418);
  assert.equal(answer.body.toString(), 'teapot');
});

test('httpGet: a body beyond the bound is refused', async (t) => {
  const url = await listen(
    t,
    http.createServer((_req, res) => res.end(Buffer.alloc(10_000))),
  );
  const agent = keepAliveAgent('http:');
  t.after(async () => agent.destroy());
  await assert.rejects(
    httpGet({ url, agent, maxBytes: 1_000 }, new AbortController().signal),
    (err: unknown) => err instanceof HttpGetError && err.failure === 'tooLarge',
  );
});

test('httpGet: not HTTP is a protocol failure', async (t) => {
  const server = net.createServer((socket) => {
    // Read what comes, so the client's close is seen and the server can close.
    socket.resume();
    socket.end('SSH-2.0-not-http\r\n\r\n');
  });
  const url = await listen(t, server);
  const agent = keepAliveAgent('http:');
  t.after(async () => agent.destroy());
  await assert.rejects(
    httpGet({ url, agent, maxBytes: 1_000 }, new AbortController().signal),
    (err: unknown) => err instanceof HttpGetError && err.failure === 'protocol',
  );
});

test("httpGet: the caller's abort rejects with its reason", async (t) => {
  const url = await listen(
    t,
    http.createServer(() => {}),
  );
  const agent = keepAliveAgent('http:');
  t.after(async () => agent.destroy());
  const abort = new AbortController();
  const pending = httpGet({ url, agent, maxBytes: 1_000 }, abort.signal);
  abort.abort(new Error('enough'));
  await assert.rejects(pending, /enough/);
});
