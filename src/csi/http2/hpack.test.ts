// HPACK against the examples of RFC 7541 Appendix C (the header lists and the dynamic table after
// each block), Huffman strings, and blocks that must be refused. The decoder also reads what
// nghttp2 sends in every channel test (src/csi/grpc-channel.test.ts, http2/connection.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeHeaderBlock, HpackDecoder, HpackError, type HeaderField } from './hpack.js';
import { huffmanCodeOf, huffmanDecode, HuffmanError } from './huffman.js';

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'hex');

interface Step {
  block: string;
  fields: HeaderField[];
  table: HeaderField[];
  size: number;
}

const request1: HeaderField[] = [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com']];
const request2: HeaderField[] = [...request1, ['cache-control', 'no-cache']];
const request3: HeaderField[] = [[':method', 'GET'], [':scheme', 'https'], [':path', '/index.html'], [':authority', 'www.example.com'], ['custom-key', 'custom-value']];
const requestTables: Array<{ table: HeaderField[]; size: number }> = [
  { table: [[':authority', 'www.example.com']], size: 57 },
  { table: [['cache-control', 'no-cache'], [':authority', 'www.example.com']], size: 110 },
  { table: [['custom-key', 'custom-value'], ['cache-control', 'no-cache'], [':authority', 'www.example.com']], size: 164 },
];
const date1 = 'Mon, 21 Oct 2013 20:13:21 GMT';
const date2 = 'Mon, 21 Oct 2013 20:13:22 GMT';
const location = 'https://www.example.com';
const cookie = 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1';
const response1: HeaderField[] = [[':status', '302'], ['cache-control', 'private'], ['date', date1], ['location', location]];
const response2: HeaderField[] = [[':status', '307'], ['cache-control', 'private'], ['date', date1], ['location', location]];
const response3: HeaderField[] = [[':status', '200'], ['cache-control', 'private'], ['date', date2], ['location', location], ['content-encoding', 'gzip'], ['set-cookie', cookie]];
const responseTables: Array<{ table: HeaderField[]; size: number }> = [
  { table: [['location', location], ['date', date1], ['cache-control', 'private'], [':status', '302']], size: 222 },
  { table: [[':status', '307'], ['location', location], ['date', date1], ['cache-control', 'private']], size: 222 },
  { table: [['set-cookie', cookie], ['content-encoding', 'gzip'], ['date', date2]], size: 215 },
];

const series: Array<{ name: string; tableSize: number; steps: Step[] }> = [
  {
    name: 'C.3 requests without Huffman',
    tableSize: 4096,
    steps: [
      { block: '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d', fields: request1, ...requestTables[0]! },
      { block: '8286 84be 5808 6e6f 2d63 6163 6865', fields: request2, ...requestTables[1]! },
      { block: '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65', fields: request3, ...requestTables[2]! },
    ],
  },
  {
    name: 'C.4 requests with Huffman',
    tableSize: 4096,
    steps: [
      { block: '8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff', fields: request1, ...requestTables[0]! },
      { block: '8286 84be 5886 a8eb 1064 9cbf', fields: request2, ...requestTables[1]! },
      { block: '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf', fields: request3, ...requestTables[2]! },
    ],
  },
  {
    name: 'C.5 responses without Huffman, 256-octet table (evictions)',
    tableSize: 256,
    steps: [
      {
        block: `4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
                2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d`,
        fields: response1, ...responseTables[0]!,
      },
      { block: '4803 3330 37c1 c0bf', fields: response2, ...responseTables[1]! },
      {
        block: `88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
                54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
                5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31`,
        fields: response3, ...responseTables[2]!,
      },
    ],
  },
  {
    name: 'C.6 responses with Huffman, 256-octet table (evictions)',
    tableSize: 256,
    steps: [
      {
        block: `4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
                2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3`,
        fields: response1, ...responseTables[0]!,
      },
      { block: '4883 640e ffc1 c0bf', fields: response2, ...responseTables[1]! },
      {
        block: `88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
                77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
                9587 3160 65c0 03ed 4ee5 b106 3d50 07`,
        fields: response3, ...responseTables[2]!,
      },
    ],
  },
];

for (const { name, tableSize, steps } of series) {
  test(`RFC 7541 ${name}: header lists and the dynamic table after each block`, () => {
    // The examples' encoder works with a table of tableSize: our decoder is told so by a size
    // update, as a peer would send after our SETTINGS_HEADER_TABLE_SIZE.
    const decoder = new HpackDecoder(4096);
    // 256 with a 5-bit prefix: 31, then 225 = 0x61 + 1 * 128.
    if (tableSize === 256) decoder.decode(Buffer.from([0x3f, 0xe1, 0x01]));
    steps.forEach((step, i) => {
      assert.deepEqual(decoder.decode(hex(step.block)), step.fields, `block ${i + 1}`);
      assert.deepEqual(decoder.dynamicTable.entries, step.table, `table after block ${i + 1}`);
      assert.equal(decoder.dynamicTable.size, step.size, `table size after block ${i + 1}`);
    });
  });
}

test('RFC 7541 C.1: integers with a 5-bit prefix (10, 1337) and an 8-bit one (42), through size updates', () => {
  const decoder = new HpackDecoder(4096);
  decoder.decode(Buffer.from([0x20 | 10])); // C.1.1: 10 fits the prefix
  decoder.decode(Buffer.from([0x3f, 0x9a, 0x0a])); // C.1.2: 1337 = 31 + 26 + 10*128
  assert.equal(decoder.dynamicTable.size, 0);
  assert.throws(() => decoder.decode(Buffer.from([0x3f, 0xe2, 0x1f])), /size update to 4097, over the 4096 allowed/);
});

test('RFC 7541 C.2: a literal with indexing, without indexing, never indexed, and an indexed field', () => {
  const decoder = new HpackDecoder();
  assert.deepEqual(decoder.decode(hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572')), [['custom-key', 'custom-header']]);
  assert.equal(decoder.dynamicTable.size, 55);
  assert.deepEqual(decoder.decode(hex('040c 2f73 616d 706c 652f 7061 7468')), [[':path', '/sample/path']]);
  assert.deepEqual(decoder.decode(hex('1008 7061 7373 776f 7264 0673 6563 7265 74')), [['password', 'secret']]);
  assert.deepEqual(decoder.decode(hex('82')), [[':method', 'GET']]);
  assert.equal(decoder.dynamicTable.entries.length, 1, 'only the first literal was indexed');
});

test('Huffman strings: RFC examples, and padding and EOS errors', () => {
  assert.equal(huffmanDecode(hex('f1e3 c2e5 f23a 6ba0 ab90 f4ff')), 'www.example.com');
  assert.equal(huffmanDecode(hex('a8eb 1064 9cbf')), 'no-cache');
  assert.equal(huffmanDecode(hex('25a8 49e9 5ba9 7d7f')), 'custom-key');
  assert.equal(huffmanDecode(hex('6402')), '302');
  assert.equal(huffmanDecode(Buffer.alloc(0)), '');
  // '0' is 00000 (5 bits): three padding ones complete the octet; zeros there are not EOS.
  assert.equal(huffmanDecode(Buffer.from([0b00000111])), '0');
  assert.throws(() => huffmanDecode(Buffer.from([0b00000000])), HuffmanError);
  // A whole octet of ones is more than 7 bits of padding.
  assert.throws(() => huffmanDecode(Buffer.from([0b00000111, 0xff])), /longer than 7 bits/);
  // EOS itself (30 ones) inside a string.
  assert.throws(() => huffmanDecode(Buffer.from([0xff, 0xff, 0xff, 0xff])), /EOS/);
});

test('Huffman table: codes RFC 7541 Appendix B lists, a complete code (Kraft sum 1), every octet round-trips', () => {
  const listed: Array<[symbol: number, code: number, bits: number]> = [
    [0, 0x1ff8, 13], [9, 0xffffea, 24], [32, 0x14, 6], [48, 0x0, 5], [97, 0x3, 5], [200, 0x3ffffe2, 26], [255, 0x3ffffee, 26], [256, 0x3fffffff, 30],
  ];
  for (const [symbol, code, bits] of listed) assert.deepEqual(huffmanCodeOf(symbol), { code, bits }, `symbol ${symbol}`);
  let kraft = 0;
  for (let symbol = 0; symbol <= 256; symbol++) kraft += 2 ** -huffmanCodeOf(symbol).bits;
  assert.equal(kraft, 1);
  // All 256 octets, each alone and all in one string, packed with the table's own codes.
  const all = Array.from({ length: 256 }, (_, i) => i);
  for (const symbol of all) assert.equal(huffmanDecode(pack([symbol])), String.fromCharCode(symbol));
  assert.equal(huffmanDecode(pack(all)), String.fromCharCode(...all));
});

/** Huffman-encodes octets bit by bit with huffmanCodeOf, padding with ones. */
function pack(symbols: number[]): Buffer {
  let bitString = '';
  for (const symbol of symbols) {
    const { code, bits } = huffmanCodeOf(symbol);
    bitString += code.toString(2).padStart(bits, '0');
  }
  bitString += '1'.repeat((8 - (bitString.length % 8)) % 8);
  return Buffer.from(bitString.match(/.{8}/g)?.map((octet) => parseInt(octet, 2)) ?? []);
}

const malformed: Array<{ name: string; block: Buffer; error: RegExp }> = [
  { name: 'index 0', block: Buffer.from([0x80]), error: /index 0/ },
  { name: 'an index beyond both tables', block: Buffer.from([0xbe]), error: /index 62 is beyond the tables/ },
  { name: 'an integer cut short', block: Buffer.from([0xff]), error: /ends inside an integer/ },
  { name: 'an integer over 2^31', block: Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]), error: /too large/ },
  { name: 'a string cut short', block: Buffer.from([0x40, 0x05, 0x61]), error: /ends inside a string/ },
  { name: 'a literal without its value', block: Buffer.from([0x40, 0x01, 0x61]), error: /ends before a string/ },
  { name: 'a size update after a field', block: Buffer.from([0x82, 0x20]), error: /size update after the first header field/ },
  { name: 'a size update over our setting', block: Buffer.from([0x3f, 0xe2, 0x1f]), error: /over the 4096 allowed/ },
  { name: 'bad Huffman padding', block: Buffer.from([0x40, 0x81, 0x00, 0x00]), error: /padding/ },
];
for (const { name, block, error } of malformed) {
  test(`a header block with ${name} is refused with an HpackError`, () => {
    assert.throws(() => new HpackDecoder().decode(block), (err: unknown) => err instanceof HpackError && error.test(err.message));
  });
}

test('a decoded header list over the limit is refused', () => {
  const decoder = new HpackDecoder(4096, 100);
  const value = 'x'.repeat(80);
  assert.throws(() => decoder.decode(Buffer.concat([Buffer.from([0x00, 0x01, 0x61, 80]), Buffer.from(value)])), /header list larger than 100 octets/);
});

test('an entry larger than the whole table empties it and is not added', () => {
  const decoder = new HpackDecoder(4096);
  decoder.decode(hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572'));
  decoder.decode(Buffer.from([0x3f, 0x1d])); // size update to 60: the 55-octet entry stays
  assert.equal(decoder.dynamicTable.entries.length, 1);
  decoder.decode(Buffer.concat([Buffer.from([0x40, 0x01, 0x61, 40]), Buffer.alloc(40, 0x62)]));
  assert.deepEqual(decoder.dynamicTable, { entries: [], size: 0 });
});

test('the encoder: static indexes for exact matches, name indexes, new names; our decoder reads it back', () => {
  const fields: HeaderField[] = [[':method', 'POST'], [':scheme', 'http'], [':path', '/csi.v1.Controller/ControllerExpandVolume'], [':authority', 'localhost'],
    ['content-type', 'application/grpc'], ['te', 'trailers'], ['grpc-timeout', '99999999H'], ['user-agent', 'csi-resizer/1.0'], ['x-long', 'v'.repeat(300)]];
  const block = encodeHeaderBlock(fields);
  assert.equal(block[0], 0x83, ':method POST is static index 3');
  assert.equal(block[1], 0x86, ':scheme http is static index 6');
  assert.equal(block[2], 0x04, ':path by name index 4, not indexed');
  const decoder = new HpackDecoder();
  assert.deepEqual(decoder.decode(block), fields);
  assert.equal(decoder.dynamicTable.entries.length, 0, 'nothing added to the peer table');
  assert.throws(() => encodeHeaderBlock([['x', 'é✓']]), /not latin1/);
});
