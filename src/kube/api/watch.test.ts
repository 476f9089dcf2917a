// decodeWatchStream cuts lines on raw bytes: events split across chunks anywhere (inside a UTF-8
// sequence too), several events in one chunk, blank and padded lines, and a last line without
// its newline all decode as the server sent them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { decodeWatchStream, type WatchBytes, type WatchEvent } from './watch.js';

function response(chunks: Buffer[]): WatchBytes {
  return Readable.from(chunks, { objectMode: false });
}

async function decodeAll(chunks: Buffer[]): Promise<WatchEvent[]> {
  const events: WatchEvent[] = [];
  for await (const event of decodeWatchStream(response(chunks))) events.push(event);
  return events;
}

const events: WatchEvent[] = [
  { type: 'ADDED', object: { metadata: { name: 'a', annotations: { note: 'größer – 大きい 🚀' } } } },
  { type: 'MODIFIED', object: { metadata: { name: 'b', resourceVersion: '12' } } },
  { type: 'BOOKMARK', object: { metadata: { resourceVersion: '13' } } as WatchEvent['object'] },
];
const stream = Buffer.from(events.map((e) => `${JSON.stringify(e)}\n`).join(''));

test('every split of the byte stream into two chunks decodes the same events', async () => {
  for (let cut = 0; cut <= stream.length; cut++) {
    assert.deepEqual(await decodeAll([stream.subarray(0, cut), stream.subarray(cut)]), events, `cut at byte ${cut}`);
  }
});

test('one byte per chunk, multi-byte characters included', async () => {
  const bytes = [...stream].map((b) => Buffer.from([b]));
  assert.deepEqual(await decodeAll(bytes), events);
});

test('blank lines are skipped; CRLF, padded lines and a last line without newline decode', async () => {
  const [a, b, c] = events.map((e) => JSON.stringify(e));
  const text = `\n${a}\r\n   \n  ${b}  \n\u00a0${c}`;
  assert.deepEqual(await decodeAll([Buffer.from(text)]), events);
});

test('a malformed line is an error that names it', async () => {
  await assert.rejects(decodeAll([Buffer.from('{"type":"ADDED"}\n')]), /malformed watch event: \{"type":"ADDED"\}/);
  await assert.rejects(decodeAll([Buffer.from('not json\n')]), SyntaxError);
});
