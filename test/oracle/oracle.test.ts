// Differential tests against Go itself: generated inputs go to our parsers and to the Go oracle
// (test/oracle/main.go: apimachinery v0.36.3's ParseQuantity, time.ParseDuration, strconv and the
// flag package), and every answer must agree. The seed is fixed so a run is repeatable; choose
// another, or more inputs, with ORACLE_SEED=<n> and ORACLE_COUNT=<inputs per generator>.
//
// Known, deliberate differences (each stated where the code makes it): an int flag refuses values
// beyond ±2^53, which a JavaScript number cannot hold exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQuantity, QuantityError } from '../../src/model/quantity.js';
import { DurationError, formatGoDurationNanos, parseGoDurationNanos } from '../../src/flags/go-duration.js';
import { FlagError, FlagSet, formatGoFloat, parseGoBool, parseGoFloat, parseGoInt } from '../../src/flags/go-flags.js';
import { goQuote } from '../../src/base/go-quote.js';
import { askOracle, oracleBinary, type OracleAnswer, type OracleRequest } from './oracle.js';
import { boolInput, durationInput, floatInput, intInput, quantityInput, Random, textInput } from './generate.js';

const SEED = Number(process.env['ORACLE_SEED'] ?? 14);
const COUNT = Number(process.env['ORACLE_COUNT'] ?? 3000);
const INT64_MAX = (1n << 63n) - 1n;
const SHOWN_MISMATCHES = 12;

interface Case {
  request: OracleRequest;
  /** Returns a description of the difference, or undefined when we agree with Go. */
  check(go: OracleAnswer): string | undefined;
}

let binary: string | undefined;

/** Runs the cases through the oracle and fails with the first mismatches and how to repeat them. */
async function differential(name: string, cases: Case[]): Promise<void> {
  binary ??= oracleBinary();
  const answers = await askOracle(
    binary,
    cases.map((c) => c.request),
  );
  const mismatches: string[] = [];
  cases.forEach((c, i) => {
    let problem: string | undefined;
    try {
      problem = c.check(answers[i] as OracleAnswer);
    } catch (err) {
      problem = `ours threw ${String(err)}`;
    }
    if (problem !== undefined) {
      // JSON keeps control characters in the report readable.
      mismatches.push(JSON.stringify({ op: c.request.op, kind: c.request.kind, in: c.request.in, ours: problem, go: answers[i] }));
    }
  });
  assert.equal(
    mismatches.length,
    0,
    `${name}: ${mismatches.length} of ${cases.length} inputs differ from Go (ORACLE_SEED=${SEED} ORACLE_COUNT=${COUNT}); first ones:\n` +
      mismatches.slice(0, SHOWN_MISMATCHES).join('\n'),
  );
}

function inputs(generator: (rng: Random) => string, salt: number): string[] {
  const rng = new Random(SEED * 7919 + salt);
  return Array.from({ length: COUNT }, () => generator(rng));
}

function describeError(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

test('quantities: ParseQuantity, String(), Format and Value() as apimachinery v0.36.3', async () => {
  const cases = inputs(quantityInput, 1).map((input): Case => ({
    request: { op: 'quantity', in: input },
    check: (go) => {
      let q;
      try {
        q = parseQuantity(input);
      } catch (err) {
        if (!(err instanceof QuantityError)) return `ours threw ${describeError(err)}`;
        return go.err === err.goError ? undefined : `ours failed with ${JSON.stringify(err.goError)}`;
      }
      if (go.err !== undefined) return `ours accepted it as ${JSON.stringify(q.toString())}`;
      const ours = { out: q.toString(), format: q.format, value: q.goValue().toString() };
      if (ours.out !== go.out || ours.format !== go.format || ours.value !== go.value) return `ours ${JSON.stringify(ours)}`;
      // Where Go's Value() is a usable size, our exact toBytes() is the same number.
      let bytes: bigint | undefined;
      try {
        bytes = q.toBytes();
      } catch {
        bytes = undefined; // beyond any size: toBytes refuses it
      }
      if (bytes !== undefined && bytes >= 0n && bytes <= INT64_MAX && bytes.toString() !== go.value) return `toBytes() is ${bytes}`;
      return undefined;
    },
  }));
  await differential('quantities', cases);
});

test('durations: time.ParseDuration and Duration.String()', async () => {
  const cases = inputs(durationInput, 2).map((input): Case => ({
    request: { op: 'duration', in: input },
    check: (go) => {
      let nanos: bigint;
      try {
        nanos = parseGoDurationNanos(input);
      } catch (err) {
        if (!(err instanceof DurationError)) return `ours threw ${describeError(err)}`;
        return go.err === err.message ? undefined : `ours failed with ${JSON.stringify(err.message)}`;
      }
      if (go.err !== undefined) return `ours accepted it as ${nanos}ns`;
      if (nanos.toString() !== go.value) return `ours is ${nanos}ns`;
      const printed = formatGoDurationNanos(nanos);
      return printed === go.out ? undefined : `ours prints ${JSON.stringify(printed)}`;
    },
  }));
  await differential('durations', cases);
});

function float64Bits(value: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  return view.getBigUint64(0).toString(16);
}

test("floats: strconv.ParseFloat(s, 64) and FormatFloat(f, 'g', -1, 64)", async () => {
  const cases = inputs(floatInput, 3).map((input): Case => ({
    request: { op: 'float', in: input },
    check: (go) => {
      let value: number;
      try {
        value = parseGoFloat(input);
      } catch (err) {
        const kind = err instanceof Error ? err.message : '';
        const goKind = go.err === undefined ? 'none' : go.range ? 'value out of range' : 'parse error';
        return kind === goKind ? undefined : `ours failed with ${JSON.stringify(kind)}`;
      }
      if (go.err !== undefined) return `ours accepted it as ${value}`;
      const sameBits = Number.isNaN(value) ? go.out === 'NaN' : float64Bits(value) === go.value;
      if (!sameBits) return `ours is ${formatGoFloat(value)} (bits ${float64Bits(value)})`;
      const printed = formatGoFloat(value);
      return printed === go.out ? undefined : `ours prints ${JSON.stringify(printed)}`;
    },
  }));
  await differential('floats', cases);
});

test('ints: strconv.ParseInt(s, 0, 64)', async () => {
  const cases = inputs(intInput, 4).map((input): Case => ({
    request: { op: 'int', in: input },
    check: (go) => {
      const goValue = go.value === undefined ? undefined : BigInt(go.value);
      // Deliberate: beyond ±2^53 we refuse what Go accepts (see parseGoInt).
      const expectRange =
        go.range === true || (goValue !== undefined && (goValue > BigInt(Number.MAX_SAFE_INTEGER) || goValue < BigInt(Number.MIN_SAFE_INTEGER)));
      let value: number;
      try {
        value = parseGoInt(input);
      } catch (err) {
        const kind = err instanceof Error ? err.message : '';
        const want = expectRange ? 'value out of range' : go.err !== undefined ? 'parse error' : 'none';
        return kind === want ? undefined : `ours failed with ${JSON.stringify(kind)}`;
      }
      if (go.err !== undefined || expectRange) return `ours accepted it as ${value}`;
      return String(value) === go.value || (value === 0 && go.value === '0') ? undefined : `ours is ${value}`;
    },
  }));
  await differential('ints', cases);
});

test('bools: strconv.ParseBool', async () => {
  const cases = inputs(boolInput, 5).map((input): Case => ({
    request: { op: 'bool', in: input },
    check: (go) => {
      let value: boolean;
      try {
        value = parseGoBool(input);
      } catch {
        return go.err !== undefined ? undefined : 'ours failed';
      }
      return go.value === String(value) ? undefined : `ours is ${value}`;
    },
  }));
  await differential('bools', cases);
});

test('quoting: strconv.Quote of any text', async () => {
  const cases = inputs(textInput, 6).map((input): Case => ({
    request: { op: 'quote', in: input },
    check: (go) => (goQuote(input) === go.out ? undefined : `ours is ${goQuote(input)}`),
  }));
  await differential('quoting', cases);
});

/** -v=<input> on a FlagSet with one flag of the kind: the error message, or the value printed. */
function ourFlag(kind: string, input: string): { err?: string; out?: string } {
  const flags = new FlagSet('oracle');
  const flag =
    kind === 'float'
      ? flags.float64('v', 0, '')
      : kind === 'int'
        ? flags.int('v', 0, '')
        : kind === 'bool'
          ? flags.bool('v', false, '')
          : kind === 'duration'
            ? flags.durationMs('v', 0, '')
            : flags.string('v', '', '');
  try {
    flags.parse([`-v=${input}`]);
  } catch (err) {
    return { err: err instanceof FlagError ? err.message : describeError(err) };
  }
  return { out: flag.holder.toString() };
}

test('the flag package: error messages (with Go quoting) and printed values for -v=<input>', async () => {
  const generators: Array<[string, (rng: Random) => string]> = [
    ['float', floatInput],
    ['int', intInput],
    ['bool', boolInput],
    ['duration', durationInput],
    ['string', textInput],
  ];
  const cases: Case[] = [];
  generators.forEach(([kind, generator], i) => {
    for (const raw of inputs(generator, 10 + i).slice(0, Math.ceil(COUNT / 3))) {
      // Some inputs carry odd characters into the quoted message.
      const input = i % 2 === 0 ? raw : `${raw}${['', '\t', 'é', '\x01', '"'][raw.length % 5]}`;
      cases.push({
        request: { op: 'flag', kind, in: input },
        check: (go) => {
          const ours = ourFlag(kind, input);
          if (go.err !== undefined || ours.err !== undefined) {
            if (kind === 'int' && go.err === undefined && ours.err?.endsWith('value out of range')) return undefined; // deliberate, see parseGoInt
            return ours.err === go.err ? undefined : `ours ${JSON.stringify(ours)}`;
          }
          // A duration flag holds milliseconds, which cannot print every nanosecond of a huge value.
          if (kind === 'duration') return undefined;
          return ours.out === (go.out ?? '') ? undefined : `ours prints ${JSON.stringify(ours.out)}`;
        },
      });
    }
  });
  await differential('flags', cases);
});
