// A command-line parser with the semantics of Go's `flag` package, which the Go sidecar uses, so
// manifests written for it keep working: `-name` and `--name`, `-name=value` and `-name value`
// (never for booleans: `-b false` leaves `false` as the first argument), parsing stops at `--` or the
// first non-flag argument, a flag may repeat (the last wins). Error texts and the usage layout are
// Go's. The exit code policy (Go: 0 after -h, 2 after any other error) belongs to the caller.
//
// Hand-written because util.parseArgs misreads `-v=5` and rejects `--bool=false`, and commander
// has no single-dash long flags.
import { formatGoDuration, parseGoDuration } from './go-duration.js';

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
  constructor(readonly kind: FlagErrorKind, message: string, options?: ErrorOptions) {
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

/** strconv.ParseInt(raw, 0, 64): decimal, 0x, 0o, 0b, leading-0 octal, underscores between digits. */
export function parseGoInt(raw: string): number {
  const match = /^([+-]?)(0[xX]|0[oO]|0[bB]|0(?=[0-7_]))?(.*)$/.exec(raw);
  const sign = match?.[1] ?? '';
  const prefix = (match?.[2] ?? '').toLowerCase();
  const rest = match?.[3] ?? '';
  const radix = prefix === '0x' ? 16 : prefix === '0o' || prefix === '0' ? 8 : prefix === '0b' ? 2 : 10;
  const digit = { 16: '[0-9a-fA-F]', 8: '[0-7]', 2: '[01]', 10: '[0-9]' }[radix];
  // After a base prefix an underscore may lead; otherwise underscores only separate digits.
  const shape = new RegExp(`^${prefix === '' ? '' : '_?'}${digit}+(_${digit}+)*$`);
  if (!shape.test(rest) || (prefix === '' && rest.length > 1 && rest.startsWith('0'))) throw new Error(PARSE_ERROR);
  let value = 0n;
  for (const c of rest.replaceAll('_', '')) value = value * BigInt(radix) + BigInt(parseInt(c, radix));
  if (sign === '-') value = -value;
  if (value > (1n << 63n) - 1n || value < -(1n << 63n)) throw new Error(RANGE_ERROR);
  // Beyond 2^53 a JavaScript number would silently lose digits.
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) throw new Error(RANGE_ERROR);
  return Number(value);
}

/** strconv.ParseFloat(raw, 64) for decimal forms, plus inf/infinity/nan. */
export function parseGoFloat(raw: string): number {
  const lower = raw.toLowerCase();
  if (/^[+-]?(inf|infinity)$/.test(lower)) return lower.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/.test(lower)) return NaN;
  if (!/^[+-]?(\d+(_\d+)*(\.(\d+(_\d+)*)?)?|\.\d+(_\d+)*)([eE][+-]?\d+)?$/.test(raw)) throw new Error(PARSE_ERROR);
  const value = Number(raw.replaceAll('_', ''));
  if (!Number.isFinite(value)) throw new Error(RANGE_ERROR);
  return value;
}

/** strconv.FormatFloat(f, 'g', -1, 64) for the values flags use. */
export function formatGoFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : '-Inf';
  const exp = value === 0 ? 0 : Math.floor(Math.log10(Math.abs(value)));
  if (exp < -4 || exp >= 21) {
    return value.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  }
  return String(value);
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

export class FlagSet {
  private readonly flags = new Map<string, Flag<unknown>>();

  constructor(readonly name: string) {}

  string(name: string, defaultValue: string, usage: string): Flag<string> {
    return this.scalar(name, usage, new ScalarValue(defaultValue, (s) => s, (s) => s, 'string', ''));
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
    return [...this.flags.values()].filter((f) => f.isSet).map((f) => f.name).sort();
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
          const message = raw === undefined
            ? `invalid boolean flag ${name}: ${errorMessage(err)}`
            : `invalid boolean value ${goQuote(raw)} for -${name}: ${errorMessage(err)}`;
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
          throw new FlagError(FlagErrorKind.InvalidValue, `invalid value ${goQuote(raw)} for flag -${name}: ${errorMessage(err)}`, { cause: err });
        }
      }
      flag.isSet = true;
    }
    return { rest: args.slice(i) };
  }

  /** Go's PrintDefaults output, flags sorted by name, each entry ending in a newline. */
  printDefaults(): string {
    let out = '';
    for (const flag of [...this.flags.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const { typeName, usage } = unquoteUsage(flag);
      let line = `  -${flag.name}`;
      if (typeName !== '') line += ` ${typeName}`;
      // A one-letter flag without a type fits on the same line.
      line += line.length <= 4 ? '\t' : '\n    \t';
      line += usage.replaceAll('\n', '\n    \t');
      const zero = flag.holder.zeroString ?? '';
      if (flag.defaultString !== zero) {
        line += flag.holder.typeName === 'string' && flag.holder instanceof ScalarValue
          ? ` (default ${goQuote(flag.defaultString)})`
          : ` (default ${flag.defaultString})`;
      }
      out += line + '\n';
    }
    return out;
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

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Go's %q for printable ASCII and common text. */
function goQuote(s: string): string {
  return JSON.stringify(s);
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
    return [...this.entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${v}`).join(',');
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
  constructor(readonly separator: string, public entries: Map<string, string> = new Map()) {}

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
    return [...this.entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}${this.separator}${v}`).join(',');
  }
}
