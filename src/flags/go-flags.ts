// A command-line parser with the semantics of Go's `flag` package, which the Go sidecar uses, so
// manifests written for it keep working: `-name` and `--name`, `-name=value` and `-name value`
// (never for booleans: `-b false` leaves `false` as the first argument), parsing stops at `--` or the
// first non-flag argument, a flag may repeat (the last wins). Error texts and the usage layout are
// Go's. The exit code policy (Go: 0 after -h, 2 after any other error) belongs to the caller.
//
// Hand-written because util.parseArgs misreads `-v=5` and rejects `--bool=false`, and commander
// has no single-dash long flags.
import { messageOf } from '../base/errors.js';
import { formatGoDuration, parseGoDuration } from './go-duration.js';
import { goQuote } from '../base/go-quote.js';

/** Go's flag.Value: something that can be set from a string and printed back. */
export interface FlagValue {
  /** Throws an Error whose message Go would print after "invalid value ... : ". */
  set(raw: string): void;
  toString(): string;
  /** Bool flags take no separate argument: `-b` means `-b=true`. */
  readonly isBoolFlag?: boolean;
  /** The word after the name in usage text; "" prints none (Go's UnquoteUsage). */
  readonly typeName?: string;
  /** String() of the type's zero value, so usage omits "(default …)" for it. */
  readonly zeroString?: string;
}

export const FlagErrorKind = {
  /** -h or --help was given and not defined: Go's flag.ErrHelp; a Go binary exits 0. */
  Help: 'help',
  Undefined: 'undefined',
  Syntax: 'syntax',
  MissingValue: 'missingValue',
  InvalidValue: 'invalidValue',
} as const;
export type FlagErrorKind = (typeof FlagErrorKind)[keyof typeof FlagErrorKind];

export class FlagError extends Error {
  constructor(
    readonly kind: FlagErrorKind,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'FlagError';
  }
}

/** A defined flag: read .value after parse(). */
export class Flag<T> {
  /** True once the command line set it (Go's FlagSet.Visit). */
  isSet = false;
  constructor(
    readonly name: string,
    readonly usage: string,
    readonly holder: FlagValue,
    /** The default, printed as Go's DefValue. */
    readonly defaultString: string,
    private readonly read: () => T,
  ) {}

  get value(): T {
    return this.read();
  }
}

/** Go's strconv errors as the flag package reports them. */
const PARSE_ERROR = 'parse error';
const RANGE_ERROR = 'value out of range';

export function parseGoBool(raw: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(raw)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(raw)) return false;
  throw new Error(PARSE_ERROR);
}

/**
 * strconv.ParseInt(raw, 0, 64) as the flag package calls it: decimal, 0x, 0o, 0b, leading-0 octal,
 * underscores only where Go allows them. Digits are read left to right and an overflow is reported
 * where it happens, as in Go ("99999999999999999999x" is out of range, not a syntax error).
 *
 * Deliberate difference: a value Go accepts beyond ±2^53 is refused as out of range, because a
 * JavaScript number would silently lose its last digits (no flag of ours needs such a value).
 */
export function parseGoInt(raw: string): number {
  let s = raw;
  let negative = false;
  if (s[0] === '+' || s[0] === '-') {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '') throw new Error(PARSE_ERROR);
  const digitsStart = s;
  let base = 10;
  if (s[0] === '0') {
    const prefix = s.length >= 3 ? (s[1] as string).toLowerCase() : '';
    if (prefix === 'b' || prefix === 'o' || prefix === 'x') {
      base = prefix === 'b' ? 2 : prefix === 'o' ? 8 : 16;
      s = s.slice(2);
    } else {
      base = 8;
      s = s.slice(1);
    }
  }
  const UINT64_MAX = (1n << 64n) - 1n;
  let value = 0n;
  let underscores = false;
  for (const c of s) {
    if (c === '_') {
      underscores = true;
      continue;
    }
    const digit = digitValue(c);
    if (digit === undefined || digit >= base) throw new Error(PARSE_ERROR);
    value = value * BigInt(base) + BigInt(digit);
    if (value > UINT64_MAX) throw new Error(RANGE_ERROR);
  }
  if (underscores && !underscoreOK(digitsStart)) throw new Error(PARSE_ERROR);
  if (negative ? value > 1n << 63n : value > (1n << 63n) - 1n) throw new Error(RANGE_ERROR);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(RANGE_ERROR);
  return negative ? -Number(value) : Number(value);
}

/** 0-9, a-z and A-Z as digits 0..35, as strconv reads them. */
function digitValue(c: string): number | undefined {
  const code = c.charCodeAt(0);
  if (c.length !== 1) return undefined;
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 0x20;
  if (lower >= 97 && lower <= 122) return lower - 97 + 10;
  return undefined;
}

/**
 * strconv's underscoreOK: an underscore only between digits, or between a base prefix and a
 * digit, never first or last. s may start with a sign.
 */
function underscoreOK(str: string): boolean {
  let s = str;
  if (s[0] === '+' || s[0] === '-') s = s.slice(1);
  let saw = '^';
  let i = 0;
  let hex = false;
  if (s.length >= 2 && s[0] === '0' && 'box'.includes((s[1] as string).toLowerCase())) {
    i = 2;
    saw = '0';
    hex = (s[1] as string).toLowerCase() === 'x';
  }
  for (; i < s.length; i++) {
    const c = s[i] as string;
    const lower = c.toLowerCase();
    if ((c >= '0' && c <= '9') || (hex && lower >= 'a' && lower <= 'f' && c.length === 1)) {
      saw = '0';
      continue;
    }
    if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}

/**
 * strconv.ParseFloat(raw, 64): decimal and hexadecimal (0x1.8p3) forms with Go's underscore
 * rules, "inf", "infinity" and "nan" in any case (a sign only before the infinities). Out of
 * range is reported as in Go; the value is the correctly rounded float64, as Go's is.
 */
export function parseGoFloat(raw: string): number {
  const special = /^([+-]?)(inf|infinity)$/i.exec(raw);
  if (special) return special[1] === '-' ? -Infinity : Infinity;
  if (/^nan$/i.test(raw)) return NaN;

  const read = readGoFloat(raw);
  if (read === undefined) throw new Error(PARSE_ERROR);
  const value = read.hex ? hexFloat(read) : decimalFloat(read);
  if (!Number.isFinite(value)) throw new Error(RANGE_ERROR);
  return value;
}

interface ReadFloat {
  negative: boolean;
  hex: boolean;
  /** Mantissa digits without leading zeros or the dot. */
  digits: string;
  /** Where the point sits, counted in digits from the start of `digits` (may be negative). */
  pointAt: number;
  /** The exponent as Go reads it: its digits stop counting once it reaches 10000. */
  exponent: number;
}

/** Go's readFloat and the checks after it; undefined for a syntax error. */
function readGoFloat(s: string): ReadFloat | undefined {
  let i = 0;
  let negative = false;
  if (s[i] === '+' || s[i] === '-') {
    negative = s[i] === '-';
    i++;
  }
  let hex = false;
  if (i + 2 < s.length && s[i] === '0' && (s[i + 1] === 'x' || s[i + 1] === 'X')) {
    hex = true;
    i += 2;
  }
  let sawDot = false;
  let sawDigits = false;
  let underscores = false;
  let digits = '';
  let pointAt = 0;
  for (; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '_') {
      underscores = true;
      continue;
    }
    if (c === '.') {
      if (sawDot) break;
      sawDot = true;
      pointAt = digits.length;
      continue;
    }
    const isDecimal = c >= '0' && c <= '9';
    const isHexLetter = hex && /^[a-fA-F]$/.test(c);
    if (!isDecimal && !isHexLetter) break;
    sawDigits = true;
    // Leading zeros move the point instead of adding a digit.
    if (c === '0' && digits === '') {
      pointAt--;
      continue;
    }
    digits += c;
  }
  if (!sawDigits) return undefined;
  if (!sawDot) pointAt = digits.length;

  let exponent = 0;
  const expChar = hex ? 'p' : 'e';
  if (i < s.length && (s[i] as string).toLowerCase() === expChar) {
    i++;
    if (i >= s.length) return undefined;
    let sign = 1;
    if (s[i] === '+' || s[i] === '-') {
      sign = s[i] === '-' ? -1 : 1;
      i++;
    }
    if (i >= s.length || !((s[i] as string) >= '0' && (s[i] as string) <= '9')) return undefined;
    for (; i < s.length && (((s[i] as string) >= '0' && (s[i] as string) <= '9') || s[i] === '_'); i++) {
      if (s[i] === '_') {
        underscores = true;
        continue;
      }
      if (exponent < 10000) exponent = exponent * 10 + (s.charCodeAt(i) - 48);
    }
    exponent *= sign;
  } else if (hex) {
    return undefined; // a hexadecimal float must have a p exponent
  }
  if (underscores && !underscoreOK(s.slice(0, i))) return undefined;
  if (i !== s.length) return undefined;
  return { negative, hex, digits, pointAt, exponent };
}

function decimalFloat(r: ReadFloat): number {
  // JavaScript's own decimal conversion is correctly rounded, as Go's is.
  const magnitude = r.digits === '' ? 0 : Number(`0.${r.digits}e${r.pointAt + r.exponent}`);
  return r.negative ? -magnitude : magnitude;
}

function hexFloat(r: ReadFloat): number {
  const mantissa = r.digits === '' ? 0n : BigInt(`0x${r.digits}`);
  // Each hexadecimal digit after the point is 4 binary places.
  const magnitude = roundToFloat64(mantissa, r.exponent + 4 * (r.pointAt - r.digits.length));
  return r.negative ? -magnitude : magnitude;
}

/** mantissa × 2^exponent rounded to the nearest float64 (ties to even), Infinity beyond range. */
function roundToFloat64(mantissa: bigint, exponent: number): number {
  if (mantissa === 0n) return 0;
  const bits = mantissa.toString(2).length;
  const leading = exponent + bits - 1; // the exponent of the leading bit
  if (leading > 1100) return Infinity;
  if (leading < -1100) return 0;
  // 53 significant bits for normal numbers, fewer below 2^-1022.
  const precision = leading >= -1022 ? 53 : 53 - (-1022 - leading);
  let q = mantissa;
  let e = exponent;
  if (bits > precision) {
    const shift = BigInt(bits - precision);
    q = mantissa >> shift;
    const rest = mantissa - (q << shift);
    const half = 1n << (shift - 1n);
    if (rest > half || (rest === half && (q & 1n) === 1n)) q++;
    e += Number(shift);
  }
  // Two steps so that neither product leaves the float64 range before the final one.
  return Number(q) * 2 ** Math.trunc(e / 2) * 2 ** (e - Math.trunc(e / 2));
}

/** strconv.FormatFloat(value, 'g', -1, 64), which is also fmt's %v for a float64. */
export function formatGoFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const sign = value < 0 ? '-' : '';
  // The shortest digits that read back as the same float64, as Go's shortest formatting finds.
  const [mantissa = '', exp = '0'] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const exponent = Number(exp);
  if (exponent < -4 || exponent >= 6) {
    const fraction = digits.length > 1 ? `.${digits.slice(1)}` : '';
    const expDigits = String(Math.abs(exponent)).padStart(2, '0');
    return `${sign}${digits[0]}${fraction}e${exponent < 0 ? '-' : '+'}${expDigits}`;
  }
  const pointAt = exponent + 1;
  if (pointAt <= 0) return `${sign}0.${'0'.repeat(-pointAt)}${digits}`;
  if (pointAt >= digits.length) return `${sign}${digits}${'0'.repeat(pointAt - digits.length)}`;
  return `${sign}${digits.slice(0, pointAt)}.${digits.slice(pointAt)}`;
}

class ScalarValue<T> implements FlagValue {
  constructor(
    public current: T,
    private readonly parse: (raw: string) => T,
    private readonly format: (value: T) => string,
    readonly typeName: string,
    readonly zeroString: string,
    readonly isBoolFlag = false,
  ) {}
  set(raw: string): void {
    this.current = this.parse(raw);
  }
  toString(): string {
    return this.format(this.current);
  }
}

/** One flag as the usage shows it. */
export interface FlagDescription {
  readonly name: string;
  /** The value's type word (`duration`, `string`, `value`...), '' for a boolean. */
  readonly typeName: string;
  readonly usage: string;
  /** The default as Go prints it, or undefined when it is the type's zero value (not shown). */
  readonly defaultText: string | undefined;
}

export class FlagSet {
  private readonly flags = new Map<string, Flag<unknown>>();

  constructor(readonly name: string) {}

  string(name: string, defaultValue: string, usage: string): Flag<string> {
    return this.scalar(
      name,
      usage,
      new ScalarValue(
        defaultValue,
        (s) => s,
        (s) => s,
        'string',
        '',
      ),
    );
  }

  bool(name: string, defaultValue: boolean, usage: string): Flag<boolean> {
    return this.scalar(name, usage, new ScalarValue(defaultValue, parseGoBool, String, '', 'false', true));
  }

  int(name: string, defaultValue: number, usage: string): Flag<number> {
    return this.scalar(name, usage, new ScalarValue(defaultValue, parseGoInt, String, 'int', '0'));
  }

  float64(name: string, defaultValue: number, usage: string): Flag<number> {
    return this.scalar(name, usage, new ScalarValue(defaultValue, parseGoFloat, formatGoFloat, 'float', '0'));
  }

  /** A Go duration flag; the value is in milliseconds. Any parse failure reads "parse error", as in Go. */
  durationMs(name: string, defaultMs: number, usage: string): Flag<number> {
    const parse = (raw: string) => {
      try {
        return parseGoDuration(raw);
      } catch (err) {
        throw new Error(PARSE_ERROR, { cause: err });
      }
    };
    return this.scalar(name, usage, new ScalarValue(defaultMs, parse, formatGoDuration, 'duration', '0s'));
  }

  /** A flag backed by a custom value (Go's FlagSet.Var). */
  var<V extends FlagValue>(value: V, name: string, usage: string): Flag<V> {
    return this.define(new Flag(name, usage, value, value.toString(), () => value));
  }

  lookup(name: string): Flag<unknown> | undefined {
    return this.flags.get(name);
  }

  /** Names of the flags the command line set, sorted. */
  setFlagNames(): string[] {
    return [...this.flags.values()]
      .filter((f) => f.isSet)
      .map((f) => f.name)
      .sort();
  }

  /**
   * Parses args (without the program name). Returns the arguments after the flags; throws FlagError.
   * Like Go, flags set before an error keep their new values.
   */
  parse(args: readonly string[]): { rest: string[] } {
    let i = 0;
    while (i < args.length) {
      const arg = args[i] as string;
      if (arg.length < 2 || !arg.startsWith('-')) break;
      if (arg === '--') {
        i++;
        break;
      }
      i++;
      const body = arg.slice(arg.startsWith('--') ? 2 : 1);
      if (body === '' || body.startsWith('-') || body.startsWith('=')) {
        throw new FlagError(FlagErrorKind.Syntax, `bad flag syntax: ${arg}`);
      }
      const eq = body.indexOf('=');
      const name = eq === -1 ? body : body.slice(0, eq);
      let raw = eq === -1 ? undefined : body.slice(eq + 1);

      const flag = this.flags.get(name);
      if (!flag) {
        if (name === 'help' || name === 'h') throw new FlagError(FlagErrorKind.Help, 'flag: help requested');
        throw new FlagError(FlagErrorKind.Undefined, `flag provided but not defined: -${name}`);
      }
      if (flag.holder.isBoolFlag) {
        try {
          flag.holder.set(raw ?? 'true');
        } catch (err) {
          const message =
            raw === undefined ? `invalid boolean flag ${name}: ${messageOf(err)}` : `invalid boolean value ${goQuote(raw)} for -${name}: ${messageOf(err)}`;
          throw new FlagError(FlagErrorKind.InvalidValue, message, { cause: err });
        }
      } else {
        if (raw === undefined) {
          if (i >= args.length) throw new FlagError(FlagErrorKind.MissingValue, `flag needs an argument: -${name}`);
          raw = args[i++] as string;
        }
        try {
          flag.holder.set(raw);
        } catch (err) {
          throw new FlagError(FlagErrorKind.InvalidValue, `invalid value ${goQuote(raw)} for flag -${name}: ${messageOf(err)}`, { cause: err });
        }
      }
      flag.isSet = true;
    }
    return { rest: args.slice(i) };
  }

  /** Every flag, sorted by name, as PrintDefaults shows it: the value's type word, the usage, the default unless zero. */
  describe(): FlagDescription[] {
    return this.sorted().map((flag) => {
      const { typeName, usage } = unquoteUsage(flag);
      const zero = flag.holder.zeroString ?? '';
      const quoted = flag.holder.typeName === 'string' && flag.holder instanceof ScalarValue;
      const defaultText = flag.defaultString === zero ? undefined : quoted ? goQuote(flag.defaultString) : flag.defaultString;
      return { name: flag.name, typeName, usage, defaultText };
    });
  }

  /** Go's PrintDefaults output, flags sorted by name, each entry ending in a newline. */
  printDefaults(): string {
    let out = '';
    for (const { name, typeName, usage, defaultText } of this.describe()) {
      let line = `  -${name}`;
      if (typeName !== '') line += ` ${typeName}`;
      // A one-letter flag without a type fits on the same line.
      line += line.length <= 4 ? '\t' : '\n    \t';
      line += usage.replaceAll('\n', '\n    \t');
      if (defaultText !== undefined) line += ` (default ${defaultText})`;
      out += line + '\n';
    }
    return out;
  }

  private sorted(): Flag<unknown>[] {
    return [...this.flags.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Go's default usage message: "Usage of <name>:" and the defaults. */
  usage(): string {
    return `Usage of ${this.name}:\n${this.printDefaults()}`;
  }

  private scalar<T>(name: string, usage: string, value: ScalarValue<T>): Flag<T> {
    return this.define(new Flag(name, usage, value, value.toString(), () => value.current));
  }

  private define<T>(flag: Flag<T>): Flag<T> {
    if (this.flags.has(flag.name)) throw new Error(`${this.name} flag redefined: ${flag.name}`);
    if (flag.name === '' || flag.name.startsWith('-') || flag.name.includes('=')) {
      throw new Error(`flag ${JSON.stringify(flag.name)} begins with - or contains =`);
    }
    this.flags.set(flag.name, flag as Flag<unknown>);
    return flag;
  }
}

/** A back-quoted word in the usage names the value (`-kubeconfig path`), as in Go. */
function unquoteUsage(flag: Flag<unknown>): { typeName: string; usage: string } {
  const match = /`([^`]*)`/.exec(flag.usage);
  if (match) return { typeName: match[1] ?? '', usage: flag.usage.replace(/`([^`]*)`/, '$1') };
  return { typeName: flag.holder.typeName ?? (flag.holder.isBoolFlag ? '' : 'value'), usage: flag.usage };
}

/**
 * `key=bool` pairs separated by commas (component-base MapStringBool, the shape of --feature-gates).
 * The first Set replaces the defaults; later ones add to it.
 */
export class MapStringBoolValue implements FlagValue {
  /** Go prints `value` for every flag of a custom type. */
  readonly typeName = 'value';
  readonly zeroString = '';
  private initialized = false;
  constructor(public entries: Map<string, boolean> = new Map()) {}

  set(raw: string): void {
    const next = this.initialized ? new Map(this.entries) : new Map<string, boolean>();
    for (const item of raw.split(',')) {
      // Only an empty item is skipped; a blank one is malformed, as in component-base.
      if (item === '') continue;
      const eq = item.indexOf('=');
      if (eq === -1) throw new Error('malformed pair, expect string=bool');
      const key = item.slice(0, eq).trim();
      const value = item.slice(eq + 1).trim();
      let parsed: boolean;
      try {
        parsed = parseGoBool(value);
      } catch {
        throw new Error(`invalid value of ${key}: ${value}, err: strconv.ParseBool: parsing ${goQuote(value)}: invalid syntax`);
      }
      next.set(key, parsed);
    }
    this.entries = next;
    this.initialized = true;
  }

  toString(): string {
    return [...this.entries]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
  }
}

/**
 * `key<sep>value` pairs separated by commas, e.g. `--leader-election-labels=k1:v1,k2:v2`
 * (csi-lib-utils' stringMap): nothing is trimmed, every item (an empty one too) must split into
 * exactly two parts, and each Set adds to the map.
 */
export class MapStringStringValue implements FlagValue {
  readonly typeName = 'value';
  readonly zeroString = '';
  constructor(
    readonly separator: string,
    public entries: Map<string, string> = new Map(),
  ) {}

  set(raw: string): void {
    const next = new Map(this.entries);
    for (const item of raw.split(',')) {
      const parts = item.split(this.separator);
      if (parts.length !== 2) throw new Error(`malformed item in list of labels: ${item}`);
      next.set(parts[0] as string, parts[1] as string);
    }
    this.entries = next;
  }

  toString(): string {
    return [...this.entries]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${k}${this.separator}${v}`)
      .join(',');
  }
}
