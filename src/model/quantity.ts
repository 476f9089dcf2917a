// Kubernetes resource quantities ("1Gi", "1.5Gi", "100m", "1e9"), parsed and printed exactly as
// k8s.io/apimachinery v0.36.3 does (the version of the kube-apiserver the project pins in
// test/infra/components/go.mod); test/oracle/oracle.test.ts checks that against the real Go code
// on thousands of generated inputs. Re-derived from Go's behaviour, including its quirks:
//  - the lenient scanner: "1.", ".5", "+", "-", ".", and a bare suffix the fast path can hold
//    ("Ki", "k", "e5") all read as numbers (0 where there are no digits), while a bare suffix that
//    needs the slow path ("Pi", "Ei", "E-12") fails with "unable to parse numeric part of quantity";
//  - two representations, as in Go: an int64 mantissa with a base-10 scale (the fast path), or an
//    arbitrary-precision decimal rounded up (away from zero) to the nano (the slow path);
//  - a binary-suffixed value is silently capped at 2^63-1 in magnitude ("8Ei" → 2^63-1);
//  - scales are int32 and wrap as Go's do;
//  - the value prints in the kind of suffix it was written with, in canonical form (no fractional
//    digits, the largest exact suffix): "1.5Gi" → "1536Mi", "1.5" → "1500m", "1000" → "1k";
//  - when the fast path judged the input already canonical, the input is kept verbatim ("+1Gi").
//
// One deliberate v0.36.3 behaviour we keep: a DecimalSI value beyond the "E" suffix prints its
// mantissa without any suffix ("1000E" → "1", 10^21 shown as 1). Later apimachinery falls back to
// exponent form ("1e21", kubernetes/kubernetes#140459); we follow v0.36.3 because that is what
// the API server we run against stores and echoes. Sizes never go through that path: toBytes()
// is always exact.
//
// Storage sizes enter the program through toBytes() and leave through formatBytes(), the
// equivalent of resource.NewQuantity(bytes, format).String(). goValue() is Go's Value(),
// overflow behaviour included, for comparison with Go only.

export const QuantityFormat = {
  BinarySI: 'BinarySI',
  DecimalSI: 'DecimalSI',
  DecimalExponent: 'DecimalExponent',
} as const;
export type QuantityFormat = (typeof QuantityFormat)[keyof typeof QuantityFormat];

/** apimachinery's parse errors, word for word (its ErrFormatWrong, ErrNumeric, ErrSuffix). */
export const QuantityParseError = {
  FormatWrong: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
  Numeric: 'unable to parse numeric part of quantity',
  Suffix: "unable to parse quantity's suffix",
} as const;
export type QuantityParseError = (typeof QuantityParseError)[keyof typeof QuantityParseError];

export class QuantityError extends Error {
  constructor(
    readonly input: string,
    readonly goError: QuantityParseError,
  ) {
    super(`invalid quantity ${JSON.stringify(input)}: ${goError}`);
    this.name = 'QuantityError';
  }
}

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);
const UINT64 = 1n << 64n;
/** Exact values with more decimal digits than this are refused by toBytes() and friends. */
const MAX_EXACT_DIGITS = 4096;

/** Go's int32 arithmetic: wraps modulo 2^32. */
const i32 = (n: number): number => n | 0;

/** Go's fast representation: value × 10^scale, value an int64. */
interface Int64Amount {
  readonly kind: 'int64';
  readonly value: bigint;
  readonly scale: number;
}

/**
 * Go's inf.Dec: coef × 10^zeros × 10^-scale. `zeros` keeps a huge power of ten symbolic, so an
 * input such as "1234567890123456789e100000000" costs nothing (Go would build a number of a
 * hundred million digits, taking minutes, to reach the same answers).
 */
interface DecAmount {
  readonly kind: 'dec';
  readonly coef: bigint;
  readonly zeros: number;
  readonly scale: number;
}

type Amount = Int64Amount | DecAmount;

export class Quantity {
  /** @internal use parseQuantity, quantityFromBytes */
  constructor(
    private readonly amount: Amount,
    readonly format: QuantityFormat,
    /** The input string when Go cached it as already canonical. */
    private readonly cached?: string,
  ) {}

  /** The exact value in whole units (bytes for storage), rounded up away from zero. */
  toBytes(): bigint {
    return this.scaledExact(0);
  }

  /** The exact value in thousandths, rounded up away from zero (Go's MilliValue when it fits). */
  toMilli(): bigint {
    return this.scaledExact(3);
  }

  /** The value × 10^9, exact (every parsed quantity is a whole number of nanos). */
  get nanos(): bigint {
    return this.scaledExact(9);
  }

  isZero(): boolean {
    return this.amount.kind === 'int64' ? this.amount.value === 0n : this.amount.coef === 0n;
  }

  /** Go's Quantity.Value(), including what it returns when the value does not fit an int64. */
  goValue(): bigint {
    return this.amount.kind === 'int64' ? int64AmountValue(this.amount) : decValue(this.amount);
  }

  /** Go's Quantity.String(). */
  toString(): string {
    return this.cached ?? canonicalString(this.amount, this.format);
  }

  private scaledExact(digits: number): bigint {
    const { numerator, exponent } = exactOf(this.amount);
    if (numerator === 0n) return 0n;
    const shift = exponent + digits;
    if (shift > MAX_EXACT_DIGITS) {
      throw new RangeError(`quantity ${this.toString()} is too large to use as a number (more than ${MAX_EXACT_DIGITS} digits)`);
    }
    if (shift >= 0) return numerator * 10n ** BigInt(shift);
    // Finer than one unit: round up away from zero, as Go's Value() intends.
    if (-shift > MAX_EXACT_DIGITS) return numerator < 0n ? -1n : 1n;
    return divideAwayFromZero(numerator, 10n ** BigInt(-shift));
  }
}

/** The exact value of an amount: numerator × 10^exponent. */
function exactOf(a: Amount): { numerator: bigint; exponent: number } {
  return a.kind === 'int64' ? { numerator: a.value, exponent: a.scale } : { numerator: a.coef, exponent: a.zeros - a.scale };
}

export function parseQuantity(input: string): Quantity {
  if (input.length === 0) throw new QuantityError(input, QuantityParseError.FormatWrong);
  if (input === '0') return new Quantity({ kind: 'int64', value: 0n, scale: 0 }, QuantityFormat.DecimalSI, '0');

  const scanned = scan(input);
  if (scanned === undefined) throw new QuantityError(input, QuantityParseError.FormatWrong);
  const { positive, value, num, denom, suffix } = scanned;
  const unit = interpretSuffix(suffix);
  if (unit === undefined) throw new QuantityError(input, QuantityParseError.Suffix);
  const { base, exponent, format } = unit;

  // The fast path: the digits fit an int64 mantissa with room to spare.
  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (format === QuantityFormat.BinarySI) {
    if (exponent >= 0 && denom.length === 0) {
      mantissa = 1n << BigInt(exponent);
      precision = 15 - num.length - Math.trunc((Math.fround(exponent) * 3) / 10) - 1;
    } else {
      precision = -1;
    }
  } else {
    scale = exponent;
    precision = 18 - (num.length + denom.length);
  }
  if (precision >= 0) {
    scale = i32(scale - denom.length);
    if (scale >= -9) {
      const shifted = num + denom;
      const digits = BigInt(shifted);
      const product = digits * mantissa;
      if (product <= INT64_MAX) {
        const amount: Int64Amount = { kind: 'int64', value: positive ? product : -product, scale };
        // Go keeps the input as the printed form when it is already canonical.
        const isCanonical = format === QuantityFormat.BinarySI ? (digits & 7n) !== 0n : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
        return new Quantity(amount, format, isCanonical ? input : undefined);
      }
    }
  }

  // The slow path: the decimal number as written, times the suffix, rounded up to the nano.
  const numeric = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(value);
  const whole = numeric?.[2] ?? '';
  const fraction = numeric?.[3] ?? '';
  if (whole === '' && fraction === '') throw new QuantityError(input, QuantityParseError.Numeric);
  let coef = BigInt(whole + fraction);
  let decScale = fraction.length;
  if (base === 10) decScale = i32(decScale + i32(-exponent));
  else coef <<= BigInt(exponent);

  let amount: DecAmount = { kind: 'dec', coef, zeros: 0, scale: decScale };
  if (coef !== 0n) amount = roundUpToNano(amount);
  let finalFormat: QuantityFormat = format;
  if (format === QuantityFormat.BinarySI) {
    if (compareDec(amount, INT64_MAX) > 0) amount = { kind: 'dec', coef: INT64_MAX, zeros: 0, scale: 0 };
    if (compareDec(amount, 1n) < 0 && amount.coef > 0n) finalFormat = QuantityFormat.DecimalSI;
  }
  if (!positive) amount = { ...amount, coef: -amount.coef };
  return new Quantity(amount, finalFormat);
}

/** -1, 0 or 1 as a is less than, equal to or greater than b. */
export function compareQuantity(a: Quantity, b: Quantity): -1 | 0 | 1 {
  const x = a.nanos;
  const y = b.nanos;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The string the API server would store for q (Go's Quantity.String()). */
export function formatQuantity(q: Quantity): string {
  return q.toString();
}

/** Go's resource.NewQuantity(bytes, format): bytes must fit an int64. */
export function quantityFromBytes(bytes: bigint, format: 'BinarySI' | 'DecimalSI' = QuantityFormat.BinarySI): Quantity {
  if (bytes > INT64_MAX || bytes < INT64_MIN) {
    throw new RangeError(`${bytes} bytes is outside the int64 range a Kubernetes quantity can hold`);
  }
  return new Quantity({ kind: 'int64', value: bytes, scale: 0 }, format);
}

/** The canonical string for a byte count, e.g. formatBytes(2147483648n, 'BinarySI') === '2Gi'. */
export function formatBytes(bytes: bigint, format: 'BinarySI' | 'DecimalSI'): string {
  return quantityFromBytes(bytes, format).toString();
}

/** Parses s and returns its size in bytes, rounded up. */
export function parseBytes(s: string): bigint {
  return parseQuantity(s).toBytes();
}

// --- parsing ---------------------------------------------------------------------------------

interface Scanned {
  positive: boolean;
  /** The sign and number as written (Go's `value`), for the slow path. */
  value: string;
  /** Integer digits without leading zeros, "0" when there are none. */
  num: string;
  denom: string;
  suffix: string;
}

const SUFFIX_CHARS = 'eEinumkKMGTP';

/** Go's parseQuantityString; undefined where it reports ErrFormatWrong. */
function scan(str: string): Scanned | undefined {
  const end = str.length;
  let positive = true;
  let pos = 0;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  while (pos < end && str[pos] === '0') pos++;
  // Only zeros: the number is zero, whatever the sign.
  if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };

  const numStart = pos;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos >= end) return { positive, value: str, num: str.slice(numStart), denom: '', suffix: '' };
  const num = str.slice(numStart, pos) || '0';

  let denom = '';
  if (str[pos] === '.') {
    const denomStart = ++pos;
    while (pos < end && isDigit(str[pos])) pos++;
    denom = str.slice(denomStart, pos);
    if (pos >= end) return { positive, value: str, num, denom, suffix: '' };
  }
  const value = str.slice(0, pos);

  const suffixStart = pos;
  while (pos < end && SUFFIX_CHARS.includes(str[pos] as string)) pos++;
  if (pos < end && (str[pos] === '-' || str[pos] === '+')) pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) return undefined;
  return { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

const DECIMAL_SUFFIX_EXPONENT: ReadonlyMap<string, number> = new Map([
  ['n', -9],
  ['u', -6],
  ['m', -3],
  ['', 0],
  ['k', 3],
  ['M', 6],
  ['G', 9],
  ['T', 12],
  ['P', 15],
  ['E', 18],
]);
const BINARY_SUFFIX_EXPONENT: ReadonlyMap<string, number> = new Map([
  ['Ki', 10],
  ['Mi', 20],
  ['Gi', 30],
  ['Ti', 40],
  ['Pi', 50],
  ['Ei', 60],
]);
const DECIMAL_SUFFIX_BY_EXPONENT = new Map([...DECIMAL_SUFFIX_EXPONENT].map(([s, e]) => [e, s]));
const BINARY_SUFFIX_BY_EXPONENT = new Map([...BINARY_SUFFIX_EXPONENT].map(([s, e]) => [e, s]));

function interpretSuffix(suffix: string): { base: 2 | 10; exponent: number; format: QuantityFormat } | undefined {
  const decimal = DECIMAL_SUFFIX_EXPONENT.get(suffix);
  if (decimal !== undefined) return { base: 10, exponent: decimal, format: QuantityFormat.DecimalSI };
  const binary = BINARY_SUFFIX_EXPONENT.get(suffix);
  if (binary !== undefined) return { base: 2, exponent: binary, format: QuantityFormat.BinarySI };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    // strconv.ParseInt(rest, 10, 64), then truncated to int32 as Go does.
    const rest = suffix.slice(1);
    if (!/^[+-]?\d+$/.test(rest)) return undefined;
    const parsed = BigInt(rest);
    if (parsed > INT64_MAX || parsed < INT64_MIN) return undefined;
    return { base: 10, exponent: Number(BigInt.asIntN(32, parsed)), format: QuantityFormat.DecimalExponent };
  }
  return undefined;
}

/** inf.Dec.Round(x, 9, RoundUp) for a non-zero, not yet negated x. */
function roundUpToNano(a: DecAmount): DecAmount {
  const magnitude = a.coef < 0n ? -a.coef : a.coef;
  const sign = a.coef < 0n ? -1n : 1n;
  if (a.scale > 9) {
    const drop = a.scale - 9;
    // Dropping more digits than there are leaves a non-zero value at one nano.
    const rounded = drop > magnitude.toString().length ? 1n : divideCeil(magnitude, 10n ** BigInt(drop));
    return { kind: 'dec', coef: sign * rounded, zeros: 0, scale: 9 };
  }
  return { kind: 'dec', coef: a.coef, zeros: 9 - a.scale, scale: 9 };
}

/** Compares a (small: only binary values come here) with an integer. */
function compareDec(a: DecAmount, n: bigint): number {
  const left = a.coef * 10n ** BigInt(a.zeros);
  const right = n * 10n ** BigInt(Math.max(0, a.scale));
  const l = a.scale < 0 ? left * 10n ** BigInt(-a.scale) : left;
  return l < right ? -1 : l > right ? 1 : 0;
}

// --- printing --------------------------------------------------------------------------------

/** Go's CanonicalizeBytes: number and suffix. */
function canonicalString(amount: Amount, format: QuantityFormat): string {
  if (amount.kind === 'int64' ? amount.value === 0n : amount.coef === 0n) return '0';
  let effective = format;
  if (format === QuantityFormat.BinarySI) {
    // Between -1024 and 1024, or not a whole number: shown as DecimalSI.
    const whole = wholeRoundedUp(amount);
    if (exactlyBelow1024(amount) || !whole.exact) {
      effective = QuantityFormat.DecimalSI;
    } else {
      let mantissa = whole.value;
      let power = 0;
      while (mantissa % 1024n === 0n) {
        mantissa /= 1024n;
        power++;
      }
      return `${mantissa}${BINARY_SUFFIX_BY_EXPONENT.get(power * 10) ?? ''}`;
    }
  }
  const { digits, exponent } = amount.kind === 'int64' ? int64Canonical(amount) : decCanonical(amount);
  if (effective === QuantityFormat.DecimalExponent) return exponent === 0 ? digits : `${digits}e${exponent}`;
  // DecimalSI: v0.36.3 prints no suffix where its table has none (see the note at the top).
  return `${digits}${DECIMAL_SUFFIX_BY_EXPONENT.get(exponent) ?? ''}`;
}

/** CmpInt64(-1024) > 0 && CmpInt64(1024) < 0, exactly. */
function exactlyBelow1024(amount: Amount): boolean {
  const { numerator, exponent } = exactOf(amount);
  const magnitude = numerator < 0n ? -numerator : numerator;
  if (exponent >= 0) return magnitude * 10n ** BigInt(exponent) < 1024n;
  return magnitude < 1024n * 10n ** BigInt(-exponent);
}

/** The value rounded up away from zero to a whole number, and whether that lost nothing. */
function wholeRoundedUp(amount: Amount): { value: bigint; exact: boolean } {
  const { numerator, exponent } = exactOf(amount);
  if (exponent >= 0) return { value: numerator * 10n ** BigInt(exponent), exact: true };
  const divisor = 10n ** BigInt(-exponent);
  return { value: divideAwayFromZero(numerator, divisor), exact: numerator % divisor === 0n };
}

/** int64Amount.AsCanonicalBytes: trailing zeros into the exponent, then down to a multiple of 3. */
function int64Canonical(a: Int64Amount): { digits: string; exponent: number } {
  let amount = a.value;
  let times = 0;
  while ((amount >= 10n || amount <= -10n) && amount % 10n === 0n) {
    amount /= 10n;
    times++;
  }
  let exponent = i32(a.scale + times);
  const rem = exponent % 3;
  const steps = rem === 1 || rem === -2 ? 1 : rem === 2 || rem === -1 ? 2 : 0;
  if (steps > 0) {
    const scaled = amount * 10n ** BigInt(steps);
    // Go falls back to its decimal type when the int64 would overflow; the result is the same
    // number, reached through the decimal type's own exponent arithmetic.
    if (scaled > INT64_MAX || scaled < INT64_MIN) {
      return decCanonical({ kind: 'dec', coef: a.value, zeros: 0, scale: i32(-a.scale) });
    }
    amount = scaled;
    exponent = i32(exponent - steps);
  }
  return { digits: amount.toString(), exponent };
}

/** infDecAmount.AsCanonicalBytes. */
function decCanonical(a: DecAmount): { digits: string; exponent: number } {
  let amount = a.coef;
  let times = a.zeros;
  while (amount % 10n === 0n && amount !== 0n) {
    amount /= 10n;
    times++;
  }
  let exponent = i32(-a.scale + i32(times));
  while (exponent % 3 !== 0) {
    amount *= 10n;
    exponent = i32(exponent - 1);
  }
  return { digits: amount.toString(), exponent };
}

// --- Go's Value() ------------------------------------------------------------------------------

/**
 * int64Amount.AsScaledInt64(0): below one unit it rounds away from zero. On overflow Go's answer
 * depends on the scale: scales 1, 2, 3, 6 and 9 multiply once and keep the wrapped int64, any
 * other scale multiplies by 10 step by step and gives 0.
 */
function int64AmountValue(a: Int64Amount): bigint {
  if (a.value === 0n || a.scale === 0) return a.value;
  if (a.scale < 0) {
    if (-a.scale > 19) return a.value < 0n ? -1n : 1n;
    return divideAwayFromZero(a.value, 10n ** BigInt(-a.scale));
  }
  if ([1, 2, 3, 6, 9].includes(a.scale)) return BigInt.asIntN(64, a.value * 10n ** BigInt(a.scale));
  if (a.scale > 19) return 0n;
  const scaled = a.value * 10n ** BigInt(a.scale);
  return scaled > INT64_MAX || scaled < INT64_MIN ? 0n : scaled;
}

/**
 * Go's scaledValue(unscaled, scale, 0) over the decimal type, int64 wrapping included. A non-zero
 * parsed decimal always has scale 9 (rounded to the nano), or 0 (a capped binary value).
 */
function decValue(a: DecAmount): bigint {
  if (a.coef === 0n) return 0n;
  if (a.scale === 0) return wrapInt64(a.coef, a.zeros);
  if (a.scale !== 9) throw new Error(`unexpected decimal scale ${a.scale}`);
  const isBelowMax = a.coef < 0n || (a.zeros < 19 && a.coef * 10n ** BigInt(a.zeros) < INT64_MAX);
  if (isBelowMax) {
    // Go divides the (wrapped) int64 and adds one for any remainder: toward +inf, even when negative.
    const v = wrapInt64(a.coef, a.zeros);
    const result = v / NANO;
    return v % NANO !== 0n ? result + 1n : result;
  }
  // Positive and at least 2^63-1: big division, then Int64() keeps the low 64 bits.
  if (a.zeros >= 9) return wrapInt64(a.coef, a.zeros - 9);
  const unscaled = a.coef * 10n ** BigInt(a.zeros);
  const result = BigInt.asIntN(64, unscaled / NANO);
  return unscaled % NANO !== 0n ? BigInt.asIntN(64, result + 1n) : result;
}

const NANO = 1_000_000_000n;

/** big.Int.Int64() of coef × 10^zeros: the low 64 bits, as two's complement. */
function wrapInt64(coef: bigint, zeros: number): bigint {
  // 10^zeros has 2^zeros as a factor, so from 64 zeros on the low 64 bits are all zero.
  if (zeros >= 64) return 0n;
  return BigInt.asIntN(64, BigInt.asUintN(64, coef) * (10n ** BigInt(zeros) % UINT64));
}

// --- helpers -----------------------------------------------------------------------------------

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

function divideCeil(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}

function divideAwayFromZero(value: bigint, divisor: bigint): bigint {
  return value < 0n ? -divideCeil(-value, divisor) : divideCeil(value, divisor);
}
