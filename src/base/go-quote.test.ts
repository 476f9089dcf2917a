// strconv.Quote and QuoteToASCII as Go writes them, for what our strings and byte values can
// carry. Expected values are Go's (go1.26 strconv, Unicode 15.0); the seeded differential test in
// test/oracle checks many more strings against Go itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goQuote, goTimeQuote } from './go-quote.js';

const rows: Array<{ name: string; in: string | Uint8Array; quote: string; ascii: string }> = [
  { name: 'empty', in: '', quote: '""', ascii: '""' },
  { name: 'plain ASCII', in: 'PVC ns/data', quote: '"PVC ns/data"', ascii: '"PVC ns/data"' },
  { name: '% is not a verb here', in: '100% %d %s %q %%', quote: '"100% %d %s %q %%"', ascii: '"100% %d %s %q %%"' },
  { name: 'quote and backslash', in: 'a"b\\c', quote: '"a\\"b\\\\c"', ascii: '"a\\"b\\\\c"' },
  { name: 'C escapes', in: '\x07\b\f\n\r\t\v', quote: '"\\a\\b\\f\\n\\r\\t\\v"', ascii: '"\\a\\b\\f\\n\\r\\t\\v"' },
  { name: 'other control characters and DEL', in: '\x00\x1b\x7f', quote: '"\\x00\\x1b\\x7f"', ascii: '"\\x00\\x1b\\x7f"' },
  { name: 'C1 control', in: '\u0085', quote: '"\\u0085"', ascii: '"\\u0085"' },
  { name: 'printable Unicode', in: 'größe 日本 🙂', quote: '"größe 日本 🙂"', ascii: '"gr\\u00f6\\u00dfe \\u65e5\\u672c \\U0001f642"' },
  { name: 'non-ASCII spaces are not printable', in: '\u00a0\u3000', quote: '"\\u00a0\\u3000"', ascii: '"\\u00a0\\u3000"' },
  { name: 'format characters', in: '\u200b\u2028\ufeff', quote: '"\\u200b\\u2028\\ufeff"', ascii: '"\\u200b\\u2028\\ufeff"' },
  { name: 'private use and noncharacters', in: '\ue000\uffff\u{10ffff}', quote: '"\\ue000\\uffff\\U0010ffff"', ascii: '"\\ue000\\uffff\\U0010ffff"' },
  { name: 'a tag character', in: '\u{e0001}', quote: '"\\U000e0001"', ascii: '"\\U000e0001"' },
  { name: 'assigned after Unicode 15.0: Go 1.26 escapes it', in: '\u088f\u{1fae9}', quote: '"\\u088f\\U0001fae9"', ascii: '"\\u088f\\U0001fae9"' },
  { name: 'a lone surrogate is U+FFFD once written as UTF-8', in: 'a\ud800b', quote: '"a\ufffdb"', ascii: '"a\\ufffdb"' },
  { name: 'bytes: valid UTF-8', in: Buffer.from('größe', 'utf8'), quote: '"größe"', ascii: '"gr\\u00f6\\u00dfe"' },
  { name: 'bytes: an invalid byte is \\x', in: Uint8Array.from([0x61, 0xff, 0x62]), quote: '"a\\xffb"', ascii: '"a\\xffb"' },
  { name: 'bytes: a lone continuation byte', in: Uint8Array.from([0x80, 0x41]), quote: '"\\x80A"', ascii: '"\\x80A"' },
  { name: 'bytes: a sequence cut short', in: Uint8Array.from([0xe2, 0x82]), quote: '"\\xe2\\x82"', ascii: '"\\xe2\\x82"' },
  {
    name: 'bytes: an overlong form',
    in: Uint8Array.from([0xc0, 0x80, 0xe0, 0x80, 0x80]),
    quote: '"\\xc0\\x80\\xe0\\x80\\x80"',
    ascii: '"\\xc0\\x80\\xe0\\x80\\x80"',
  },
  { name: 'bytes: an encoded surrogate', in: Uint8Array.from([0xed, 0xa0, 0x80]), quote: '"\\xed\\xa0\\x80"', ascii: '"\\xed\\xa0\\x80"' },
  { name: 'bytes: beyond U+10FFFF', in: Uint8Array.from([0xf4, 0x90, 0x80, 0x80]), quote: '"\\xf4\\x90\\x80\\x80"', ascii: '"\\xf4\\x90\\x80\\x80"' },
  { name: 'bytes: U+FFFD itself is valid', in: Uint8Array.from([0xef, 0xbf, 0xbd]), quote: '"\ufffd"', ascii: '"\\ufffd"' },
  { name: 'bytes: a four-byte character', in: Uint8Array.from([0xf0, 0x9f, 0x99, 0x82]), quote: '"🙂"', ascii: '"\\U0001f642"' },
  { name: 'bytes: quote, backslash and NUL', in: Uint8Array.from([0x22, 0x5c, 0x00]), quote: '"\\"\\\\\\x00"', ascii: '"\\"\\\\\\x00"' },
];

for (const row of rows) {
  test(`strconv.Quote and QuoteToASCII: ${row.name}`, () => {
    assert.equal(goQuote(row.in), row.quote);
    assert.equal(goQuote(row.in, { asciiOnly: true }), row.ascii);
  });
}

test("the time package's quote: every non-ASCII byte and control character as \\x", () => {
  assert.equal(goTimeQuote('5 größe\t"x"'), '"5 gr\\xc3\\xb6\\xc3\\x9fe\\x09\\"x\\""');
});
