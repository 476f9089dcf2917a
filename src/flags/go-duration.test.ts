import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DurationError, formatGoDuration, parseGoDuration, parseGoDurationNanos } from './go-duration.js';

test('parseGoDuration accepts what time.ParseDuration accepts', () => {
  const table: Array<[string, number]> = [
    ['0', 0],
    ['+0', 0],
    ['-0', 0],
    ['0s', 0],
    ['5s', 5000],
    ['30s', 30_000],
    ['1478s', 1_478_000],
    ['-5s', -5000],
    ['+5s', 5000],
    ['-0.5s', -500],
    ['5.0s', 5000],
    ['5.6s', 5600],
    ['5.s', 5000],
    ['.5s', 500],
    ['1.0s', 1000],
    ['1.00s', 1000],
    ['1.004s', 1004],
    ['100.00100s', 100_001],
    ['10ns', 0.00001],
    ['11us', 0.011],
    ['12µs', 0.012],
    ['12μs', 0.012],
    ['13ms', 13],
    ['500ms', 500],
    ['14s', 14_000],
    ['15m', 900_000],
    ['16h', 57_600_000],
    ['1.5h', 5_400_000],
    ['3h30m', 12_600_000],
    ['1m30s', 90_000],
    ['10.5s4m', 250_500],
    ['-2m3.4s', -123_400],
    ['1h2m3s4ms5us6ns', 3_723_004.005006],
    ['39h9m14.425s', 140_954_425],
    ['1500us', 1.5],
    ['9223372036854775807ns', 9_223_372_036_854.775807],
  ];
  for (const [input, ms] of table) {
    assert.equal(parseGoDuration(input), ms, input);
  }
  assert.equal(parseGoDurationNanos('-9223372036854775808ns'), -(2n ** 63n));
});

test("parseGoDuration rejects what Go rejects, with Go's messages", () => {
  const table: Array<[string, string]> = [
    ['', 'time: invalid duration ""'],
    ['3', 'time: missing unit in duration "3"'],
    ['1', 'time: missing unit in duration "1"'],
    ['-', 'time: invalid duration "-"'],
    ['s', 'time: invalid duration "s"'],
    ['.', 'time: invalid duration "."'],
    ['-.', 'time: invalid duration "-."'],
    ['.s', 'time: invalid duration ".s"'],
    ['+.s', 'time: invalid duration "+.s"'],
    ['1x', 'time: unknown unit "x" in duration "1x"'],
    ['1d', 'time: unknown unit "d" in duration "1d"'],
    ['1s ', 'time: unknown unit "s " in duration "1s "'],
    ['10', 'time: missing unit in duration "10"'],
    ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
    ['3000000h', 'time: invalid duration "3000000h"'],
    ['9223372036854775.808us', 'time: invalid duration "9223372036854775.808us"'],
    // the integer overflows before the unit is looked at
    ['99999999999999999999d', 'time: invalid duration "99999999999999999999d"'],
    // the time package quotes control and non-ASCII characters byte by byte
    ['1µx', 'time: unknown unit "\\xc2\\xb5x" in duration "1\\xc2\\xb5x"'],
    ['1s\t', 'time: unknown unit "s\\x09" in duration "1s\\x09"'],
    ['1"', 'time: unknown unit "\\"" in duration "1\\""'],
  ];
  for (const [input, message] of table) {
    assert.throws(
      () => parseGoDuration(input),
      (err: unknown) => err instanceof DurationError && err.message === message,
      input,
    );
  }
});

test('a fraction is added through float64, as Go adds it', () => {
  // Exact decimal arithmetic truncates 1199999999999.9999998ns to 1199999999999ns; Go's float64 step rounds up.
  assert.equal(parseGoDurationNanos('0.3333333333333333333h'), 1_200_000_000_000n);
});

test('formatGoDuration matches Duration.String', () => {
  const table: Array<[number, string]> = [
    [0, '0s'],
    [0.000001, '1ns'],
    [0.0011, '1.1µs'],
    [2.2, '2.2ms'],
    [500, '500ms'],
    [3300, '3.3s'],
    [10_000, '10s'],
    [90_000, '1m30s'],
    [300_000, '5m0s'],
    [3_600_000, '1h0m0s'],
    [4_000_000, '1h6m40s'],
    [5_400_000, '1h30m0s'],
    [-500, '-500ms'],
    [-90_000, '-1m30s'],
    [0.0005, '500ns'],
    [1, '1ms'],
    [1000, '1s'],
    [1_001, '1.001s'],
    [36_000_000_000, '10000h0m0s'],
  ];
  for (const [ms, want] of table) assert.equal(formatGoDuration(ms), want, String(ms));
});
