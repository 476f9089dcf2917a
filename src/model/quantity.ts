// Kubernetes resource quantities ("1Gi", "1.5Gi", "100m", "1e9") held exactly as BigInt nanos.
//
// The semantics are apimachinery's (k8s.io/apimachinery/pkg/api/resource), re-derived here:
//  - grammar <sign?><digits>[.<digits>]<suffix>, suffix one of Ki Mi Gi Ti Pi Ei | n u m "" k M G T P E
//    | e<int> E<int>; a lone sign or "." reads as zero, exactly as Go's scanner does;
//  - parsing keeps the value down to the nano and rounds a finer non-zero remainder away from zero;
//  - a binary-suffixed value is silently capped at 2^63-1 in magnitude ("8Ei" → 2^63-1);
//  - the value remembers the kind of suffix it was written with and is written back in that kind,
//    in canonical form (no fractional digits, the largest exact suffix): "1.5Gi" → "1536Mi",
//    "1.5" → "1500m", "1e9" → "1e9", "1000" → "1k";
//  - when Go's fast parser judged the input already canonical it keeps the input string verbatim
//    (so "+1Gi" prints as "+1Gi"); we mirror that so echoed values match the Go sidecar byte for byte.
//
// Storage sizes enter the program through toBytes() (Go's Value(): rounded up, away from zero) and
// leave through formatBytes(), the equivalent of resource.NewQuantity(bytes, format).String().

export const QuantityFormat = {
  BinarySI: 'BinarySI',
  DecimalSI: 'DecimalSI',
  DecimalExponent: 'DecimalExponent',
} as const;
export type QuantityFormat = (typeof QuantityFormat)[keyof typeof QuantityFormat];

export class QuantityError extends Error {
  constructor(readonly input: string, reason: string) {
    super(`invalid quantity ${JSON.stringify(input)}: ${reason}`);
    this.name = 'QuantityError';
  }
}

const NANOS_PER_UNIT = 1_000_000_000n;
const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);
/** Decimal exponents beyond this are refused instead of building enormous numbers (Go accepts up to int32). */
const MAX_DECIMAL_EXPONENT = 1000;
/** Go's fast path holds values in an int64 with at most 18 decimal digits. */
const MAX_INT64_FACTORS = 18;
const SUFFIX_CHARS = 'eEinumkKMGTP';

const DECIMAL_SUFFIX_EXPONENT: Readonly<Record<string, number>> = {
  n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18,
};
const BINARY_SUFFIX_EXPONENT: Readonly<Record<string, number>> = {
  Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60,
};
const DECIMAL_SUFFIX_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIX_EXPONENT).map(([s, e]) => [e, s]));
const BINARY_SUFFIX_BY_POWER = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const;

export class Quantity {
  /** @internal use parseQuantity, quantityFromBytes */
  constructor(
    /** The value × 10^9, exact. */
    readonly nanos: bigint,
    readonly format: QuantityFormat,
    /** The input string when Go would have cached it as already canonical. */
    private readonly verbatim?: string,
  ) {}

  /** The value in whole units (bytes for storage), rounded up away from zero like Go's Value(). */
  toBytes(): bigint {
    return divideAwayFromZero(this.nanos, NANOS_PER_UNIT);
  }

  /** The value in thousandths, rounded up away from zero like Go's MilliValue(). */
  toMilli(): bigint {
    return divideAwayFromZero(this.nanos, 1_000_000n);
  }

  isZero(): boolean {
    return this.nanos === 0n;
  }

  toString(): string {
    return this.verbatim ?? canonicalString(this.nanos, this.format);
  }
}

export function parseQuantity(input: string): Quantity {
  if (input.length === 0) throw new QuantityError(input, 'empty string; expected a number with an optional suffix such as 1Gi');
  if (input === '0') return new Quantity(0n, QuantityFormat.DecimalSI, '0');

  const { negative, num, denom, suffix } = scan(input);
  const unit = interpretSuffix(input, suffix);
  const digits = BigInt(num + denom);

  if (unit.format === QuantityFormat.BinarySI) {
    // Go's fast path: a whole number small enough that the product certainly fits an int64.
    const precision = 15 - num.length - Math.trunc((unit.exponent * 3) / 10) - 1;
    if (denom.length === 0 && precision >= 0) {
      const bytes = digits << BigInt(unit.exponent);
      if (bytes <= INT64_MAX) {
        const verbatim = (digits & 7n) !== 0n ? input : undefined;
        return new Quantity(withSign(negative, bytes * NANOS_PER_UNIT), unit.format, verbatim);
      }
    }
    // The slow path: exact value, rounded to the nano, capped at 2^63-1, tiny values shown decimal.
    let magnitude = divideCeil(digits * (1n << BigInt(unit.exponent)) * NANOS_PER_UNIT, 10n ** BigInt(denom.length));
    if (magnitude > INT64_MAX * NANOS_PER_UNIT) magnitude = INT64_MAX * NANOS_PER_UNIT;
    const format = magnitude > 0n && magnitude < NANOS_PER_UNIT ? QuantityFormat.DecimalSI : unit.format;
    return new Quantity(withSign(negative, magnitude), format);
  }

  const scale = unit.exponent - denom.length;
  if (num.length + denom.length <= MAX_INT64_FACTORS && scale >= -9) {
    // Go's fast path: digits × 10^scale, exact in an int64 mantissa.
    const shifted = num + denom;
    const isCanonical = scale % 3 === 0 && !shifted.endsWith('000') && !shifted.startsWith('0');
    const nanos = withSign(negative, digits * 10n ** BigInt(scale + 9));
    return new Quantity(nanos, unit.format, isCanonical ? input : undefined);
  }
  const magnitude = scale + 9 >= 0 ? digits * 10n ** BigInt(scale + 9) : divideCeil(digits, 10n ** BigInt(-(scale + 9)));
  return new Quantity(withSign(negative, magnitude), unit.format);
}

/** -1, 0 or 1 as a is less than, equal to or greater than b. */
export function compareQuantity(a: Quantity, b: Quantity): -1 | 0 | 1 {
  return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
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
  return new Quantity(bytes * NANOS_PER_UNIT, format);
}

/** The canonical string for a byte count, e.g. formatBytes(2147483648n, 'BinarySI') === '2Gi'. */
export function formatBytes(bytes: bigint, format: 'BinarySI' | 'DecimalSI'): string {
  return quantityFromBytes(bytes, format).toString();
}

/** Parses s and returns its size in bytes, rounded up. */
export function parseBytes(s: string): bigint {
  return parseQuantity(s).toBytes();
}

interface Scanned {
  negative: boolean;
  /** Integer digits without leading zeros, "0" when there are none. */
  num: string;
  denom: string;
  suffix: string;
}

// The same scanner as Go's parseQuantityString, including its leniency: "1.", ".5", "+", "-" and "."
// are all accepted.
function scan(input: string): Scanned {
  let pos = 0;
  let negative = false;
  if (input[0] === '-' || input[0] === '+') {
    negative = input[0] === '-';
    pos++;
  }
  while (pos < input.length && input[pos] === '0') pos++;
  if (pos === input.length) return { negative, num: '0', denom: '', suffix: '' };

  const numStart = pos;
  while (pos < input.length && isDigit(input[pos])) pos++;
  const num = input.slice(numStart, pos) || '0';

  let denom = '';
  if (input[pos] === '.') {
    const denomStart = ++pos;
    while (pos < input.length && isDigit(input[pos])) pos++;
    denom = input.slice(denomStart, pos);
  }

  const suffixStart = pos;
  while (pos < input.length && SUFFIX_CHARS.includes(input[pos] as string)) pos++;
  if (input[pos] === '-' || input[pos] === '+') pos++;
  while (pos < input.length && isDigit(input[pos])) pos++;
  if (pos < input.length) {
    throw new QuantityError(input, "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  }
  return { negative, num, denom, suffix: input.slice(suffixStart) };
}

function interpretSuffix(input: string, suffix: string): { format: QuantityFormat; exponent: number } {
  const decimal = DECIMAL_SUFFIX_EXPONENT[suffix];
  if (decimal !== undefined) return { format: QuantityFormat.DecimalSI, exponent: decimal };
  const binary = BINARY_SUFFIX_EXPONENT[suffix];
  if (binary !== undefined) return { format: QuantityFormat.BinarySI, exponent: binary };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E') && /^[+-]?\d+$/.test(suffix.slice(1))) {
    const parsed = BigInt(suffix.slice(1));
    if (parsed >= INT64_MIN && parsed <= INT64_MAX) {
      // Go truncates the parsed int64 to int32.
      const exponent = Number(BigInt.asIntN(32, parsed));
      if (Math.abs(exponent) > MAX_DECIMAL_EXPONENT) {
        throw new QuantityError(input, `exponent ${exponent} is outside the supported range ±${MAX_DECIMAL_EXPONENT}`);
      }
      return { format: QuantityFormat.DecimalExponent, exponent };
    }
  }
  throw new QuantityError(input, `unable to parse quantity's suffix ${JSON.stringify(suffix)}; use one of Ki Mi Gi Ti Pi Ei, n u m k M G T P E, or e<exponent>`);
}

// Go's CanonicalizeBytes: BinarySI only for whole values of at least 1024 in magnitude, otherwise
// the largest exponent that is a multiple of 3 with an integer mantissa.
function canonicalString(nanos: bigint, format: QuantityFormat): string {
  if (nanos === 0n) return '0';
  const magnitude = nanos < 0n ? -nanos : nanos;
  let effective = format;
  if (format === QuantityFormat.BinarySI && (magnitude < 1024n * NANOS_PER_UNIT || nanos % NANOS_PER_UNIT !== 0n)) {
    effective = QuantityFormat.DecimalSI;
  }

  if (effective === QuantityFormat.BinarySI) {
    let mantissa = nanos / NANOS_PER_UNIT;
    let power = 0;
    while (power < BINARY_SUFFIX_BY_POWER.length - 1 && mantissa % 1024n === 0n) {
      mantissa /= 1024n;
      power++;
    }
    return `${mantissa}${BINARY_SUFFIX_BY_POWER[power]}`;
  }

  let mantissa = nanos;
  let exponent = -9;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent++;
  }
  while (exponent % 3 !== 0) {
    mantissa *= 10n;
    exponent--;
  }
  // Beyond "E" (10^18) DecimalSI has no suffix and falls back to exponent notation ("1000E" →
  // "1e21"), as current apimachinery does; older releases dropped the magnitude there.
  const decimalSuffix = DECIMAL_SUFFIX_BY_EXPONENT.get(exponent);
  if (effective === QuantityFormat.DecimalSI && decimalSuffix !== undefined) return `${mantissa}${decimalSuffix}`;
  return exponent === 0 ? `${mantissa}` : `${mantissa}e${exponent}`;
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

function withSign(negative: boolean, magnitude: bigint): bigint {
  return negative ? -magnitude : magnitude;
}

function divideCeil(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}

function divideAwayFromZero(value: bigint, divisor: bigint): bigint {
  return value < 0n ? -divideCeil(-value, divisor) : divideCeil(value, divisor);
}
