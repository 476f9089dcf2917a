// The HTTP/1.1 response parser of the request layer's own client: every response fed whole, and
// split at every byte boundary (also one byte at a time), must give the same answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Http1ProtocolError, Http1ResponseParser, MAX_BODY_BYTES, MAX_HEAD_BYTES, type Http1Response } from './http1-parser.js';

/** Feeds the pieces; the response once complete (asserting nothing is left over), or undefined. */
function feed(pieces: Buffer[], options: { end?: boolean; noBody?: boolean } = {}): Http1Response | undefined {
  const parser = new Http1ResponseParser(options.noBody);
  let res: Http1Response | undefined;
  for (const piece of pieces) {
    const out = parser.push(piece);
    if (out !== undefined) {
      assert.equal(res, undefined, 'one response only');
      res = out;
    }
  }
  if (options.end && res === undefined) res = parser.end();
  return res;
}

/** The response the wire gives fed whole, split in two at every boundary, and byte by byte. */
function everySplit(wire: string, options: { end?: boolean; noBody?: boolean } = {}): Http1Response {
  const bytes = Buffer.from(wire, 'latin1');
  const whole = feed([bytes], options);
  assert.ok(whole !== undefined, 'complete when fed whole');
  for (let i = 1; i < bytes.length; i++) {
    const split = feed([bytes.subarray(0, i), bytes.subarray(i)], options);
    assert.deepEqual(split, whole, `split at byte ${i}`);
  }
  const single = feed([...bytes].map((b) => Buffer.from([b])), options);
  assert.deepEqual(single, whole, 'one byte at a time');
  return whole;
}

const table: Array<{ name: string; wire: string; status: number; body: string; keepAlive?: boolean; end?: boolean; noBody?: boolean }> = [
  {
    name: 'Content-Length body',
    wire: 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{"kind":"x"}\n',
    status: 200, body: '{"kind":"x"}\n',
  },
  {
    name: 'chunked body',
    wire: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n',
    status: 200, body: 'hello, world',
  },
  {
    name: 'chunked with extensions, upper-case hex and trailers',
    wire: 'HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\nA;name=value\r\n0123456789\r\n1 ; x="y"\r\n!\r\n0;last\r\nX-Trailer: 1\r\nY: two\r\n\r\n',
    status: 200, body: '0123456789!',
  },
  { name: '204 without body', wire: 'HTTP/1.1 204 No Content\r\nDate: x\r\n\r\n', status: 204, body: '' },
  { name: '304 with a Content-Length but no body', wire: 'HTTP/1.1 304 Not Modified\r\nContent-Length: 42\r\n\r\n', status: 304, body: '' },
  { name: 'HEAD answer: no body whatever the headers', wire: 'HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n', status: 200, body: '', noBody: true },
  { name: 'Content-Length 0', wire: 'HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n', status: 201, body: '' },
  { name: 'empty reason phrase', wire: 'HTTP/1.1 418 \r\nContent-Length: 2\r\n\r\n{}', status: 418, body: '{}' },
  { name: 'no reason phrase at all', wire: 'HTTP/1.1 500\r\nContent-Length: 2\r\n\r\n{}', status: 500, body: '{}' },
  {
    name: 'interim 100 Continue before the answer',
    wire: 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
    status: 200, body: 'ok',
  },
  {
    name: 'Connection: close ends keep-alive',
    wire: 'HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}', status: 403, body: '{}', keepAlive: false,
  },
  { name: 'HTTP/1.0 is not keep-alive by default', wire: 'HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx', status: 200, body: 'x', keepAlive: false },
  {
    name: 'no length: the body runs to the end of the connection',
    wire: 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end', status: 200, body: 'until the end', keepAlive: false, end: true,
  },
  {
    name: 'header values trimmed, names case-insensitive, duplicate equal lengths accepted',
    wire: 'HTTP/1.1 200 OK\r\ncontent-LENGTH:   3  \r\nContent-Length: 3\r\n\r\nabc', status: 200, body: 'abc',
  },
];

for (const row of table) {
  test(`parser: ${row.name}`, () => {
    const res = everySplit(row.wire, { ...(row.end ? { end: true } : {}), ...(row.noBody ? { noBody: true } : {}) });
    assert.equal(res.status, row.status);
    assert.equal(res.body.toString('latin1'), row.body);
    assert.equal(res.keepAlive, row.keepAlive ?? true);
  });
}

test('parser: a UTF-8 body split inside a multi-byte character decodes whole', () => {
  const body = Buffer.from('{"k":"größe 🚀"}', 'utf8');
  const head = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`, 'latin1');
  const wire = Buffer.concat([head, body]);
  for (let i = 1; i < wire.length; i++) {
    const res = feed([wire.subarray(0, i), wire.subarray(i)]);
    assert.equal(res?.body.toString('utf8'), '{"k":"größe 🚀"}', `split at ${i}`);
  }
});

const malformed: Array<{ name: string; wire: string; message: RegExp; end?: boolean }> = [
  { name: 'not HTTP', wire: 'SSH-2.0-OpenSSH\r\n\r\n', message: /bad status line "SSH-2\.0-OpenSSH"/ },
  { name: 'HTTP/2 status line', wire: 'HTTP/2 200 OK\r\n\r\n', message: /bad status line/ },
  { name: 'two-digit status', wire: 'HTTP/1.1 20 OK\r\n\r\n', message: /bad status line/ },
  { name: 'header without a colon', wire: 'HTTP/1.1 200 OK\r\nContent-Length 2\r\n\r\nok', message: /header line without a colon/ },
  { name: 'space in a header name', wire: 'HTTP/1.1 200 OK\r\nContent Length: 2\r\n\r\nok', message: /bad header name/ },
  { name: 'folded header line', wire: 'HTTP/1.1 200 OK\r\nX-A: 1\r\n  continued\r\nContent-Length: 2\r\n\r\nok', message: /header line without a colon|bad header name/ },
  { name: 'bad Content-Length', wire: 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n', message: /bad Content-Length "-1"/ },
  { name: 'conflicting Content-Length', wire: 'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab', message: /conflicting Content-Length/ },
  {
    name: 'Content-Length and chunked', wire: 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    message: /both Content-Length and chunked/,
  },
  { name: 'a coding we did not ask for', wire: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n', message: /unsupported Transfer-Encoding/ },
  { name: 'bad chunk size', wire: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', message: /bad chunk size line "zz"/ },
  { name: 'chunk data longer than its size', wire: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n', message: /chunk data not followed by CRLF/ },
  { name: 'bad trailer', wire: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nno colon\r\n\r\n', message: /bad trailer line/ },
  { name: '101 Switching Protocols', wire: 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n', message: /unexpected 101/ },
  { name: 'bytes after the response', wire: 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA', message: /bytes after the end of the response/ },
  { name: 'closed inside the head', wire: 'HTTP/1.1 200 OK\r\nContent-Le', message: /closed before the response head ended/, end: true },
  { name: 'closed inside a Content-Length body', wire: 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc', message: /closed before the response body ended/, end: true },
  { name: 'closed inside a chunked body', wire: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab', message: /closed before the response body ended/, end: true },
];

for (const row of malformed) {
  test(`parser refuses: ${row.name}`, () => {
    assert.throws(() => feed([Buffer.from(row.wire, 'latin1')], row.end ? { end: true } : {}), (err: unknown) => {
      assert.ok(err instanceof Http1ProtocolError, String(err));
      assert.match(err.message, /^malformed HTTP response: /);
      assert.match(err.message, row.message);
      return true;
    });
  });
}

test('parser refuses a head over the limit, also when it arrives in small pieces without its end', () => {
  const big = `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(MAX_HEAD_BYTES)}`;
  assert.throws(() => feed([Buffer.from(big)]), /head larger than 16384 bytes/);
  const parser = new Http1ResponseParser();
  const piece = Buffer.from('X-Pad: 0123456789012345678901234567890123456789\r\n');
  parser.push(Buffer.from('HTTP/1.1 200 OK\r\n'));
  assert.throws(() => {
    for (let i = 0; i < MAX_HEAD_BYTES; i++) parser.push(piece);
  }, /head larger than 16384 bytes/);
});

test('parser refuses a body over the limit before reading it (Content-Length and chunk sizes)', () => {
  assert.throws(() => feed([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${MAX_BODY_BYTES + 1}\r\n\r\n`)]), /body larger than/);
  const size = (MAX_BODY_BYTES / 2 + 1).toString(16);
  const parser = new Http1ResponseParser();
  parser.push(Buffer.from(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${size}\r\n`));
  parser.push(Buffer.alloc(MAX_BODY_BYTES / 2 + 1));
  assert.throws(() => parser.push(Buffer.from(`\r\n${size}\r\n`)), /body larger than/);
});

test('parser: an error message quotes at most a short excerpt of what the server sent', () => {
  const junk = `XYZ ${'q'.repeat(500)}\r\n\r\n`;
  assert.throws(() => feed([Buffer.from(junk)]), (err: Error) => err.message.length < 120);
});

/** What a streaming parser handed its sink, and what push/end returned. */
interface Streamed {
  heads: Array<{ status: number; keepAlive: boolean }>;
  /** The body bytes as the sink got them, one string per call. */
  pieces: string[];
  /** Whether the head arrived before the first body byte. */
  headFirst: boolean;
  done: Http1Response | undefined;
}

function feedStreaming(pieces: Buffer[], options: { end?: boolean } = {}): Streamed {
  const out: Streamed = { heads: [], pieces: [], headFirst: true, done: undefined };
  const parser = new Http1ResponseParser(false, {
    onHead: (status, keepAlive) => out.heads.push({ status, keepAlive }),
    onBody: (chunk) => {
      assert.ok(chunk.length > 0, 'never an empty body piece');
      if (out.heads.length === 0) out.headFirst = false;
      out.pieces.push(chunk.toString('latin1'));
    },
  });
  for (const piece of pieces) {
    const res = parser.push(piece);
    if (res !== undefined) {
      assert.equal(out.done, undefined, 'one response only');
      out.done = res;
    }
  }
  if (options.end && out.done === undefined) out.done = parser.end();
  return out;
}

const streamedTable: Array<{ name: string; wire: string; status: number; body: string; keepAlive: boolean; complete: boolean; end?: boolean }> = [
  {
    name: 'chunked watch: events in chunks with extensions, then the terminating chunk and a trailer',
    wire: 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n'
      + '10\r\n{"type":"ADDED"}\r\n' + '1;ext=1\r\n\n\r\n' + '3\r\nabc\r\n' + '0\r\nX-T: 1\r\n\r\n',
    status: 200, body: '{"type":"ADDED"}\nabc', keepAlive: true, complete: true,
  },
  {
    name: 'chunked watch still open: the bytes so far, no end',
    wire: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\nwor',
    status: 200, body: 'hellowor', keepAlive: true, complete: false,
  },
  {
    name: 'Content-Length body',
    wire: 'HTTP/1.1 410 Gone\r\nContent-Length: 12\r\n\r\n{"code":410}',
    status: 410, body: '{"code":410}', keepAlive: true, complete: true,
  },
  {
    name: 'until close: the bytes as they come, complete at the end of the connection',
    wire: 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"a":1}\n{"b":2}\n',
    status: 200, body: '{"a":1}\n{"b":2}\n', keepAlive: false, complete: true, end: true,
  },
  {
    name: 'an interim 100 Continue head is not handed on',
    wire: 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
    status: 200, body: 'ok', keepAlive: true, complete: true,
  },
];

for (const row of streamedTable) {
  test(`parser, streaming: ${row.name}; split at every byte and byte by byte`, () => {
    const bytes = Buffer.from(row.wire, 'latin1');
    const splits: Buffer[][] = [[bytes], [...bytes].map((b) => Buffer.from([b]))];
    for (let i = 1; i < bytes.length; i++) splits.push([bytes.subarray(0, i), bytes.subarray(i)]);
    for (const [n, pieces] of splits.entries()) {
      const what = `split ${n}`;
      const out = feedStreaming(pieces, row.end ? { end: true } : {});
      assert.deepEqual(out.heads, [{ status: row.status, keepAlive: row.keepAlive }], what);
      assert.ok(out.headFirst, `${what}: the head before the body`);
      assert.equal(out.pieces.join(''), row.body, what);
      assert.equal(out.done !== undefined, row.complete, `${what}: complete`);
      if (out.done !== undefined) {
        assert.equal(out.done.body.length, 0, `${what}: nothing buffered`);
        assert.equal(out.done.status, row.status);
      }
    }
  });
}

test('parser, streaming: body bytes are handed on as each piece arrives, not held for the end', () => {
  const bodies: string[] = [];
  const parser = new Http1ResponseParser(false, { onHead: () => {}, onBody: (c) => bodies.push(c.toString()) });
  parser.push(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'));
  parser.push(Buffer.from('4\r\nab'));
  assert.deepEqual(bodies, ['ab'], 'part of a chunk is delivered before the rest of it arrives');
  parser.push(Buffer.from('cd\r\n'));
  assert.deepEqual(bodies, ['ab', 'cd']);
});

test('parser, streaming: no body limit (a watch runs past what a buffered body may hold)', () => {
  let received = 0;
  const parser = new Http1ResponseParser(false, { onHead: () => {}, onBody: (c) => (received += c.length) });
  const size = (MAX_BODY_BYTES / 2 + 1).toString(16);
  parser.push(Buffer.from(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${size}\r\n`));
  parser.push(Buffer.alloc(MAX_BODY_BYTES / 2 + 1));
  parser.push(Buffer.from(`\r\n${size}\r\n`));
  assert.equal(received, MAX_BODY_BYTES / 2 + 1);
});

test('parser, streaming: a connection closed inside a chunk, and a malformed chunk, are errors', () => {
  assert.throws(() => feedStreaming([Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab')], { end: true }), /closed before the response body ended/);
  assert.throws(() => feedStreaming([Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n')]), /chunk data not followed by CRLF/);
});
