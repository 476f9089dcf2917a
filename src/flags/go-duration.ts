// Go's time.ParseDuration and Duration.String, so `--timeout=1m30s` means what it means to the Go
// sidecar. Durations are milliseconds (a number, possibly fractional: "1500us" is 1.5).
//
// Parsing works in integer nanoseconds (BigInt) like Go, with Go's int64 overflow checks; a
// fractional part is added the way Go adds it, through float64 (so "1.0000000000000000001h" gives
// what Go gives, not the exact decimal).
import { goTimeQuote } from '../base/go-quote.js';

export class DurationError extends Error {
  /** The message is Go's: `time: invalid duration "x"`, `time: missing unit in duration "1"`, … */
  constructor(
    readonly input: string,
    problem = 'invalid duration',
  ) {
    super(`time: ${problem} ${goTimeQuote(input)}`);
    this.name = 'DurationError';
  }
}

const NANOS_PER_UNIT: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n, // U+00B5 micro sign
  μs: 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const TWO_POW_63 = 1n << 63n;
const NANOS_PER_MS = 1_000_000n;

/** Parses a Go duration ("300ms", "-1.5h", "2h45m") into milliseconds. */
export function parseGoDuration(input: string): number {
  return nanosToMs(parseGoDurationNanos(input));
}

/** Parses a Go duration into integer nanoseconds, exactly as time.ParseDuration. */
export function parseGoDurationNanos(input: string): bigint {
  let rest = input;
  let negative = false;
  if (rest[0] === '-' || rest[0] === '+') {
    negative = rest[0] === '-';
    rest = rest.slice(1);
  }
  // Special case: a bare zero needs no unit.
  if (rest === '0') return 0n;
  if (rest === '') throw new DurationError(input);

  let total = 0n;
  while (rest !== '') {
    const match = /^(\d*)(?:\.(\d*))?/.exec(rest);
    const whole = match?.[1] ?? '';
    const fraction = match?.[2];
    // Go requires a digit on at least one side of the dot.
    if (whole === '' && (fraction === undefined || fraction === '')) throw new DurationError(input);
    rest = rest.slice(match?.[0].length ?? 0);
    // Go reads the integer first and gives up on an overflow before looking at the unit.
    const wholeValue = whole === '' ? 0n : BigInt(whole);
    if (wholeValue > TWO_POW_63) throw new DurationError(input);

    const unitMatch = /^[^0-9.]*/.exec(rest);
    const unit = unitMatch?.[0] ?? '';
    if (unit === '') throw new DurationError(input, 'missing unit in duration');
    const unitNanos = NANOS_PER_UNIT[unit];
    if (unitNanos === undefined) throw new DurationError(input, `unknown unit ${goTimeQuote(unit)} in duration`);
    rest = rest.slice(unit.length);

    if (wholeValue > TWO_POW_63 / unitNanos) throw new DurationError(input);
    let value = wholeValue * unitNanos;
    if (fraction !== undefined && fraction !== '') {
      value += fractionNanos(fraction, unitNanos);
      if (value > TWO_POW_63) throw new DurationError(input);
    }
    total += value;
    // Like Go, allow 2^63 while summing so that the most negative duration parses.
    if (total > TWO_POW_63) throw new DurationError(input);
  }
  if (negative) return BigInt.asIntN(64, -total);
  if (total > TWO_POW_63 - 1n) throw new DurationError(input);
  return total;
}

/**
 * Go's leadingFraction and the float64 step after it: digits are taken while the integer stays
 * within 2^63 (later digits are ignored), then unit × digits / 10^count is computed in float64 and
 * truncated.
 */
function fractionNanos(digits: string, unitNanos: bigint): bigint {
  let f = 0n;
  let scale = 1;
  let overflow = false;
  for (const c of digits) {
    if (overflow) continue;
    if (f > (TWO_POW_63 - 1n) / 10n) {
      overflow = true;
      continue;
    }
    const next = f * 10n + BigInt(c.charCodeAt(0) - 48);
    if (next > TWO_POW_63) {
      overflow = true;
      continue;
    }
    f = next;
    scale *= 10;
  }
  if (f === 0n) return 0n;
  return BigInt(Math.trunc(Number(f) * (Number(unitNanos) / scale)));
}

/** Formats milliseconds like Go's Duration.String: "1h2m3.5s", "1.5ms", "0s". */
export function formatGoDuration(ms: number): string {
  return formatGoDurationNanos(BigInt(Math.round(ms * 1e6)));
}

export function formatGoDurationNanos(nanos: bigint): string {
  if (nanos === 0n) return '0s';
  const sign = nanos < 0n ? '-' : '';
  const abs = nanos < 0n ? -nanos : nanos;

  if (abs < 1_000_000_000n) {
    // Under a second: the largest of ns, µs, ms that keeps a whole part, with a fraction.
    if (abs < 1_000n) return `${sign}${abs}ns`;
    if (abs < 1_000_000n) return `${sign}${withFraction(abs, 3)}µs`;
    return `${sign}${withFraction(abs, 6)}ms`;
  }
  const hours = abs / 3_600_000_000_000n;
  const minutes = (abs / 60_000_000_000n) % 60n;
  const secondsNanos = abs % 60_000_000_000n;
  let out = `${withFraction(secondsNanos, 9)}s`;
  if (hours > 0n || minutes > 0n) out = `${minutes}m${out}`;
  if (hours > 0n) out = `${hours}h${out}`;
  return sign + out;
}

/** value / 10^digits with trailing zeros (and a bare dot) removed. */
function withFraction(value: bigint, digits: number): string {
  const divisor = 10n ** BigInt(digits);
  const whole = value / divisor;
  const fraction = (value % divisor).toString().padStart(digits, '0').replace(/0+$/, '');
  return fraction === '' ? `${whole}` : `${whole}.${fraction}`;
}

function nanosToMs(nanos: bigint): number {
  const whole = nanos / NANOS_PER_MS;
  const remainder = nanos % NANOS_PER_MS;
  return Number(whole) + Number(remainder) / 1e6;
}
