// The keep-alive pool of the request layer's own HTTP/1.1 client against a scripted TCP server on
// loopback: reuse, a stale socket (closed by the server between requests), a server closing in the
// middle of an answer, aborts, `Connection: close`, and a retired pool; and watches (`stream`):
// events handed on as they arrive, aborts and destroy mid-stream, a server cutting a chunk, the
// normal end of a watch and its connection's reuse.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Http1Pool, type Http1StreamBody } from './http1-transport.js';
import { decodeWatchStream } from './watch.js';

interface Received {
  connection: number;
  method: string;
  path: string;
  body: string;
}

type Reply = (socket: net.Socket, req: Received) => void;

/** A TCP server that reads HTTP/1.1 requests (Content-Length bodies) and answers each with `reply`. */
async function scriptedServer(t: TestContext, reply: Reply) {
  const received: Received[] = [];
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    const connection = ++connections;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buf = Buffer.alloc(0);
    socket.on('data', (data: Buffer) => {
      buf = Buffer.concat([buf, data]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.toString('latin1', 0, end);
        const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        const [method = '', path = ''] = head.split(' ');
        const req = { connection, method, path, body: buf.toString('utf8', end + 4, end + 4 + length) };
        buf = buf.subarray(end + 4 + length);
        received.push(req);
        reply(socket, req);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => {
    for (const s of sockets) s.destroy();
    server.close(() => resolve());
  }));
  const port = (server.address() as net.AddressInfo).port;
  const pool = new Http1Pool({ hostname: '127.0.0.1', port });
  t.after(() => pool.destroy());
  return { pool, received, sockets };
}

function ok(socket: net.Socket, body: string, extra = ''): void {
  socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

const head = (method: string, path: string) => `${method} ${path} HTTP/1.1\r\nHost: test\r\n`;

/** Waits until cond() holds, polling, at most timeoutMs. */
async function until(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test('pool: sequential requests reuse one connection; the body is written with its head', async (t) => {
  const { pool, received } = await scriptedServer(t, (socket, req) => ok(socket, JSON.stringify({ echo: req.body })));
  const signal = AbortSignal.timeout(5000);
  const a = await pool.send('GET', head('GET', '/a'), undefined, signal);
  const b = await pool.send('PATCH', `${head('PATCH', '/b')}Content-Type: application/merge-patch+json\r\n`, '{"x":"ü"}', signal);
  assert.equal(a.status, 200);
  assert.deepEqual(JSON.parse(b.body.toString('utf8')), { echo: '{"x":"ü"}' });
  assert.deepEqual(received.map((r) => [r.connection, r.method, r.path]), [[1, 'GET', '/a'], [1, 'PATCH', '/b']]);
  assert.equal(pool.size, 1);
});

test('pool: concurrent requests open one connection each, then reuse them', async (t) => {
  const { pool, received } = await scriptedServer(t, (socket) => ok(socket, '{}'));
  const signal = AbortSignal.timeout(5000);
  await Promise.all([1, 2, 3].map(() => pool.send('GET', head('GET', '/'), undefined, signal)));
  await Promise.all([1, 2, 3].map(() => pool.send('GET', head('GET', '/'), undefined, signal)));
  assert.equal(new Set(received.map((r) => r.connection)).size, 3);
  assert.equal(pool.size, 3);
});

test('pool: a connection the server closed while idle is dropped; the next request opens a new one', async (t) => {
  const { pool, received, sockets } = await scriptedServer(t, (socket) => ok(socket, '{}'));
  const signal = AbortSignal.timeout(5000);
  await pool.send('GET', head('GET', '/'), undefined, signal);
  for (const s of sockets) s.end();
  await until(() => pool.size === 0, 'the pool to drop the closed connection');
  const res = await pool.send('GET', head('GET', '/'), undefined, signal);
  assert.equal(res.status, 200);
  assert.deepEqual(received.map((r) => r.connection), [1, 2]);
});

test('pool: a stale socket (closed by the server on the next request, nothing answered): a GET is sent again on a new connection', async (t) => {
  const { pool, received } = await scriptedServer(t, (socket, req) => {
    if (req.connection === 1 && req.path === '/second') socket.destroy(); // the server's idle timeout raced our write
    else ok(socket, '{}');
  });
  const signal = AbortSignal.timeout(5000);
  await pool.send('GET', head('GET', '/first'), undefined, signal);
  const res = await pool.send('GET', head('GET', '/second'), undefined, signal);
  assert.equal(res.status, 200);
  assert.deepEqual(received.map((r) => [r.connection, r.path]), [[1, '/first'], [1, '/second'], [2, '/second']]);
});

test('pool: a stale socket under a PATCH is not sent again: "socket hang up" (ECONNRESET), as through node\'s agent', async (t) => {
  const { pool, received } = await scriptedServer(t, (socket, req) => {
    if (req.method === 'PATCH') socket.destroy();
    else ok(socket, '{}');
  });
  const signal = AbortSignal.timeout(5000);
  await pool.send('GET', head('GET', '/'), undefined, signal);
  const err = await pool.send('PATCH', head('PATCH', '/p'), '{}', signal).catch((e: unknown) => e);
  assert.ok(err instanceof Error);
  assert.equal(err.message, 'socket hang up');
  assert.equal((err as { code?: string }).code, 'ECONNRESET');
  assert.equal(received.filter((r) => r.method === 'PATCH').length, 1);
});

test('pool: a first request on a new connection that the server closes is not retried', async (t) => {
  const { pool, received } = await scriptedServer(t, (socket) => socket.destroy());
  const err = await pool.send('GET', head('GET', '/'), undefined, AbortSignal.timeout(5000)).catch((e: unknown) => e);
  assert.ok(err instanceof Error && err.message === 'socket hang up', String(err));
  assert.equal(received.length, 1);
});

test('pool: the server closing in the middle of an answer fails the request with a clear error (not retried)', async (t) => {
  const { pool, received } = await scriptedServer(t, (socket, req) => {
    if (req.path === '/cut') {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"partial":');
      socket.end();
    } else {
      ok(socket, '{}');
    }
  });
  const signal = AbortSignal.timeout(5000);
  await pool.send('GET', head('GET', '/'), undefined, signal);
  const err = await pool.send('GET', head('GET', '/cut'), undefined, signal).catch((e: unknown) => e);
  assert.ok(err instanceof Error);
  assert.match(err.message, /connection closed before the response body ended/);
  assert.equal(received.filter((r) => r.path === '/cut').length, 1);
  await until(() => pool.size === 0, 'the cut connection to close');
});

test('pool: an abort in the middle of an answer rejects with the signal\'s reason and closes that connection only', async (t) => {
  const { pool, received } = await scriptedServer(t, (socket, req) => {
    if (req.path === '/slow') socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"par'); // and nothing more
    else ok(socket, '{}');
  });
  const signal = AbortSignal.timeout(5000);
  await Promise.all([pool.send('GET', head('GET', '/'), undefined, signal), pool.send('GET', head('GET', '/'), undefined, signal)]);
  assert.equal(pool.size, 2);
  const call = new AbortController();
  const pending = pool.send('GET', head('GET', '/slow'), undefined, call.signal);
  await until(() => received.some((r) => r.path === '/slow'), 'the slow request to arrive');
  const reason = new Error('deadline');
  call.abort(reason);
  await assert.rejects(pending, (err) => err === reason);
  await until(() => pool.size === 1, 'the aborted connection to close');
  assert.equal((await pool.send('GET', head('GET', '/'), undefined, signal)).status, 200);
});

test('pool: an already aborted signal sends nothing', async (t) => {
  const { pool, received } = await scriptedServer(t, (socket) => ok(socket, '{}'));
  const reason = new Error('gone');
  await assert.rejects(pool.send('GET', head('GET', '/'), undefined, AbortSignal.abort(reason)), (err) => err === reason);
  assert.equal(received.length, 0);
});

test('pool: "Connection: close" from the server closes that connection after its answer', async (t) => {
  const { pool, received } = await scriptedServer(t, (socket, req) => {
    ok(socket, '{}', req.connection === 1 ? 'Connection: close\r\n' : '');
  });
  const signal = AbortSignal.timeout(5000);
  await pool.send('GET', head('GET', '/'), undefined, signal);
  await pool.send('GET', head('GET', '/'), undefined, signal);
  await pool.send('GET', head('GET', '/'), undefined, signal);
  assert.deepEqual(received.map((r) => r.connection), [1, 2, 2]);
});

test('pool: garbage from the server fails the request and closes the connection', async (t) => {
  const { pool } = await scriptedServer(t, (socket) => socket.write('NOT HTTP AT ALL\r\n\r\n'));
  await assert.rejects(pool.send('GET', head('GET', '/'), undefined, AbortSignal.timeout(5000)), /malformed HTTP response: bad status line/);
  await until(() => pool.size === 0, 'the connection to close');
});

test('pool: retired, a request in flight finishes and its connection then closes; destroyed, requests fail', async (t) => {
  let release: (() => void) | undefined;
  const { pool, received } = await scriptedServer(t, (socket, req) => {
    if (req.path === '/held') release = () => ok(socket, '{"held":true}');
    else ok(socket, '{}');
  });
  const signal = AbortSignal.timeout(5000);
  await pool.send('GET', head('GET', '/'), undefined, signal);
  const held = pool.send('GET', head('GET', '/held'), undefined, signal);
  await until(() => release !== undefined, 'the held request to arrive');
  pool.retire();
  release!();
  assert.equal(JSON.parse((await held).body.toString('utf8')).held, true);
  await until(() => pool.size === 0, 'the retired pool to close its connection');
  // A request that still holds the retired pool gets a connection of its own, closed after it.
  assert.equal((await pool.send('GET', head('GET', '/'), undefined, signal)).status, 200);
  await until(() => pool.size === 0, 'the extra connection to close');
  assert.equal(new Set(received.map((r) => r.connection)).size, 2);
  pool.destroy();
  await assert.rejects(pool.send('GET', head('GET', '/'), undefined, signal), /connection pool is closed/);
});

test('pool: a refused connection fails with the system error', async (t) => {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const pool = new Http1Pool({ hostname: '127.0.0.1', port });
  t.after(() => pool.destroy());
  await assert.rejects(pool.send('GET', head('GET', '/'), undefined, AbortSignal.timeout(5000)), (err: Error & { code?: string }) => err.code === 'ECONNREFUSED');
});

// Watches.

const CHUNKED_HEAD = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
const event = (name: string) => `${JSON.stringify({ type: 'ADDED', object: { metadata: { name } } })}\n`;

/** A scripted server whose watch requests are held: the test writes to their sockets. */
async function watchServer(t: TestContext) {
  const watches: net.Socket[] = [];
  const server = await scriptedServer(t, (socket, req) => {
    if (req.path.startsWith('/watch')) watches.push(socket);
    else ok(socket, '{}');
  });
  return { ...server, watches };
}

/** Reads the body's next piece (the iteration goes on from where it stopped). */
async function next(it: AsyncIterator<Buffer>): Promise<string | undefined> {
  const r = await it.next();
  return r.done ? undefined : r.value.toString('utf8');
}

test('watch: resolves at the head; each event is handed on as it arrives; the end of the body ends it and the connection serves the next watch', async (t) => {
  const { pool, watches, received } = await watchServer(t);
  const signal = AbortSignal.timeout(5000);
  const opening = pool.stream(head('GET', '/watch?rv=1'), signal);
  await until(() => watches.length === 1, 'the watch to arrive');
  watches[0]!.write(CHUNKED_HEAD);
  const { status, body } = await opening;
  assert.equal(status, 200);
  const it = body[Symbol.asyncIterator]();
  watches[0]!.write(chunk(event('a')));
  assert.equal(await next(it), event('a'), 'the first event before the server sent more');
  watches[0]!.write(chunk(event('b')).slice(0, 10)); // a chunk cut in the middle...
  assert.equal(await next(it), event('b').slice(0, 10 - 4));
  watches[0]!.write(chunk(event('b')).slice(10)); // ...completed later
  assert.equal(await next(it), event('b').slice(6));
  watches[0]!.write('0\r\n\r\n'); // the server ends the watch (its timeoutSeconds)
  assert.equal(await next(it), undefined);
  assert.equal(pool.size, 1, 'the connection stays open');
  const again = pool.stream(head('GET', '/watch?rv=2'), signal);
  await until(() => watches.length === 2, 'the second watch to arrive');
  watches[1]!.write(`${CHUNKED_HEAD}0\r\n\r\n`);
  const second = await again;
  for await (const piece of second.body) assert.fail(`no body expected, got ${piece.toString()}`);
  assert.deepEqual(received.map((r) => [r.connection, r.path]), [[1, '/watch?rv=1'], [1, '/watch?rv=2']], 'the ended watch\'s connection was reused');
});

test('watch: decodeWatchStream over the transport, the body one byte per chunk, CRLF lines', async (t) => {
  const { pool, watches } = await watchServer(t);
  const opening = pool.stream(head('GET', '/watch'), AbortSignal.timeout(5000));
  await until(() => watches.length === 1, 'the watch to arrive');
  const text = `${event('größe 🚀').trimEnd()}\r\n${event('b')}`;
  const bytes = Buffer.from(text);
  const wire = [Buffer.from(CHUNKED_HEAD)];
  for (const b of bytes) wire.push(Buffer.from(`1\r\n`), Buffer.from([b]), Buffer.from('\r\n'));
  wire.push(Buffer.from('0\r\n\r\n'));
  watches[0]!.write(Buffer.concat(wire));
  const { body } = await opening;
  const names: string[] = [];
  for await (const e of decodeWatchStream(body)) names.push(e.object.metadata?.name ?? '');
  assert.deepEqual(names, ['größe 🚀', 'b']);
});

test('watch: a body delimited by the end of the connection ends normally when the server closes', async (t) => {
  const { pool, watches } = await watchServer(t);
  const opening = pool.stream(head('GET', '/watch'), AbortSignal.timeout(5000));
  await until(() => watches.length === 1, 'the watch to arrive');
  watches[0]!.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n${event('a')}`);
  const { body } = await opening;
  const it = body[Symbol.asyncIterator]();
  assert.equal(await next(it), event('a'));
  watches[0]!.end(event('b'));
  assert.equal(await next(it), event('b'));
  assert.equal(await next(it), undefined);
  await until(() => pool.size === 0, 'the connection to close');
});

test('watch: the server closing in the middle of a chunk fails the iteration with a clear error', async (t) => {
  const { pool, watches } = await watchServer(t);
  const opening = pool.stream(head('GET', '/watch'), AbortSignal.timeout(5000));
  await until(() => watches.length === 1, 'the watch to arrive');
  watches[0]!.write(`${CHUNKED_HEAD}${chunk(event('a'))}${chunk(event('b')).slice(0, 12)}`);
  const { body } = await opening;
  const got: string[] = [];
  const failed = (async () => {
    for await (const piece of body) got.push(piece.toString());
  })();
  await until(() => got.join('') === event('a') + event('b').slice(0, 8), 'the bytes before the cut');
  watches[0]!.end();
  await assert.rejects(failed, /malformed HTTP response: connection closed before the response body ended/);
  await until(() => pool.size === 0, 'the connection to close');
});

test('watch: an abort mid-stream ends the iteration with the signal\'s reason and destroys the socket', async (t) => {
  const { pool, watches, sockets } = await watchServer(t);
  await pool.send('GET', head('GET', '/'), undefined, AbortSignal.timeout(5000));
  const call = new AbortController();
  const opening = pool.stream(head('GET', '/watch'), call.signal);
  await until(() => watches.length === 1, 'the watch to arrive');
  assert.equal(pool.size, 1, 'in one pool a watch reuses an idle connection (KubeHttp keeps watches in a pool of their own)');
  watches[0]!.write(`${CHUNKED_HEAD}${chunk(event('a'))}`);
  const { body } = await opening;
  const it = body[Symbol.asyncIterator]();
  assert.equal(await next(it), event('a'));
  const waiting = it.next();
  const reason = new Error('stop');
  call.abort(reason);
  await assert.rejects(waiting, (err) => err === reason);
  await until(() => pool.size === 0 && sockets.size === 0, 'the watch\'s socket to close on both ends');
});

test('watch: an abort before the head rejects the open; an aborted signal sends nothing', async (t) => {
  const { pool, watches, received } = await watchServer(t);
  const call = new AbortController();
  const opening = pool.stream(head('GET', '/watch'), call.signal);
  await until(() => watches.length === 1, 'the watch to arrive');
  const reason = new Error('early');
  call.abort(reason);
  await assert.rejects(opening, (err) => err === reason);
  await until(() => pool.size === 0, 'the socket to close');
  await assert.rejects(pool.stream(head('GET', '/watch'), AbortSignal.abort(reason)), (err) => err === reason);
  assert.equal(received.length, 1);
});

test('watch: destroy() mid-stream ends the iteration and closes the connection; after the end it closes nothing', async (t) => {
  const { pool, watches } = await watchServer(t);
  const signal = AbortSignal.timeout(5000);
  const opening = pool.stream(head('GET', '/watch/1'), signal);
  await until(() => watches.length === 1, 'the watch to arrive');
  watches[0]!.write(`${CHUNKED_HEAD}${chunk(event('a'))}`);
  const { body } = await opening;
  const it = body[Symbol.asyncIterator]();
  assert.equal(await next(it), event('a'));
  const waiting = it.next();
  body.destroy();
  assert.deepEqual(await waiting, { done: true, value: undefined });
  await until(() => pool.size === 0, 'the destroyed watch\'s connection to close');
  const ended = pool.stream(head('GET', '/watch/2'), signal);
  await until(() => watches.length === 2, 'the second watch to arrive');
  watches[1]!.write(`${CHUNKED_HEAD}0\r\n\r\n`);
  const done: Http1StreamBody = (await ended).body;
  for await (const piece of done) assert.fail(`unexpected ${piece.toString()}`);
  done.destroy();
  assert.equal(pool.size, 1, 'an ended body\'s destroy leaves its (pooled) connection alone');
});

test('watch: a consumer that does not read pauses the socket at the high-water mark; reading resumes it and nothing is lost', async (t) => {
  const { pool, watches } = await watchServer(t);
  const opening = pool.stream(head('GET', '/watch'), AbortSignal.timeout(20_000));
  await until(() => watches.length === 1, 'the watch to arrive');
  const piece = `${'x'.repeat(64 * 1024 - 1)}\n`;
  const total = 512; // 32 MiB: more than the kernel's socket buffers hold
  const server = watches[0]!;
  server.write(CHUNKED_HEAD);
  const { body } = await opening;
  let written = 0;
  let blocked = false;
  const writing = (async () => {
    for (; written < total; written++) {
      if (!server.write(chunk(piece))) {
        blocked = true;
        await new Promise((resolve) => server.once('drain', resolve));
        blocked = false;
      }
    }
    server.write('0\r\n\r\n');
  })();
  // Unread, the body holds up to the mark and the server's writes back up behind it.
  await until(() => blocked && body.buffered >= 256 * 1024, 'the body to fill to its mark and the server to block', 10_000);
  assert.ok(body.buffered < 256 * 1024 + 2 * piece.length, `the body holds about the mark (${body.buffered} bytes)`);
  assert.ok(written < total, `the server's writes back up (${written} of ${total})`);
  let bytes = 0;
  for await (const b of body) bytes += b.length;
  await writing;
  assert.equal(bytes, piece.length * total);
});
