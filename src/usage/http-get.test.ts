// The usage transport's own cases (TLS and unreachable servers are in the kubelet source's
// integration test): the body's readers, the size bound, a malformed answer, the caller's abort,
// and the kubelets' agent: a connection per answer, its TLS session resumed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { eventually } from '../../test/support/eventually.js';
import https from 'node:https';
import { closingAgent, HttpGetError, httpGet, keepAliveAgent, textPrefix, wholeText } from './http-get.js';
import { selfSigned } from '../../test/support/self-signed.js';

async function listen(t: { after(fn: () => Promise<void>): void }, server: http.Server | net.Server, protocol = 'http:'): Promise<URL> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Kept-alive and held connections would keep close() waiting.
        if (server instanceof http.Server) server.closeAllConnections();
      }),
  );
  return new URL(`${protocol}//127.0.0.1:${(server.address() as AddressInfo).port}/x`);
}

test('httpGet: any status with its body', async (t) => {
  const url = await listen(
    t,
    http.createServer((_req, res) => res.writeHead(418).end('teapot')),
  );
  const agent = keepAliveAgent('http:');
  t.after(async () => agent.destroy());
  const answer = await httpGet({ url, agent, maxBytes: 100, reader: wholeText }, new AbortController().signal);
  assert.equal(answer.statusCode, 418);
  assert.equal(answer.body, 'teapot');
});

test('httpGet: a character whose bytes arrive in two writes is decoded whole', async (t) => {
  const euro = Buffer.from('€', 'utf8'); // three bytes
  const url = await listen(
    t,
    http.createServer((_req, res) => {
      res.write(Buffer.concat([Buffer.from('{"a":"'), euro.subarray(0, 1)]));
      // The rest after the first chunk has left: the client reads it as a second chunk.
      setImmediate(() => res.end(Buffer.concat([euro.subarray(1), Buffer.from('"}')])));
    }),
  );
  const agent = keepAliveAgent('http:');
  t.after(async () => agent.destroy());
  const answer = await httpGet({ url, agent, maxBytes: 100, reader: wholeText }, new AbortController().signal);
  assert.deepEqual(JSON.parse(answer.body), { a: '€' });
});

test('httpGet: the reader is chosen by the status: an error answer kept only up to its bound', async (t) => {
  const url = await listen(
    t,
    http.createServer((_req, res) => res.writeHead(503).end('x'.repeat(5_000))),
  );
  const agent = keepAliveAgent('http:');
  t.after(async () => agent.destroy());
  const statuses: number[] = [];
  const answer = await httpGet(
    {
      url,
      agent,
      maxBytes: 10_000,
      reader: (status) => {
        statuses.push(status);
        return textPrefix(300);
      },
    },
    new AbortController().signal,
  );
  assert.deepEqual(statuses, [503]);
  assert.equal(answer.body, 'x'.repeat(300));
});

test("httpGet: a reader's error fails the GET with that error, not a wire failure", async (t) => {
  const url = await listen(
    t,
    http.createServer((_req, res) => res.end('{"not": "what the reader wants"}')),
  );
  const agent = keepAliveAgent('http:');
  t.after(async () => agent.destroy());
  const refusal = new Error('not a summary');
  const reader = () => ({
    write: () => {
      throw refusal;
    },
    end: () => 'unreachable',
  });
  await assert.rejects(httpGet({ url, agent, maxBytes: 1_000, reader }, new AbortController().signal), (err: unknown) => err === refusal);
});

test('httpGet: a body beyond the bound is refused', async (t) => {
  const url = await listen(
    t,
    http.createServer((_req, res) => res.end(Buffer.alloc(10_000))),
  );
  const agent = keepAliveAgent('http:');
  t.after(async () => agent.destroy());
  await assert.rejects(
    httpGet({ url, agent, maxBytes: 1_000, reader: wholeText }, new AbortController().signal),
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
    httpGet({ url, agent, maxBytes: 1_000, reader: wholeText }, new AbortController().signal),
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
  const pending = httpGet({ url, agent, maxBytes: 1_000, reader: wholeText }, abort.signal);
  abort.abort(new Error('enough'));
  await assert.rejects(pending, /enough/);
});

test('closingAgent: each answer on its own connection, closed after it; the next resumes the TLS session', async (t) => {
  const tls = selfSigned('IP:127.0.0.1');
  const reused: boolean[] = [];
  const closed: number[] = [];
  const server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    reused.push((req.socket as import('node:tls').TLSSocket).isSessionReused());
    req.socket.once('close', () => closed.push(reused.length));
    res.end('{}');
  });
  const url = await listen(t, server, 'https:');
  const agent = closingAgent({ ca: tls.cert, rejectUnauthorized: true });
  t.after(async () => agent.destroy());
  for (let i = 0; i < 3; i++) {
    const answer = await httpGet({ url, agent, maxBytes: 100, reader: wholeText }, new AbortController().signal);
    assert.equal(answer.body, '{}');
  }
  assert.deepEqual(reused, [false, true, true]);
  // Every connection closes once its answer is read, none is kept for the next.
  await eventually('the three connections closed', () => closed.length === 3);
});
