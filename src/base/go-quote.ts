// Go's ways of quoting text, so every message we share with the Go sidecar matches it byte for
// byte: strconv.Quote (fmt's %q: the flag package's errors, klog's text values and messages) and
// strconv.QuoteToASCII (fmt's %+q: klog's []byte values), of a string or of raw bytes, and the
// time package's own quote (time.ParseDuration's errors). One implementation for the flags and the
// logger; the Go oracle test (test/oracle) checks strconv.Quote against Go itself.
import { goPrintOverride } from './go-unicode.js';

export interface GoQuoteOptions {
  /** strconv.QuoteToASCII: every non-ASCII character escaped too. */
  readonly asciiOnly?: boolean;
}

/** Printable ASCII that needs no escape (no `"`, no `\`): the common case, quoted as it is. */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * strconv.Quote (or QuoteToASCII): printable characters as they are, `"` and `\` escaped, the C
 * escapes \a \b \f \n \r \t \v, other control characters as \xHH, other non-printable ones as
 * \uHHHH or \UHHHHHHHH.
 *
 * "Printable" is Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII
 * space, with the runtime's Unicode categories corrected where Go 1.26's (Unicode 15.0) differ
 * (go-unicode.ts). Bytes are decoded as Go decodes UTF-8: each byte of an invalid sequence is
 * \xHH. A string cannot hold invalid UTF-8; a lone UTF-16 surrogate is quoted as U+FFFD, the
 * character it becomes when written out as UTF-8.
 */
export function goQuote(text: string | Uint8Array, options: GoQuoteOptions = {}): string {
  const asciiOnly = options.asciiOnly ?? false;
  if (typeof text === 'string') {
    if (PLAIN_ASCII.test(text)) return `"${text}"`;
    let out = '"';
    for (const ch of text) {
      const cp = ch.codePointAt(0) as number;
      out += quoteRune(cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp, asciiOnly);
    }
    return `${out}"`;
  }
  let out = '"';
  for (let i = 0; i < text.length;) {
    const decoded = decodeRune(text, i);
    out += decoded === undefined ? `\\x${hex(text[i] as number, 2)}` : quoteRune(decoded.rune, asciiOnly);
    i += decoded?.size ?? 1;
  }
  return `${out}"`;
}

function quoteRune(cp: number, asciiOnly: boolean): string {
  if (cp === 0x22 || cp === 0x5c) return `\\${String.fromCharCode(cp)}`;
  if (asciiOnly ? cp < 0x80 && isGoPrint(cp) : isGoPrint(cp)) return String.fromCodePoint(cp);
  const named = C_ESCAPES[cp];
  if (named !== undefined) return named;
  if (cp < 0x20 || cp === 0x7f) return `\\x${hex(cp, 2)}`;
  if (cp < 0x10000) return `\\u${hex(cp, 4)}`;
  return `\\U${hex(cp, 8)}`;
}

const C_ESCAPES: Readonly<Record<number, string>> = {
  0x07: '\\a',
  0x08: '\\b',
  0x0c: '\\f',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
  0x0b: '\\v',
};

/**
 * Go's utf8.DecodeRune at `at`: the rune and its length, or undefined where Go reads RuneError of
 * width 1 (a byte that starts no valid sequence: continuation bytes, overlong forms, surrogates,
 * beyond U+10FFFF, a sequence cut short).
 */
function decodeRune(bytes: Uint8Array, at: number): { rune: number; size: number } | undefined {
  const b0 = bytes[at] as number;
  if (b0 < 0x80) return { rune: b0, size: 1 };
  let size: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (b0 >= 0xc2 && b0 <= 0xdf) size = 2;
  else if (b0 >= 0xe0 && b0 <= 0xef) {
    size = 3;
    if (b0 === 0xe0) lo = 0xa0;
    if (b0 === 0xed) hi = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    size = 4;
    if (b0 === 0xf0) lo = 0x90;
    if (b0 === 0xf4) hi = 0x8f;
  } else return undefined;
  if (at + size > bytes.length) return undefined;
  const b1 = bytes[at + 1] as number;
  if (b1 < lo || b1 > hi) return undefined;
  let rune = (b0 & (0xff >> (size + 1))) * 64 + (b1 & 0x3f);
  for (let k = 2; k < size; k++) {
    const b = bytes[at + k] as number;
    if (b < 0x80 || b > 0xbf) return undefined;
    rune = rune * 64 + (b & 0x3f);
  }
  return { rune, size };
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

/**
 * Letters, marks, numbers, punctuation and symbols. Made on first use, from a string: V8 builds the
 * union of these Unicode classes when it parses the pattern (a literal's when the function holding
 * it compiles, again when the literal is created), a few ms of every start for a pattern that only
 * a non-ASCII character needs (docs/performance.md, "Start-up costs behind code choices").
 */
let printableCategory: RegExp | undefined;

/** Go's unicode.IsPrint (Unicode 15.0, as in Go 1.26). */
export function isGoPrint(cp: number): boolean {
  if (cp < 0x80) return cp >= 0x20 && cp < 0x7f;
  const go = goPrintOverride(cp);
  if (go !== undefined) return go;
  printableCategory ??= new RegExp('^[\\p{L}\\p{M}\\p{N}\\p{P}\\p{S}]$', 'u');
  return printableCategory.test(String.fromCodePoint(cp));
}

/**
 * The time package's quote: ASCII control characters and every byte of a non-ASCII character as
 * \xHH (of its UTF-8 encoding), a quote or backslash escaped, everything else as it is.
 */
export function goTimeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (cp < 0x20 || cp >= 0x80) {
      for (const byte of Buffer.from(ch, 'utf8')) out += `\\x${hex(byte, 2)}`;
    } else {
      if (cp === 0x22 || cp === 0x5c) out += '\\';
      out += ch;
    }
  }
  return `${out}"`;
}
