// HPACK's Huffman code (RFC 7541 section 5.2, Appendix B), decoding only: we never Huffman-encode.
// The code is canonical: codes of equal length are consecutive in symbol order and each length's
// first code follows from the previous length's. So the bit length of each of the 257 symbols
// (256 octets, then EOS) determines the whole table; below they are base-36 digits, one per
// symbol. The tests decode the RFC's Appendix C examples and what nghttp2 (node:http2) sends.

const CODE_BIT_LENGTHS =
  'dnsssssssoussussssssssusssssssss6aacd68baa8b8666555666666678f6ca' +
  'd67777777777777777777777878djde6f56565666577666567655677777fbeds' +
  'kmkkmmmnmnnnnnonoomnonnnnlmnmnnomlkmmnnlnmmolmnnllmlnmnnkmmmnmmn' +
  'qqkjmnmpqqqrrqopjlqrrqrollqqsrrrkoklmllnmmppooqnqrqqrrrrrsrrrrrq' +
  'u';
const EOS = 256;
const MAX_CODE_BITS = 30;

export class HuffmanError extends Error {}

interface CanonicalTable {
  /** Symbols ordered by (code length, symbol): the order codes are handed out in. */
  readonly symbols: Uint16Array;
  /** Per bit length: the first code of that length, where its symbols start, how many. */
  readonly firstCode: Int32Array;
  readonly firstIndex: Int32Array;
  readonly count: Int32Array;
}

function buildTable(): CanonicalTable {
  const lengths = [...CODE_BIT_LENGTHS].map((digit) => parseInt(digit, 36));
  const symbols = Uint16Array.from(lengths.map((_, symbol) => symbol).sort((a, b) => lengths[a]! - lengths[b]! || a - b));
  const firstCode = new Int32Array(MAX_CODE_BITS + 1).fill(-1);
  const firstIndex = new Int32Array(MAX_CODE_BITS + 1);
  const count = new Int32Array(MAX_CODE_BITS + 1);
  let code = 0;
  let previousLength = lengths[symbols[0]!]!;
  symbols.forEach((symbol, index) => {
    const length = lengths[symbol]!;
    if (index > 0) code = (code + 1) * 2 ** (length - previousLength);
    previousLength = length;
    if (count[length] === 0) {
      firstCode[length] = code;
      firstIndex[length] = index;
    }
    count[length]!++;
  });
  return { symbols, firstCode, firstIndex, count };
}

let table: CanonicalTable | undefined;

/** A symbol's code and its length in bits (for tests: we never encode). */
export function huffmanCodeOf(symbol: number): { code: number; bits: number } {
  const { symbols, firstCode, firstIndex } = (table ??= buildTable());
  const index = symbols.indexOf(symbol);
  for (let bits = MAX_CODE_BITS; bits > 0; bits--) {
    if (firstCode[bits]! >= 0 && index >= firstIndex[bits]!) return { code: firstCode[bits]! + index - firstIndex[bits]!, bits };
  }
  throw new RangeError(`no symbol ${symbol}`);
}

/** Decodes a Huffman-coded string literal to its octets, as a latin1 string (one char per octet). */
export function huffmanDecode(input: Uint8Array): string {
  const { symbols, firstCode, firstIndex, count } = (table ??= buildTable());
  const out = Buffer.allocUnsafe(Math.ceil((input.length * 8) / 5));
  let written = 0;
  let code = 0;
  let bits = 0;
  for (let i = 0; i < input.length; i++) {
    const byte = input[i]!;
    for (let shift = 7; shift >= 0; shift--) {
      code = code * 2 + ((byte >> shift) & 1);
      bits++;
      const offset = code - firstCode[bits]!;
      if (firstCode[bits]! >= 0 && offset >= 0 && offset < count[bits]!) {
        const symbol = symbols[firstIndex[bits]! + offset]!;
        if (symbol === EOS) throw new HuffmanError('Huffman-coded string contains EOS');
        out[written++] = symbol;
        code = 0;
        bits = 0;
      } else if (bits >= MAX_CODE_BITS) {
        throw new HuffmanError('invalid Huffman code');
      }
    }
  }
  // What is left must be padding: at most 7 bits, all ones (the start of EOS).
  if (bits > 7) throw new HuffmanError('Huffman padding longer than 7 bits');
  if (code !== 2 ** bits - 1) throw new HuffmanError('Huffman padding is not the EOS prefix');
  return out.toString('latin1', 0, written);
}
