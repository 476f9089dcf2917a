// HPACK (RFC 7541): header compression for HTTP/2. The decoder is complete (static and dynamic
// table, size updates and eviction, integers, literals, Huffman); the encoder is the simplest
// the format allows (a static-table index for an exact match, otherwise a literal that is not
// indexed, never Huffman), so the peer's table-size setting never concerns us. Strings are held
// as latin1 (one char per octet), so lengths are octet counts and nothing is lost.
import { huffmanDecode, HuffmanError } from './huffman.js';

export type HeaderField = readonly [name: string, value: string];

/** RFC 7541 Appendix A, index 1 to 61. */
const STATIC_TABLE: readonly HeaderField[] = [
  [':authority', ''], [':method', 'GET'], [':method', 'POST'], [':path', '/'], [':path', '/index.html'],
  [':scheme', 'http'], [':scheme', 'https'], [':status', '200'], [':status', '204'], [':status', '206'],
  [':status', '304'], [':status', '400'], [':status', '404'], [':status', '500'], ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'], ['accept-language', ''], ['accept-ranges', ''], ['accept', ''],
  ['access-control-allow-origin', ''], ['age', ''], ['allow', ''], ['authorization', ''], ['cache-control', ''],
  ['content-disposition', ''], ['content-encoding', ''], ['content-language', ''], ['content-length', ''],
  ['content-location', ''], ['content-range', ''], ['content-type', ''], ['cookie', ''], ['date', ''], ['etag', ''],
  ['expect', ''], ['expires', ''], ['from', ''], ['host', ''], ['if-match', ''], ['if-modified-since', ''],
  ['if-none-match', ''], ['if-range', ''], ['if-unmodified-since', ''], ['last-modified', ''], ['link', ''],
  ['location', ''], ['max-forwards', ''], ['proxy-authenticate', ''], ['proxy-authorization', ''], ['range', ''],
  ['referer', ''], ['refresh', ''], ['retry-after', ''], ['server', ''], ['set-cookie', ''],
  ['strict-transport-security', ''], ['transfer-encoding', ''], ['user-agent', ''], ['vary', ''], ['via', ''],
  ['www-authenticate', ''],
];
export const STATIC_TABLE_LENGTH = STATIC_TABLE.length;
/** Per entry, besides its octets (RFC 7541 section 4.1). */
const ENTRY_OVERHEAD = 32;

export class HpackError extends Error {}

/** One decoder per connection: its dynamic table follows the peer's encoder across header blocks. */
export class HpackDecoder {
  // Newest first: index 62 is entries[0].
  private entries: HeaderField[] = [];
  private size = 0;
  private maxSize: number;

  /**
   * @param maxTableSize the SETTINGS_HEADER_TABLE_SIZE we advertise: the peer may not ask for more.
   * @param maxListOctets decoded header lists larger than this are refused (name + value + 32 each).
   */
  constructor(
    private readonly maxTableSize = 4096,
    private readonly maxListOctets = 1 << 20,
  ) {
    this.maxSize = maxTableSize;
  }

  /** The dynamic table's entries, newest first, and its size in octets: for tests. */
  get dynamicTable(): { entries: readonly HeaderField[]; size: number } {
    return { entries: this.entries, size: this.size };
  }

  /** Decodes one complete header block. Throws HpackError: the connection cannot go on after that. */
  decode(block: Uint8Array): HeaderField[] {
    const fields: HeaderField[] = [];
    const cursor = { block, at: 0 };
    let listOctets = 0;
    let mayUpdateSize = true;
    while (cursor.at < block.length) {
      const first = block[cursor.at]!;
      if (first & 0x80) {
        // Indexed header field.
        fields.push(this.lookup(readInteger(cursor, 7)));
      } else if ((first & 0xe0) === 0x20) {
        // Dynamic table size update: only at the start of a block.
        if (!mayUpdateSize) throw new HpackError('dynamic table size update after the first header field');
        const size = readInteger(cursor, 5);
        if (size > this.maxTableSize) throw new HpackError(`dynamic table size update to ${size}, over the ${this.maxTableSize} allowed`);
        this.maxSize = size;
        this.evict(0);
        continue;
      } else {
        // Literal: with incremental indexing (01), without indexing (0000) or never indexed (0001).
        const indexed = (first & 0xc0) === 0x40;
        const nameIndex = readInteger(cursor, indexed ? 6 : 4);
        const name = nameIndex === 0 ? readString(cursor) : this.lookup(nameIndex)[0];
        const field: HeaderField = [name, readString(cursor)];
        if (indexed) this.insert(field);
        fields.push(field);
      }
      mayUpdateSize = false;
      const last = fields[fields.length - 1]!;
      listOctets += last[0].length + last[1].length + ENTRY_OVERHEAD;
      if (listOctets > this.maxListOctets) throw new HpackError(`header list larger than ${this.maxListOctets} octets`);
    }
    return fields;
  }

  private lookup(index: number): HeaderField {
    if (index === 0) throw new HpackError('header index 0');
    if (index <= STATIC_TABLE.length) return STATIC_TABLE[index - 1]!;
    const entry = this.entries[index - STATIC_TABLE.length - 1];
    if (!entry) throw new HpackError(`header index ${index} is beyond the tables (dynamic table has ${this.entries.length} entries)`);
    return entry;
  }

  private insert(field: HeaderField): void {
    const octets = field[0].length + field[1].length + ENTRY_OVERHEAD;
    this.evict(octets);
    // An entry larger than the table empties it and is not added (RFC 7541 section 4.4).
    if (octets > this.maxSize) return;
    this.entries.unshift(field);
    this.size += octets;
  }

  /** Evicts the oldest entries until `room` more octets fit. */
  private evict(room: number): void {
    while (this.entries.length > 0 && this.size + room > this.maxSize) {
      const [name, value] = this.entries.pop()!;
      this.size -= name.length + value.length + ENTRY_OVERHEAD;
    }
  }
}

interface Cursor {
  readonly block: Uint8Array;
  at: number;
}

/** An integer with an N-bit prefix (RFC 7541 section 5.1); values past 2^31 are refused. */
function readInteger(cursor: Cursor, prefixBits: number): number {
  const { block } = cursor;
  const limit = 2 ** prefixBits - 1;
  let value = block[cursor.at++]! & limit;
  if (value < limit) return value;
  let factor = 1;
  for (;;) {
    if (cursor.at >= block.length) throw new HpackError('header block ends inside an integer');
    const byte = block[cursor.at++]!;
    value += (byte & 0x7f) * factor;
    if (value > 0x7fffffff) throw new HpackError('integer in header block too large');
    if ((byte & 0x80) === 0) return value;
    factor *= 128;
  }
}

function readString(cursor: Cursor): string {
  if (cursor.at >= cursor.block.length) throw new HpackError('header block ends before a string');
  const huffman = (cursor.block[cursor.at]! & 0x80) !== 0;
  const length = readInteger(cursor, 7);
  const end = cursor.at + length;
  if (end > cursor.block.length) throw new HpackError('header block ends inside a string');
  const octets = cursor.block.subarray(cursor.at, end);
  cursor.at = end;
  if (!huffman) return Buffer.from(octets.buffer, octets.byteOffset, octets.length).toString('latin1');
  try {
    return huffmanDecode(octets);
  } catch (err) {
    if (err instanceof HuffmanError) throw new HpackError(err.message);
    throw err;
  }
}

/** Static entries with a value, by name then value; and the first static entry of each name. */
const STATIC_EXACT = new Map<string, Map<string, number>>();
const STATIC_NAME = new Map<string, number>();
STATIC_TABLE.forEach(([name, value], i) => {
  if (value !== '') (STATIC_EXACT.get(name) ?? STATIC_EXACT.set(name, new Map()).get(name)!).set(value, i + 1);
  if (!STATIC_NAME.has(name)) STATIC_NAME.set(name, i + 1);
});

/** Encodes a header list (names lowercase, values latin1/ASCII) without touching any dynamic table. */
export function encodeHeaderBlock(fields: readonly HeaderField[]): Buffer {
  // At most 6 octets of integer per index or length (values under 2^31), then the strings.
  let bound = 0;
  for (const [name, value] of fields) bound += 18 + name.length + value.length;
  const out = Buffer.allocUnsafe(bound);
  let at = 0;
  for (const [name, value] of fields) {
    const exact = STATIC_EXACT.get(name)?.get(value);
    if (exact !== undefined) {
      at = writeInteger(out, at, exact, 7, 0x80);
      continue;
    }
    // Literal header field without indexing: name by static index where there is one.
    const nameIndex = STATIC_NAME.get(name) ?? 0;
    at = writeInteger(out, at, nameIndex, 4, 0x00);
    if (nameIndex === 0) at = writeString(out, at, name);
    at = writeString(out, at, value);
  }
  return out.subarray(0, at);
}

function writeInteger(out: Buffer, at: number, value: number, prefixBits: number, pattern: number): number {
  const limit = 2 ** prefixBits - 1;
  if (value < limit) {
    out[at++] = pattern | value;
    return at;
  }
  out[at++] = pattern | limit;
  let rest = value - limit;
  while (rest >= 128) {
    out[at++] = (rest % 128) | 0x80;
    rest = Math.floor(rest / 128);
  }
  out[at++] = rest;
  return at;
}

const NOT_LATIN1 = /[^\x00-\xff]/;

function writeString(out: Buffer, at: number, value: string): number {
  if (NOT_LATIN1.test(value)) throw new HpackError(`header value ${JSON.stringify(value)} is not latin1`);
  at = writeInteger(out, at, value.length, 7, 0x00);
  return at + out.write(value, at, 'latin1');
}
