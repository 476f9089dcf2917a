// Go's url.Parse for an absolute URL with an authority (`scheme://host/path`), far enough to give
// the same path and the same error texts: csi-translation-lib parses `aws://<zone>/<volume-id>`
// EBS volume IDs with it, and its errors reach events word for word (docs/behavior.md §3.8).
// WHATWG's URL parses such a URL differently (and fails on other inputs), so it cannot stand in.
// Not reproduced: the validation of an IPv6 literal's address (`[...]` hosts are taken as they are).
import { goQuote } from './go-quote.js';

/** Bytes allowed in a host (besides alphanumerics, `%` escapes and bytes ≥ 0x80), as Go 1.26's table. */
const HOST_INVALID = new Set([...' \\^`{|}'].map((c) => c.charCodeAt(0)));

type Mode = 'host' | 'other';

const isHex = (b: number | undefined) => b !== undefined && ((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66));
const unhex = (b: number) => (b <= 0x39 ? b - 0x30 : (b | 0x20) - 0x61 + 10);

class UrlSyntaxError extends Error {}

/** Go's unescape: the bytes, or the error its EscapeError / InvalidHostError gives. */
function unescape(text: string, mode: Mode): Uint8Array {
  const s = Buffer.from(text, 'utf8');
  const out: number[] = [];
  for (let i = 0; i < s.length;) {
    const b = s[i] as number;
    if (b === 0x25) {
      if (!isHex(s[i + 1]) || !isHex(s[i + 2])) throw new UrlSyntaxError(`invalid URL escape ${goQuote(s.subarray(i, i + 3))}`);
      const hi = unhex(s[i + 1] as number);
      // In a host, %-escapes are for non-ASCII bytes only (and %25, an IPv6 zone's percent sign).
      if (mode === 'host' && hi < 8 && !(s[i + 1] === 0x32 && s[i + 2] === 0x35)) {
        throw new UrlSyntaxError(`invalid URL escape ${goQuote(s.subarray(i, i + 3))}`);
      }
      out.push((hi << 4) | unhex(s[i + 2] as number));
      i += 3;
      continue;
    }
    if (mode === 'host' && b < 0x80 && HOST_INVALID.has(b)) throw new UrlSyntaxError(`invalid character ${goQuote(s.subarray(i, i + 1))} in host name`);
    out.push(b);
    i += 1;
  }
  return Uint8Array.from(out);
}

function validOptionalPort(port: string): boolean {
  return port === '' || /^:[0-9]*$/.test(port);
}

const USERINFO_VALID = /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/;

function parseHost(host: string): void {
  const open = host.lastIndexOf('[');
  if (open > 0) throw new UrlSyntaxError('invalid IP-literal');
  if (open === 0) {
    const close = host.lastIndexOf(']');
    if (close < 0) throw new UrlSyntaxError("missing ']' in host");
    const colonPort = host.slice(close + 1);
    if (!validOptionalPort(colonPort)) throw new UrlSyntaxError(`invalid port ${goQuote(colonPort)} after host`);
    return;
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && !validOptionalPort(host.slice(colon))) throw new UrlSyntaxError(`invalid port ${goQuote(host.slice(colon))} after host`);
  unescape(host, 'host');
}

function parseAuthority(authority: string): void {
  const at = authority.lastIndexOf('@');
  parseHost(authority.slice(at + 1));
  if (at < 0) return;
  const userinfo = authority.slice(0, at);
  if (!USERINFO_VALID.test(userinfo)) throw new UrlSyntaxError('net/url: invalid userinfo');
  for (const part of userinfo.includes(':') ? [userinfo.slice(0, userinfo.indexOf(':')), userinfo.slice(userinfo.indexOf(':') + 1)] : [userinfo]) {
    unescape(part, 'other');
  }
}

/** The path (unescaped, as bytes) of a URL without a fragment; `rest` follows `scheme:`. */
function parseWithoutFragment(url: string, rest: string): Uint8Array {
  if (/[\x00-\x1f\x7f]/.test(url)) throw new UrlSyntaxError('net/url: invalid control character in URL');
  let remainder = rest.split('?', 1)[0] as string; // the query is no part of the path
  if (!remainder.startsWith('/')) return new Uint8Array(); // opaque
  if (remainder.startsWith('//')) {
    const slash = remainder.indexOf('/', 2);
    const authority = slash < 0 ? remainder.slice(2) : remainder.slice(2, slash);
    remainder = slash < 0 ? '' : remainder.slice(slash);
    parseAuthority(authority);
  }
  return unescape(remainder, 'other');
}

/**
 * The unescaped path of `url` (which starts with `<scheme>://`) as Go's url.Parse gives it, as
 * bytes; throws an Error with url.Parse's message (`parse "<url>": <reason>`) otherwise.
 */
export function goUrlPath(url: string): Uint8Array {
  const colon = url.indexOf(':');
  const hash = url.indexOf('#');
  const withoutFragment = hash < 0 ? url : url.slice(0, hash);
  let path: Uint8Array;
  try {
    path = parseWithoutFragment(withoutFragment, withoutFragment.slice(colon + 1));
  } catch (err) {
    if (err instanceof UrlSyntaxError) throw new Error(`parse ${goQuote(withoutFragment)}: ${err.message}`);
    throw err;
  }
  if (hash >= 0) {
    try {
      unescape(url.slice(hash + 1), 'other');
    } catch (err) {
      if (err instanceof UrlSyntaxError) throw new Error(`parse ${goQuote(url)}: ${err.message}`);
      throw err;
    }
  }
  return path;
}
