import { test } from 'node:test';
import assert from 'node:assert/strict';
import { QuantityError, compareQuantity, formatBytes, formatQuantity, parseBytes, parseQuantity, quantityFromBytes } from './quantity.js';

const KI = 1024n;
const GI = KI ** 3n;

// input → canonical string (Go's String()), format, bytes (Go's Value(), rounded up away from zero)
const cases: Array<[input: string, canonical: string, format: string, bytes: bigint]> = [
  // binary suffixes
  ['1Ki', '1Ki', 'BinarySI', 1024n],
  ['8Ki', '8Ki', 'BinarySI', 8192n],
  ['7Mi', '7Mi', 'BinarySI', 7n * KI ** 2n],
  ['6Gi', '6Gi', 'BinarySI', 6n * GI],
  ['5Ti', '5Ti', 'BinarySI', 5n * KI ** 4n],
  ['4Pi', '4Pi', 'BinarySI', 4n * KI ** 5n],
  ['3Ei', '3Ei', 'BinarySI', 3n * KI ** 6n],
  ['1024Mi', '1Gi', 'BinarySI', GI],
  ['2048Mi', '2Gi', 'BinarySI', 2n * GI],
  ['1536Mi', '1536Mi', 'BinarySI', 1536n * KI ** 2n],
  ['1.5Gi', '1536Mi', 'BinarySI', 1536n * KI ** 2n],
  ['0.5Mi', '512Ki', 'BinarySI', 512n * KI],
  ['100.035Ki', '102435840m', 'BinarySI', 102436n],
  ['1.1Ki', '1126400m', 'BinarySI', 1127n],
  ['0.5Ki', '512', 'BinarySI', 512n],
  ['.001Ki', '1024m', 'BinarySI', 2n],
  ['.000001Ki', '1024u', 'DecimalSI', 1n],
  ['.000000000001Ki', '2n', 'DecimalSI', 1n],
  // binary values are capped at 2^63-1, silently, as Go does
  ['8Ei', '9223372036854775807', 'BinarySI', 2n ** 63n - 1n],
  ['9223372036854775807Ki', '9223372036854775807', 'BinarySI', 2n ** 63n - 1n],
  // decimal suffixes
  ['1', '1', 'DecimalSI', 1n],
  ['1000', '1k', 'DecimalSI', 1000n],
  ['1000M', '1G', 'DecimalSI', 1_000_000_000n],
  ['1000000000', '1G', 'DecimalSI', 1_000_000_000n],
  ['2147483648', '2147483648', 'DecimalSI', 2n * GI],
  ['50k', '50k', 'DecimalSI', 50_000n],
  ['1.5k', '1500', 'DecimalSI', 1500n],
  ['1.01E', '1010P', 'DecimalSI', 1_010_000_000_000_000_000n],
  ['1E', '1E', 'DecimalSI', 10n ** 18n],
  // v0.36.3 drops the magnitude of a DecimalSI value beyond E when printing; toBytes stays exact
  ['1000E', '1', 'DecimalSI', 10n ** 21n],
  ['1e21', '1e21', 'DecimalExponent', 10n ** 21n],
  ['18446744073709551616', '18446744073709551616', 'DecimalSI', 2n ** 64n],
  // milli and smaller: kept to the nano, bytes round up
  ['100m', '100m', 'DecimalSI', 1n],
  ['1500m', '1500m', 'DecimalSI', 2n],
  ['1.5', '1500m', 'DecimalSI', 2n],
  ['0.5', '500m', 'DecimalSI', 1n],
  ['.5', '500m', 'DecimalSI', 1n],
  ['1.2345', '1234500u', 'DecimalSI', 2n],
  ['0.1m', '100u', 'DecimalSI', 1n],
  ['5n', '5n', 'DecimalSI', 1n],
  ['3.001n', '4n', 'DecimalSI', 1n],
  ['0.9n', '1n', 'DecimalSI', 1n],
  ['0.0000000001', '1n', 'DecimalSI', 1n],
  ['0.00000012345', '124n', 'DecimalSI', 1n],
  // exponents keep their notation
  ['1e9', '1e9', 'DecimalExponent', 1_000_000_000n],
  ['1E3', '1E3', 'DecimalExponent', 1000n],
  ['1e3', '1e3', 'DecimalExponent', 1000n],
  ['12e6', '12e6', 'DecimalExponent', 12_000_000n],
  ['1.2e3', '1200', 'DecimalExponent', 1200n],
  ['1.3E+6', '1300e3', 'DecimalExponent', 1_300_000n],
  ['1e14', '100e12', 'DecimalExponent', 10n ** 14n],
  ['1E-3', '1E-3', 'DecimalExponent', 1n],
  ['10E-4', '1e-3', 'DecimalExponent', 1n],
  ['0.5e-9', '1e-9', 'DecimalExponent', 1n],
  ['1e22', '10e21', 'DecimalExponent', 10n ** 22n],
  // signs
  ['-1.5', '-1500m', 'DecimalSI', -2n],
  ['-1Gi', '-1Gi', 'BinarySI', -GI],
  ['-1024Mi', '-1Gi', 'BinarySI', -GI],
  ['+1024Mi', '1Gi', 'BinarySI', GI],
  // zero
  ['0', '0', 'DecimalSI', 0n],
  ['0Gi', '0', 'BinarySI', 0n],
  ['0.0', '0', 'DecimalSI', 0n],
  ['-0', '0', 'DecimalSI', 0n],
  // Go's lenient scanner: these parse too
  ['1.', '1.', 'DecimalSI', 1n],
  ['1.G', '1.G', 'DecimalSI', 1_000_000_000n],
  ['1.0G', '1G', 'DecimalSI', 1_000_000_000n],
  ['.', '0', 'DecimalSI', 0n],
  ['+', '0', 'DecimalSI', 0n],
  ['Gi', '0', 'BinarySI', 0n],
  ['Ki', '0', 'BinarySI', 0n],
  ['k', '0', 'DecimalSI', 0n],
  ['e5', '0', 'DecimalExponent', 0n],
  // huge exponents on the fast path are kept symbolically, as Go keeps them
  ['1e99999', '1e99999', 'DecimalExponent', -1n],
  ['12e2147483647', '120e2147483646', 'DecimalExponent', -1n],
  // Go keeps the input verbatim when its fast parser judged it canonical, sign and zeros included
  ['+1Gi', '+1Gi', 'BinarySI', GI],
  ['01k', '01k', 'DecimalSI', 1000n],
  ['10.035M', '10.035M', 'DecimalSI', 10_035_000n],
  ['10.0350M', '10035k', 'DecimalSI', 10_035_000n],
];

test('parseQuantity: canonical string, format and bytes like apimachinery', () => {
  for (const [input, canonical, format, bytes] of cases) {
    const q = parseQuantity(input);
    assert.equal(formatQuantity(q), canonical, `String() of ${input}`);
    assert.equal(q.format, format, `format of ${input}`);
    // -1n marks a value too large to be a size: toBytes refuses it.
    if (bytes === -1n) assert.throws(() => q.toBytes(), RangeError, input);
    else assert.equal(q.toBytes(), bytes, `bytes of ${input}`);
  }
});

test('parseQuantity: every canonical output parses back to the same value', () => {
  for (const [input, , , bytes] of cases) {
    if (input === '1000E' || bytes === -1n) continue; // v0.36.3's lossy print, and values beyond any size
    const q = parseQuantity(input);
    assert.equal(compareQuantity(parseQuantity(formatQuantity(q)), q), 0, input);
  }
});

test('parseQuantity: invalid input throws QuantityError naming the input', () => {
  const invalid = [
    '',
    'abc',
    'aoeu',
    '1K',
    '1KiB',
    '1i',
    '.5i',
    '-3.01i',
    '0.1mi',
    '0.1am',
    '1.1.M',
    '1+1.0M',
    '1e',
    '1e+',
    '-3.01e-',
    ' 1',
    '1 ',
    '1.2.3',
    '--1',
    '1Gi ',
    'Pi',
    'Ei',
    '-Pi',
    '.Ei',
    'E-12',
    '+.e-12',
  ];
  for (const input of invalid) {
    assert.throws(
      () => parseQuantity(input),
      (err: unknown) => {
        assert.ok(err instanceof QuantityError, `${JSON.stringify(input)} gives ${String(err)}`);
        assert.equal(err.input, input);
        assert.match(err.message, /^invalid quantity /);
        return true;
      },
      JSON.stringify(input),
    );
  }
});

test('parseQuantity: inputs without digits that need the slow path fail as in apimachinery, with its error text', () => {
  const table: Array<[string, string]> = [
    ['Pi', 'unable to parse numeric part of quantity'],
    ['Ei', 'unable to parse numeric part of quantity'],
    ['-Pi', 'unable to parse numeric part of quantity'],
    ['.Ei', 'unable to parse numeric part of quantity'],
    ['E-12', 'unable to parse numeric part of quantity'],
    ['+.e-12', 'unable to parse numeric part of quantity'],
    ['', "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"],
    ['1Gi ', "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"],
    ['1KiB', "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"],
    ['1K', "unable to parse quantity's suffix"],
    ['1e9223372036854775808', "unable to parse quantity's suffix"],
  ];
  for (const [input, goError] of table) {
    assert.throws(
      () => parseQuantity(input),
      (err: unknown) => {
        assert.ok(err instanceof QuantityError, `${JSON.stringify(input)} gives ${String(err)}`);
        assert.equal(err.goError, goError, input);
        assert.equal(err.message, `invalid quantity ${JSON.stringify(input)}: ${goError}`);
        return true;
      },
      JSON.stringify(input),
    );
  }
});

test("goValue is Go's Value(), overflow included; toBytes stays exact", () => {
  const table: Array<[string, bigint, bigint]> = [
    ['1Gi', 2n ** 30n, 2n ** 30n],
    ['1e19', 0n, 10n ** 19n], // positiveScaleInt64 step by step: 0 on overflow
    ['1000E', 0n, 10n ** 21n],
    ['220726826249455192M', -6913336553302637056n, 220726826249455192n * 10n ** 6n], // one multiply: wrapped
    ['18446744073709551616', 0n, 2n ** 64n], // the decimal type: low 64 bits
    ['-1.5', -2n, -2n],
    ['-0.0000000001', 1n, -1n], // Go's decimal path rounds toward +inf
  ];
  for (const [input, goValue, bytes] of table) {
    const q = parseQuantity(input);
    assert.equal(q.goValue(), goValue, `goValue of ${input}`);
    assert.equal(q.toBytes(), bytes, `toBytes of ${input}`);
  }
});

test('compareQuantity orders by value, across formats', () => {
  const table: Array<[string, string, -1 | 0 | 1]> = [
    ['0', '0', 0],
    ['100m', '50m', 1],
    ['50m', '100m', -1],
    ['10000T', '100Gi', 1],
    ['1Gi', '1024Mi', 0],
    ['1G', '1Gi', -1],
    ['1e9', '1G', 0],
    ['-1', '0', -1],
    ['1.5Gi', '1536Mi', 0],
  ];
  for (const [a, b, want] of table) {
    assert.equal(compareQuantity(parseQuantity(a), parseQuantity(b)), want, `${a} vs ${b}`);
  }
});

test('formatBytes matches resource.NewQuantity(bytes, format).String()', () => {
  const table: Array<[bigint, 'BinarySI' | 'DecimalSI', string]> = [
    [0n, 'BinarySI', '0'],
    [1n, 'BinarySI', '1'],
    [1000n, 'BinarySI', '1k'], // below 1024 BinarySI prints as DecimalSI
    [1023n, 'BinarySI', '1023'],
    [1024n, 'BinarySI', '1Ki'],
    [1025n, 'BinarySI', '1025'],
    [KI * KI, 'BinarySI', '1Mi'],
    [2n * GI, 'BinarySI', '2Gi'],
    [1536n * KI * KI, 'BinarySI', '1536Mi'],
    [1001n * GI, 'BinarySI', '1001Gi'],
    [KI ** 4n, 'BinarySI', '1Ti'],
    [8n * KI ** 6n - 1n, 'BinarySI', '9223372036854775807'],
    [1_000_000_000n, 'BinarySI', '1000000000'], // whole but not a multiple of 1024: plain integer
    [1000n, 'DecimalSI', '1k'],
    [1_234_000n, 'DecimalSI', '1234k'],
    [2n * GI, 'DecimalSI', '2147483648'],
    [-2n * GI, 'BinarySI', '-2Gi'],
  ];
  for (const [bytes, format, want] of table) {
    assert.equal(formatBytes(bytes, format), want, `${bytes} ${format}`);
    assert.equal(parseBytes(want), bytes, `round trip of ${want}`);
  }
});

test('formatBytes refuses values outside int64', () => {
  assert.throws(() => formatBytes(2n ** 63n, 'BinarySI'), RangeError);
  assert.throws(() => quantityFromBytes(-(2n ** 63n) - 1n), RangeError);
});

test('toMilli rounds up away from zero like MilliValue', () => {
  assert.equal(parseQuantity('1.0001m').toMilli(), 2n);
  assert.equal(parseQuantity('-1.0001m').toMilli(), -2n);
  assert.equal(parseQuantity('1').toMilli(), 1000n);
});
