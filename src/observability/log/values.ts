// How a logged value is written, in the two formats upstream's sidecar uses:
//   text: klog's key=value serializer (k8s.io/klog/v2 internal/serialize): strings and errors
//         Go-quoted, or as an indented `<` … `>` block when they span lines; everything else as
//         Go's encoding/json writes it (HTML characters escaped); a value that cannot be encoded
//         becomes "<internal error: …>".
//   json: what zap writes through zapr (component-base's JSON format): strings escaped the zap
//         way (no HTML escaping), errors as their message, objects encoded reflectively; a value
//         that cannot be encoded leaves the key out and adds `<key>Error` with the reason.
// Neither throws, whatever the value: cycles, null prototypes, BigInt, throwing getters and
// toJSON methods, proxies, symbols and functions all end as text.
import { messageOf } from '../../base/errors.js';
import { goQuote } from '../../base/go-quote.js';

/** klog.ObjectRef: `ns/name` in text, `{"name":…,"namespace":…}` in JSON (klog.KObj, klog.KRef). */
export class ObjectRef {
  constructor(
    readonly namespace: string,
    readonly name: string,
  ) {}
  toString(): string {
    return this.namespace === '' ? this.name : `${this.namespace}/${this.name}`;
  }
}

/** klog.KRef(namespace, name). */
export function kRef(namespace: string, name: string): ObjectRef {
  return new ObjectRef(namespace, name);
}

/** klog.KObj(obj): the object's metadata namespace and name ("" for a missing object). */
export function kObj(obj: { metadata?: { namespace?: string | undefined; name?: string | undefined } | undefined } | undefined): ObjectRef {
  return new ObjectRef(obj?.metadata?.namespace ?? '', obj?.metadata?.name ?? '');
}

/** klog.KRef from an informer key `ns/name` (or `name`). */
export function kKey(key: string): ObjectRef {
  const slash = key.indexOf('/');
  return slash === -1 ? new ObjectRef('', key) : new ObjectRef(key.slice(0, slash), key.slice(slash + 1));
}

function describeThrown(err: unknown): string {
  try {
    return messageOf(err);
  } catch {
    return 'unprintable exception';
  }
}

/**
 * The text of an error as Go's Error() would give it for an error wrapped with %w: the message,
 * then each cause's message not already part of it.
 */
export function errorMessage(err: Error): string {
  let text = readMessage(err);
  let cause = safeGet(err, 'cause');
  for (let depth = 0; depth < 8 && cause !== undefined && cause !== null; depth++) {
    const causeText = cause instanceof Error ? readMessage(cause) : safeString(cause);
    if (causeText !== '' && !text.includes(causeText)) text = text === '' ? causeText : `${text}: ${causeText}`;
    cause = cause instanceof Error ? safeGet(cause, 'cause') : undefined;
  }
  return text;
}

function readMessage(err: Error): string {
  const message = safeGet(err, 'message');
  return typeof message === 'string' ? message : safeString(message);
}

function safeGet(obj: object, key: string): unknown {
  try {
    return (obj as Record<string, unknown>)[key];
  } catch (err) {
    return `<panic: ${describeThrown(err)}>`;
  }
}

/** A message as text, whatever untyped code passed. */
export function messageText(msg: unknown): string {
  return typeof msg === 'string' ? msg : safeString(msg);
}

function safeString(value: unknown): string {
  try {
    if (typeof value === 'symbol') return value.toString();
    if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === null) return '[object Object]';
    return String(value);
  } catch (err) {
    return `<panic: ${describeThrown(err)}>`;
  }
}

// ---- Go's encoding/json, as klog (HTML-escaping) and zap (not) use it ------------------------

/** Printable ASCII that needs no escape in a JSON-quoted string (no `"`, no `\`). */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const HTML_SPECIAL = /[<>&]/;

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

class EncodeError extends Error {}

/**
 * How a string is escaped: `zap` as zap's own string fields (only `"`, `\\` and control
 * characters, \n \r \t short); `go` as encoding/json (\b \f short too, U+2028/U+2029 escaped);
 * `goHtml` as encoding/json's default, which also escapes <, > and &.
 */
export type JsonEscaping = 'zap' | 'go' | 'goHtml';

export function jsonString(s: string, escaping: JsonEscaping): string {
  const html = escaping === 'goHtml';
  if (PLAIN_ASCII.test(s) && !(html && HTML_SPECIAL.test(s))) return `"${s}"`;
  const go = escaping !== 'zap';
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c < 0x20) {
      const short = c === 10 ? '\\n' : c === 13 ? '\\r' : c === 9 ? '\\t' : go && c === 8 ? '\\b' : go && c === 12 ? '\\f' : '';
      out += short !== '' ? short : `\\u${hex(c, 4)}`;
    } else if (html && (c === 0x3c || c === 0x3e || c === 0x26)) out += `\\u00${hex(c, 2)}`;
    else if (go && (c === 0x2028 || c === 0x2029)) out += `\\u${hex(c, 4)}`;
    else if (c >= 0xd800 && c <= 0xdfff) {
      const next = s.charCodeAt(i + 1);
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        out += s[i]! + s[i + 1]!;
        i++;
      } else out += '\\ufffd'; // a lone surrogate: invalid UTF-8 once encoded
    } else out += s[i]!;
  }
  return out + '"';
}

/** A float64 as encoding/json prints it ('f' between 1e-6 and 1e21, else 'e' as JavaScript does). */
function jsonNumber(n: number): string {
  if (!Number.isFinite(n)) throw new EncodeError(`json: unsupported value: ${Number.isNaN(n) ? 'NaN' : n > 0 ? '+Inf' : '-Inf'}`);
  return Object.is(n, -0) ? '-0' : String(n);
}

function typeName(value: object): string {
  try {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto === null) return 'Object';
    const ctor = (proto as { constructor?: unknown }).constructor;
    return typeof ctor === 'function' && typeof ctor.name === 'string' && ctor.name !== '' ? ctor.name : 'Object';
  } catch {
    return 'Object';
  }
}

/**
 * Encodes a value the way encoding/json would encode its closest Go counterpart: plain objects
 * and class instances like structs (own enumerable string keys in order, undefined fields left
 * out), Maps like Go maps (keys sorted), Sets and arrays like slices, bigint like int64, errors
 * and ObjectRef-like stringers as strings. Throws EncodeError with Go's wording when it can't.
 */
function encodeJson(value: unknown, escaping: JsonEscaping, seen: Set<object>, depth: number): string {
  switch (typeof value) {
    case 'string':
      return jsonString(value, escaping);
    case 'number':
      return jsonNumber(value);
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      return 'null';
    case 'symbol':
      return jsonString(value.toString(), escaping);
    case 'function':
      throw new EncodeError('json: unsupported type: func()');
    case 'object':
      break;
  }
  if (value === null) return 'null';
  const obj = value as object;
  if (depth > 1000) throw new EncodeError(`json: unsupported value: nesting deeper than 1000 via ${typeName(obj)}`);
  if (seen.has(obj)) throw new EncodeError(`json: unsupported value: encountered a cycle via ${typeName(obj)}`);
  if (obj instanceof Error) return jsonString(errorMessage(obj), escaping);
  if (obj instanceof ObjectRef) return jsonString(obj.toString(), escaping);
  if (obj instanceof Date) return jsonString(Number.isNaN(obj.getTime()) ? 'Invalid Date' : obj.toISOString(), escaping);
  if (ArrayBuffer.isView(obj) && obj instanceof Uint8Array)
    return jsonString(Buffer.from(obj.buffer, obj.byteOffset, obj.byteLength).toString('base64'), escaping);
  seen.add(obj);
  try {
    const toJSON = (obj as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return encodeJson(toJSON.call(obj), escaping, seen, depth + 1);
    if (Array.isArray(obj)) return `[${obj.map((item) => encodeJson(item, escaping, seen, depth + 1)).join(',')}]`;
    if (obj instanceof Set) return `[${[...obj].map((item) => encodeJson(item, escaping, seen, depth + 1)).join(',')}]`;
    if (obj instanceof Map) {
      const entries = [...obj].map(([k, v]) => [safeString(k), v] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, v]) => `${jsonString(k, escaping)}:${encodeJson(v, escaping, seen, depth + 1)}`).join(',')}}`;
    }
    const fields: string[] = [];
    for (const key of Object.keys(obj)) {
      const field = (obj as Record<string, unknown>)[key];
      if (field === undefined || typeof field === 'function' || typeof field === 'symbol') continue;
      fields.push(`${jsonString(key, escaping)}:${encodeJson(field, escaping, seen, depth + 1)}`);
    }
    return `{${fields.join(',')}}`;
  } finally {
    seen.delete(obj);
  }
}

/** encoding/json's text for a value, or the error Go would give, as `{ error }`. */
function tryEncodeJson(value: unknown, escaping: JsonEscaping): { json: string } | { error: string } {
  try {
    return { json: encodeJson(value, escaping, new Set(), 0) };
  } catch (err) {
    if (err instanceof EncodeError) return { error: err.message };
    if (err instanceof RangeError) return { error: 'json: unsupported value: nesting too deep' };
    return { error: `panic: ${describeThrown(err)}` };
  }
}

// ---- klog text ---------------------------------------------------------------------------

/** klog's writeStringValue: `="quoted"`, or a tab-indented block between `=<` and ` >` for several lines. */
function textString(s: string): string {
  if (!s.includes('\n')) return `=${goQuote(s)}`;
  let out = '=<\n';
  let rest = s;
  let index = rest.indexOf('\n');
  while (index !== -1) {
    out += `\t${rest.slice(0, index + 1)}`;
    rest = rest.slice(index + 1);
    index = rest.indexOf('\n');
  }
  return rest === '' ? `${out} >` : `${out}\t${rest}\n >`;
}

/** ` key=value` as klog's text serializer writes it. */
export function textField(key: string, value: unknown): string {
  return ` ${key}${textValue(value)}`;
}

/** `=value` for one value, klog's KVFormat. */
export function textValue(value: unknown): string {
  try {
    if (typeof value === 'string') return textString(value);
    if (value instanceof ObjectRef) return `="${value.toString()}"`; // klog writes it quoted as is
    if (value instanceof Error) return textString(errorMessage(value));
    if (typeof value === 'symbol') return textString(value.toString());
    // klog formats []byte with %+q: strconv.QuoteToASCII of the bytes as they are.
    if (value instanceof Uint8Array) return `=${goQuote(value, { asciiOnly: true })}`;
    if (value instanceof Date) return textString(Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString());
  } catch (err) {
    return `="<panic: ${describeThrown(err)}>"`;
  }
  const encoded = tryEncodeJson(value, 'goHtml');
  return 'json' in encoded ? `=${encoded.json}` : `=${jsonString(`<internal error: ${encoded.error}>`, 'zap')}`;
}

// ---- zap JSON ------------------------------------------------------------------------------

/** `"key":value` as zap writes a field from zapr, or `"keyError":"reason"` when it can't encode it. */
export function jsonField(key: string, value: unknown): string {
  const name = jsonString(key, 'zap');
  try {
    if (typeof value === 'string') return `${name}:${jsonString(value, 'zap')}`;
    if (typeof value === 'number') {
      // zap writes non-finite floats as strings and never fails on them.
      if (!Number.isFinite(value)) return `${name}:"${Number.isNaN(value) ? 'NaN' : value > 0 ? '+Inf' : '-Inf'}"`;
      return `${name}:${goFloatF(value)}`;
    }
    if (value instanceof ObjectRef) {
      // logr.Marshaler: MarshalLog gives the struct, namespace omitted when empty.
      const ns = value.namespace === '' ? '' : `,"namespace":${jsonString(value.namespace, 'zap')}`;
      return `${name}:{"name":${jsonString(value.name, 'zap')}${ns}}`;
    }
    if (value instanceof Error) return `${name}:${jsonString(errorMessage(value), 'zap')}`;
  } catch (err) {
    return `${jsonString(`${key}Error`, 'zap')}:${jsonString(`PANIC=${describeThrown(err)}`, 'zap')}`;
  }
  const encoded = tryEncodeJson(value, 'go');
  return 'json' in encoded ? `${name}:${encoded.json}` : `${jsonString(`${key}Error`, 'zap')}:${jsonString(encoded.error, 'zap')}`;
}

/** strconv.FormatFloat(n, 'f', -1, 64): the shortest digits, never an exponent (zap's float fields and `ts`). */
export function goFloatF(n: number): string {
  if (Object.is(n, -0)) return '-0';
  const text = String(n);
  const exp = text.indexOf('e');
  if (exp === -1) return text;
  const negative = text.startsWith('-');
  const mantissa = text.slice(negative ? 1 : 0, exp);
  const power = Number(text.slice(exp + 1));
  const [whole = '', fraction = ''] = mantissa.split('.');
  const digits = whole + fraction;
  const point = whole.length + power;
  let out: string;
  if (point <= 0) out = `0.${'0'.repeat(-point)}${digits}`;
  else if (point >= digits.length) out = digits + '0'.repeat(point - digits.length);
  else out = `${digits.slice(0, point)}.${digits.slice(point)}`;
  return negative ? `-${out}` : out;
}
