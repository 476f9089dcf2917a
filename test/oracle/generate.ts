// Seeded input generators for the differential tests: mostly well-formed inputs near the edges
// (signs, exponents, suffixes, underscores, huge and tiny numbers), and a share of mutated ones
// (a character inserted, dropped or replaced, including control and non-ASCII characters). The
// same seed always gives the same inputs.

/** A small, fast PRNG (sfc32) seeded through splitmix32, so nearby seeds give unrelated streams. */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
  }

  /** A float in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t / 2 ** 32;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  digits(count: number, alphabet = '0123456789'): string {
    let out = '';
    for (let i = 0; i < count; i++) out += alphabet[this.int(alphabet.length)];
    return out;
  }
}

/** Characters a mutation inserts: syntax characters, control and non-ASCII ones. */
const ODD_CHARACTERS = [
  '.',
  '_',
  '+',
  '-',
  'e',
  'E',
  'i',
  'p',
  'x',
  'X',
  ' ',
  '\t',
  '\n',
  '\0',
  '\x7f',
  '"',
  '\\',
  '=',
  'µ',
  'μ',
  'é',
  '\u00a0',
  '\u200b',
  '\u2028',
  '\ufeff',
  '\ufffd',
  '日',
  '٣',
  '１',
  '😀',
  '\u{10ffff}',
  '\u0301',
];

/** Applies one random edit: insert, delete or replace a character. */
export function mutate(rng: Random, s: string): string {
  const chars = [...s];
  const at = rng.int(chars.length + 1);
  switch (rng.int(3)) {
    case 0:
      chars.splice(at, 0, rng.pick(ODD_CHARACTERS));
      break;
    case 1:
      chars.splice(at, 1);
      break;
    default:
      chars.splice(at, 1, rng.pick(ODD_CHARACTERS));
  }
  return chars.join('');
}

function sign(rng: Random): string {
  return rng.pick(['', '', '', '+', '-', '-']);
}

/** An unsigned decimal number: integer, fraction or both, biased to edge lengths and values. */
function decimalNumber(rng: Random, maxDigits: number): string {
  const special = [
    '0',
    '1',
    '9',
    '10',
    '999',
    '1024',
    '9223372036854775807',
    '9223372036854775808',
    '18446744073709551615',
    '123456789012345678',
    '1234567890123456789',
    '0.1',
    '0.5',
    '1.5',
    '.5',
    '5.',
    '.',
    '0.000000001',
    '0.0000000001',
    '100035',
    '00',
    '007',
  ];
  if (rng.chance(0.15)) return rng.pick(special);
  const zeros = rng.chance(0.15) ? '0'.repeat(1 + rng.int(3)) : '';
  const whole = rng.chance(0.85) ? rng.digits(rng.int(maxDigits) + (rng.chance(0.8) ? 1 : 0)) : '';
  if (rng.chance(0.6)) return zeros + whole;
  const fraction = rng.digits(rng.int(Math.min(maxDigits, 14)) + (rng.chance(0.8) ? 1 : 0));
  return `${zeros}${whole}.${fraction}`;
}

// --- quantities ------------------------------------------------------------------------------

const QUANTITY_SUFFIXES = [
  '',
  '',
  '',
  'n',
  'u',
  'm',
  'k',
  'M',
  'G',
  'T',
  'P',
  'E',
  'Ki',
  'Mi',
  'Gi',
  'Ti',
  'Pi',
  'Ei',
  'K',
  'i',
  'KiB',
  'mi',
  'ki',
  'e',
  'E',
  'ee',
  'iE',
  'Kii',
];

/**
 * A quantity string. Exponents stay within ±400 unless the number is short (Go's fast path):
 * for longer numbers Go builds the full power of ten, which takes it minutes at ±10^6.
 */
export function quantityInput(rng: Random): string {
  if (rng.chance(0.03)) return rng.pick(['Pi', 'Ei', '-Pi', '.Ei', 'E-12', '+.e-12', 'Ki', 'k', 'e5', '+', '-', '.', '', '0', '1000E', '8Ei', '10Ei']);
  const num = decimalNumber(rng, rng.chance(0.2) ? 30 : 12);
  let suffix: string;
  if (rng.chance(0.3)) {
    const isShortNonZero = num.replace(/[^0-9]/g, '').replace(/^0+/, '').length <= 18 && /[1-9]/.test(num);
    let exponent = String(rng.chance(0.7) ? rng.int(40) - 20 : rng.int(801) - 400);
    // Huge exponents that Go handles quickly: positive ones on its fast path, and those whose
    // int32 truncation is small.
    if (isShortNonZero && rng.chance(0.1)) exponent = rng.pick(['2147483647', '99999', '1000000', '4294967299', '9223372036854775807', '-9223372036854775808']);
    if (rng.chance(0.02)) exponent = rng.pick(['9223372036854775808', '18446744073709551616', '1_0', '']);
    suffix = `${rng.pick(['e', 'E'])}${rng.chance(0.2) && !exponent.startsWith('-') ? '+' : ''}${exponent}`;
  } else {
    suffix = rng.pick(QUANTITY_SUFFIXES);
  }
  const s = `${sign(rng)}${num}${suffix}`;
  return rng.chance(0.1) ? mutateQuantity(rng, s) : s;
}

function mutateQuantity(rng: Random, s: string): string {
  const mutated = mutate(rng, s);
  // A mutation must not make an exponent that is expensive for Go (see quantityInput).
  const exponent = /[eE]([+-]?\d+)$/.exec(mutated);
  return exponent && Math.abs(Number(exponent[1])) > 400 ? s : mutated;
}

// --- durations -------------------------------------------------------------------------------

const DURATION_UNITS = ['ns', 'us', 'µs', 'μs', 'ms', 's', 'm', 'h', 'h', 'm', 's', 'd', 'H', 'S', 'sec', 'mss', ''];

export function durationInput(rng: Random): string {
  if (rng.chance(0.03))
    return rng.pick([
      '0',
      '-0',
      '+0',
      '',
      '-',
      '.',
      '.s',
      '1',
      '9223372036854775807ns',
      '9223372036854775808ns',
      '-9223372036854775808ns',
      '2562047h47m16.854775807s',
      '2562048h',
      '600h',
    ]);
  const parts = 1 + rng.int(rng.chance(0.2) ? 5 : 2);
  let s = sign(rng);
  for (let i = 0; i < parts; i++) s += decimalNumber(rng, rng.chance(0.1) ? 25 : 6) + rng.pick(DURATION_UNITS);
  return rng.chance(0.1) ? mutate(rng, s) : s;
}

// --- the flag package's numbers ----------------------------------------------------------------

/** Sprinkles underscores: some where Go allows them, some where it does not. */
function underscores(rng: Random, s: string): string {
  if (!rng.chance(0.25)) return s;
  const chars = [...s];
  const count = 1 + rng.int(2);
  for (let i = 0; i < count; i++) chars.splice(rng.int(chars.length + 1), 0, '_');
  return chars.join('');
}

export function floatInput(rng: Random): string {
  if (rng.chance(0.05)) {
    return rng.pick([
      'inf',
      '+Inf',
      '-infinity',
      'INFINITY',
      'infin',
      'nan',
      'NaN',
      '+nan',
      '-NaN',
      'nanx',
      '1e6',
      '0x1p-2',
      '1e1_0',
      '0x',
      '0x1',
      '0x.p1',
      '0x1.8p1',
      '0X1P+2',
      '1_000.5',
      '_1',
      '1_',
      '1__0',
      '0x_1p0',
      '1e308',
      '1.8e308',
      '4.9e-324',
      '2e-324',
      '2.4703282292062328e-324',
      '-0',
      '0.0',
      '1e-400',
      '1e400',
      '9007199254740993',
      '123456789',
      '1234567',
      '100000',
      '0.0001',
      '0.00001',
    ]);
  }
  let s: string;
  if (rng.chance(0.2)) {
    const mantissa = rng.digits(rng.int(16), '0123456789abcdefABCDEF');
    const fraction = rng.chance(0.4) ? `.${rng.digits(rng.int(14), '0123456789abcdef')}` : '';
    const exponent = rng.chance(0.9) ? `${rng.pick(['p', 'P'])}${rng.pick(['', '+', '-'])}${rng.int(rng.chance(0.8) ? 80 : 1200)}` : '';
    s = `${sign(rng)}0${rng.pick(['x', 'X'])}${mantissa}${fraction}${exponent}`;
  } else {
    const exponent = rng.chance(0.4)
      ? `${rng.pick(['e', 'E'])}${rng.pick(['', '+', '-'])}${rng.chance(0.9) ? rng.int(30) : rng.pick([307, 308, 309, 320, 323, 324, 325, 400, 99999])}`
      : '';
    s = `${sign(rng)}${decimalNumber(rng, rng.chance(0.1) ? 40 : 12)}${exponent}`;
  }
  s = underscores(rng, s);
  return rng.chance(0.1) ? mutate(rng, s) : s;
}

export function intInput(rng: Random): string {
  if (rng.chance(0.05)) {
    return rng.pick([
      '0',
      '-0',
      '+',
      '-',
      '0x',
      '0b',
      '0o',
      '0x_1',
      '0_1',
      '08',
      '0b102',
      '9223372036854775807',
      '9223372036854775808',
      '-9223372036854775808',
      '-9223372036854775809',
      '18446744073709551616',
      '99999999999999999999x',
      '9007199254740991',
      '9007199254740992',
      '1_000',
      '_1',
      '1_',
    ]);
  }
  const base = rng.pick(['', '', '', '0x', '0X', '0o', '0b', '0']);
  const alphabet = base === '0x' || base === '0X' ? '0123456789abcdefABCDEF' : base === '0b' ? '01' : base === '0o' || base === '0' ? '01234567' : '0123456789';
  const s = underscores(rng, `${sign(rng)}${base}${rng.digits(1 + rng.int(rng.chance(0.2) ? 25 : 10), alphabet)}`);
  return rng.chance(0.15) ? mutate(rng, s) : s;
}

export function boolInput(rng: Random): string {
  const words = ['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False', 'yes', 'tRUE', 'on', '', ' true'];
  const s = rng.pick(words);
  return rng.chance(0.2) ? mutate(rng, s) : s;
}

/** Any text, for quoting: printable, control, invalid-looking and astral characters. */
export function textInput(rng: Random): string {
  const pools = [
    () => String.fromCharCode(0x20 + rng.int(0x5f)),
    () => String.fromCharCode(rng.int(0x20)),
    () => '\x7f',
    () => String.fromCodePoint(0x80 + rng.int(0x780)),
    () => String.fromCodePoint(0x800 + rng.int(0xd000 - 0x800)),
    () => String.fromCodePoint(0xe000 + rng.int(0x2000)),
    () => String.fromCodePoint(0x10000 + rng.int(0x20000)),
    () => String.fromCodePoint(0xe0000 + rng.int(0x200)),
    () => rng.pick(ODD_CHARACTERS),
  ];
  let s = '';
  const length = rng.int(8);
  for (let i = 0; i < length; i++) s += rng.pick(pools)();
  return s;
}
