// Go's two ways of quoting a string in error messages, so our messages match the Go sidecar's
// byte for byte: strconv.Quote (fmt's %q, used by the flag package) and the time package's own
// quote (used by time.ParseDuration's errors).
import { goPrintOverride } from './go-unicode.js';

/**
 * strconv.Quote: printable characters as they are, the C escapes \a \b \f \n \r \t \v, other
 * control characters as \xHH, other non-printable ones as \uHHHH or \UHHHHHHHH.
 *
 * "Printable" is Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII
 * space. We take the categories from the runtime's Unicode tables and correct them where Go 1.26's
 * (Unicode 15.0) differ (see go-unicode.ts). A lone UTF-16 surrogate, which no Go string can
 * hold, is quoted as U+FFFD, the character it becomes in UTF-8.
 */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    let cp = ch.codePointAt(0) as number;
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    if (cp === 0x22 || cp === 0x5c) out += `\\${ch}`;
    else if (isGoPrint(cp)) out += String.fromCodePoint(cp);
    else out += escapeRune(cp);
  }
  return `${out}"`;
}

const C_ESCAPES: Readonly<Record<number, string>> = {
  0x07: '\\a', 0x08: '\\b', 0x0c: '\\f', 0x0a: '\\n', 0x0d: '\\r', 0x09: '\\t', 0x0b: '\\v',
};

function escapeRune(cp: number): string {
  const named = C_ESCAPES[cp];
  if (named !== undefined) return named;
  if (cp < 0x20 || cp === 0x7f) return `\\x${hex(cp, 2)}`;
  if (cp < 0x10000) return `\\u${hex(cp, 4)}`;
  return `\\U${hex(cp, 8)}`;
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

const PRINTABLE_CATEGORY = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** Go's unicode.IsPrint (Unicode 15.0, as in Go 1.26). */
export function isGoPrint(cp: number): boolean {
  if (cp < 0x80) return cp >= 0x20 && cp < 0x7f;
  const go = goPrintOverride(cp);
  if (go !== undefined) return go;
  return PRINTABLE_CATEGORY.test(String.fromCodePoint(cp));
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
