import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlagError, FlagSet, MapStringBoolValue, MapStringStringValue, formatGoFloat, parseGoBool, parseGoFloat, parseGoInt } from './go-flags.js';

function sample() {
  const fs = new FlagSet('csi-resizer');
  return {
    fs,
    address: fs.string('csi-address', '/run/csi/socket', 'Address of the CSI driver socket.'),
    kubeconfig: fs.string('kubeconfig', '', 'Absolute path to the kubeconfig file.'),
    workers: fs.int('workers', 10, 'Concurrency.'),
    leader: fs.bool('leader-election', false, 'Enable leader election.'),
    handleInUse: fs.bool('handle-volume-inuse-error', true, 'Handle in-use errors.'),
    qps: fs.float64('kube-api-qps', 5, 'QPS to use while communicating with the kubernetes apiserver.'),
    timeout: fs.durationMs('timeout', 10_000, 'Timeout for waiting for CSI driver socket.'),
    v: fs.int('v', 0, 'number for the log level verbosity'),
    gates: fs.var(new MapStringBoolValue(), 'feature-gates', 'A set of key=value pairs.'),
    labels: fs.var(new MapStringStringValue(':'), 'leader-election-labels', 'List of labels.'),
  };
}

type Sample = ReturnType<typeof sample>;

/** Command lines, what each sets and the arguments left after the flags. */
const PARSE_CASES: Array<{ args: string[]; check: (s: Sample) => void; rest?: string[] }> = [
  {
    args: [],
    check: (s) => {
      assert.equal(s.address.value, '/run/csi/socket');
      assert.equal(s.workers.value, 10);
      assert.equal(s.timeout.value, 10_000);
    },
  },
  { args: ['-csi-address=/x'], check: (s) => assert.equal(s.address.value, '/x') },
  { args: ['--csi-address=/x'], check: (s) => assert.equal(s.address.value, '/x') },
  { args: ['-csi-address', '/x'], check: (s) => assert.equal(s.address.value, '/x') },
  { args: ['--csi-address', '/x'], check: (s) => assert.equal(s.address.value, '/x') },
  { args: ['--csi-address='], check: (s) => assert.equal(s.address.value, '') },
  { args: ['--csi-address', '-weird'], check: (s) => assert.equal(s.address.value, '-weird') },
  { args: ['-csi-address=a=b'], check: (s) => assert.equal(s.address.value, 'a=b') },
  { args: ['-v=5'], check: (s) => assert.equal(s.v.value, 5) },
  { args: ['-v', '5'], check: (s) => assert.equal(s.v.value, 5) },
  { args: ['--workers=0x10'], check: (s) => assert.equal(s.workers.value, 16) },
  { args: ['--workers=-3'], check: (s) => assert.equal(s.workers.value, -3) },
  { args: ['--workers=1', '--workers=2'], check: (s) => assert.equal(s.workers.value, 2) },
  { args: ['--leader-election'], check: (s) => assert.equal(s.leader.value, true) },
  { args: ['-leader-election=true'], check: (s) => assert.equal(s.leader.value, true) },
  { args: ['--handle-volume-inuse-error=false'], check: (s) => assert.equal(s.handleInUse.value, false) },
  { args: ['--handle-volume-inuse-error=0'], check: (s) => assert.equal(s.handleInUse.value, false) },
  { args: ['--leader-election', 'false'], check: (s) => assert.equal(s.leader.value, true), rest: ['false'] },
  { args: ['--kube-api-qps=2.5'], check: (s) => assert.equal(s.qps.value, 2.5) },
  { args: ['--kube-api-qps', '1e2'], check: (s) => assert.equal(s.qps.value, 100) },
  { args: ['--timeout=1m30s'], check: (s) => assert.equal(s.timeout.value, 90_000) },
  { args: ['--timeout', '500ms'], check: (s) => assert.equal(s.timeout.value, 500) },
  { args: ['--timeout=0'], check: (s) => assert.equal(s.timeout.value, 0) },
  {
    args: ['--feature-gates=A=true,B=false'],
    check: (s) =>
      assert.deepEqual(
        [...s.gates.value.entries],
        [
          ['A', true],
          ['B', false],
        ],
      ),
  },
  {
    args: ['--feature-gates', ' A = true , B=0 ,'],
    check: (s) =>
      assert.deepEqual(
        [...s.gates.value.entries],
        [
          ['A', true],
          ['B', false],
        ],
      ),
  },
  { args: ['--feature-gates=A=true', '--feature-gates=B=true'], check: (s) => assert.equal(s.gates.value.toString(), 'A=true,B=true') },
  {
    args: ['--leader-election-labels=k1:v1,k2:v2'],
    check: (s) =>
      assert.deepEqual(
        [...s.labels.value.entries],
        [
          ['k1', 'v1'],
          ['k2', 'v2'],
        ],
      ),
  },
  {
    args: ['--leader-election-labels=k1: v1', '--leader-election-labels=k2:v2'],
    check: (s) =>
      assert.deepEqual(
        [...s.labels.value.entries],
        [
          ['k1', ' v1'],
          ['k2', 'v2'],
        ],
      ),
  },
  // parsing stops at "--", at "-" and at the first non-flag; flags after it are arguments
  {
    args: ['--workers=3', '--', '--v=2'],
    check: (s) => {
      assert.equal(s.workers.value, 3);
      assert.equal(s.v.value, 0);
    },
    rest: ['--v=2'],
  },
  { args: ['run', '--v=2'], check: (s) => assert.equal(s.v.value, 0), rest: ['run', '--v=2'] },
  { args: ['-', '--v=2'], check: () => {}, rest: ['-', '--v=2'] },
  { args: ['--v=1', 'x', 'y'], check: (s) => assert.equal(s.v.value, 1), rest: ['x', 'y'] },
];

test('parse: accepted forms, values and remaining arguments', () => {
  for (const { args, check, rest = [] } of PARSE_CASES) {
    const s = sample();
    const result = s.fs.parse(args);
    check(s);
    assert.deepEqual(result.rest, rest, args.join(' '));
  }
});

test("parse: errors carry Go's messages and a kind", () => {
  const table: Array<[string[], string, string]> = [
    [['-x'], 'undefined', 'flag provided but not defined: -x'],
    [['--no-such-flag=1'], 'undefined', 'flag provided but not defined: -no-such-flag'],
    [['-h'], 'help', 'flag: help requested'],
    [['--help'], 'help', 'flag: help requested'],
    [['-help=1'], 'help', 'flag: help requested'],
    [['---workers=1'], 'syntax', 'bad flag syntax: ---workers=1'],
    [['-=1'], 'syntax', 'bad flag syntax: -=1'],
    [['--workers'], 'missingValue', 'flag needs an argument: -workers'],
    [['--workers=abc'], 'invalidValue', 'invalid value "abc" for flag -workers: parse error'],
    [['--workers', '1.5'], 'invalidValue', 'invalid value "1.5" for flag -workers: parse error'],
    [['--workers=9223372036854775808'], 'invalidValue', 'invalid value "9223372036854775808" for flag -workers: value out of range'],
    [['--timeout=10'], 'invalidValue', 'invalid value "10" for flag -timeout: parse error'],
    [['--timeout=abc'], 'invalidValue', 'invalid value "abc" for flag -timeout: parse error'],
    [['--kube-api-qps=fast'], 'invalidValue', 'invalid value "fast" for flag -kube-api-qps: parse error'],
    [['--leader-election=yes'], 'invalidValue', 'invalid boolean value "yes" for -leader-election: parse error'],
    [['--feature-gates=A'], 'invalidValue', 'invalid value "A" for flag -feature-gates: malformed pair, expect string=bool'],
    [
      ['--feature-gates=A=maybe'],
      'invalidValue',
      'invalid value "A=maybe" for flag -feature-gates: invalid value of A: maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax',
    ],
    [['--leader-election-labels=k1'], 'invalidValue', 'invalid value "k1" for flag -leader-election-labels: malformed item in list of labels: k1'],
    [['--leader-election-labels=a:b:c'], 'invalidValue', 'invalid value "a:b:c" for flag -leader-election-labels: malformed item in list of labels: a:b:c'],
    // csi-lib-utils' stringMap: an empty item (a trailing comma) is malformed too.
    [['--leader-election-labels=k:v,'], 'invalidValue', 'invalid value "k:v," for flag -leader-election-labels: malformed item in list of labels: '],
    // component-base's MapStringBool skips only empty items, not blank ones.
    [['--feature-gates=A=true, ,B=true'], 'invalidValue', 'invalid value "A=true, ,B=true" for flag -feature-gates: malformed pair, expect string=bool'],
  ];
  for (const [args, kind, message] of table) {
    const { fs } = sample();
    assert.throws(
      () => fs.parse(args),
      (err: unknown) => {
        assert.ok(err instanceof FlagError, String(err));
        assert.equal(err.kind, kind, args.join(' '));
        assert.equal(err.message, message);
        return true;
      },
    );
  }
});

test('setFlagNames lists what the command line set', () => {
  const s = sample();
  s.fs.parse(['--v=2', '--leader-election', '--timeout=1s']);
  assert.deepEqual(s.fs.setFlagNames(), ['leader-election', 'timeout', 'v']);
  assert.equal(s.timeout.isSet, true);
  assert.equal(s.workers.isSet, false);
});

test("usage text has the layout of Go's PrintDefaults", () => {
  const fs = new FlagSet('csi-resizer');
  fs.string('csi-address', '/run/csi/socket', 'Address of the CSI driver socket.');
  fs.string('kubeconfig', '', 'Absolute `path` to the kubeconfig file.');
  fs.bool('leader-election', false, 'Enable leader election.');
  fs.bool('handle-volume-inuse-error', true, 'Handle in-use errors.');
  fs.int('workers', 10, 'Concurrency.');
  fs.int('v', 0, 'verbosity');
  fs.bool('x', false, 'short bool');
  fs.float64('kube-api-qps', 5, 'QPS.');
  fs.durationMs('timeout', 10_000, 'Timeout.\nSecond line.');
  fs.durationMs('zero', 0, 'Zero.');
  fs.var(new MapStringBoolValue(), 'feature-gates', 'Gates.');
  assert.equal(
    fs.usage(),
    [
      'Usage of csi-resizer:',
      '  -csi-address string',
      '    \tAddress of the CSI driver socket. (default "/run/csi/socket")',
      '  -feature-gates value',
      '    \tGates.',
      '  -handle-volume-inuse-error',
      '    \tHandle in-use errors. (default true)',
      '  -kube-api-qps float',
      '    \tQPS. (default 5)',
      '  -kubeconfig path',
      '    \tAbsolute path to the kubeconfig file.',
      '  -leader-election',
      '    \tEnable leader election.',
      '  -timeout duration',
      '    \tTimeout.',
      '    \tSecond line. (default 10s)',
      '  -v int',
      '    \tverbosity',
      '  -workers int',
      '    \tConcurrency. (default 10)',
      '  -x\tshort bool',
      '  -zero duration',
      '    \tZero.',
      '',
    ].join('\n'),
  );
});

test('defining a flag twice is a programming error', () => {
  const fs = new FlagSet('t');
  fs.int('a', 1, '');
  assert.throws(() => fs.bool('a', false, ''), /flag redefined: a/);
});

test('strconv-compatible scalar parsers', () => {
  const ints: Array<[string, number | 'error']> = [
    ['0', 0],
    ['10', 10],
    ['-10', -10],
    ['+7', 7],
    ['0x1F', 31],
    ['0X1f', 31],
    ['0o17', 15],
    ['017', 15],
    ['0b101', 5],
    ['1_000', 1000],
    ['0x_1F', 31],
    ['08', 'error'],
    ['1__0', 'error'],
    ['_1', 'error'],
    ['1_', 'error'],
    ['', 'error'],
    ['1.0', 'error'],
    ['1e3', 'error'],
    [' 1', 'error'],
    ['9007199254740993', 'error'],
  ];
  for (const [raw, want] of ints) {
    if (want === 'error') assert.throws(() => parseGoInt(raw), Error, raw);
    else assert.equal(parseGoInt(raw), want, raw);
  }
  const floats: Array<[string, number | 'error']> = [
    ['5', 5],
    ['2.5', 2.5],
    ['.5', 0.5],
    ['5.', 5],
    ['1e3', 1000],
    ['-1.5E-2', -0.015],
    ['inf', Infinity],
    ['-Inf', -Infinity],
    ['abc', 'error'],
    ['', 'error'],
    ['1e', 'error'],
    ['1e400', 'error'],
  ];
  for (const [raw, want] of floats) {
    if (want === 'error') assert.throws(() => parseGoFloat(raw), Error, raw);
    else assert.equal(parseGoFloat(raw), want, raw);
  }
  assert.ok(Number.isNaN(parseGoFloat('NaN')));
  for (const raw of ['1', 't', 'T', 'TRUE', 'true', 'True']) assert.equal(parseGoBool(raw), true);
  for (const raw of ['0', 'f', 'F', 'FALSE', 'false', 'False']) assert.equal(parseGoBool(raw), false);
  for (const raw of ['yes', 'on', 'tRUE', '']) assert.throws(() => parseGoBool(raw));
  assert.equal(formatGoFloat(5), '5');
  assert.equal(formatGoFloat(0.5), '0.5');
  assert.equal(formatGoFloat(1e21), '1e+21');
  assert.equal(formatGoFloat(1e-7), '1e-07');
});

test('Go syntax edge cases: floats, ints and %v as strconv has them (each checked against Go by test/oracle)', () => {
  const floats: Array<[string, number | 'parse error' | 'value out of range']> = [
    ['0x1p-2', 0.25],
    ['0X1.8P1', 3],
    ['0x_1p0', 1],
    ['-0x.8p1', -1],
    ['0x1p-1074', 5e-324],
    ['0x1p-1075', 0],
    ['0x1p1024', 'value out of range'],
    ['1e1_0', 1e10],
    ['1_000.5', 1000.5],
    ['0_1', 1],
    ['1e+1_0', 1e10],
    ['1__0', 'parse error'],
    ['_1', 'parse error'],
    ['1_', 'parse error'],
    ['1_.5', 'parse error'],
    ['1._5', 'parse error'],
    ['1e_1', 'parse error'],
    ['0x1', 'parse error'],
    ['0x', 'parse error'],
    ['0x.p1', 'parse error'],
    ['1p5', 'parse error'],
    ['+nan', 'parse error'],
    ['-nan', 'parse error'],
    ['nanx', 'parse error'],
    ['infin', 'parse error'],
    ['+Infinity', Infinity],
    ['1e400', 'value out of range'],
    ['-1e400', 'value out of range'],
    ['1e-400', 0],
  ];
  for (const [raw, want] of floats) {
    if (typeof want === 'string') assert.throws(() => parseGoFloat(raw), { message: want }, raw);
    else assert.equal(parseGoFloat(raw), want, raw);
  }
  for (const raw of ['nan', 'NaN', 'NAN']) assert.ok(Number.isNaN(parseGoFloat(raw)), raw);

  const ints: Array<[string, number | 'parse error' | 'value out of range']> = [
    ['0_1', 1],
    ['0b1_0', 2],
    ['0o_7', 7],
    ['-9007199254740991', -9007199254740991],
    // an overflow is found while reading digits, before a later bad character
    ['99999999999999999999x', 'value out of range'],
    ['9223372036854775808', 'value out of range'],
    ['-9223372036854775809', 'value out of range'],
    ['0x', 'parse error'],
    ['0b2', 'parse error'],
    ['+-1', 'parse error'],
  ];
  for (const [raw, want] of ints) {
    if (typeof want === 'string') assert.throws(() => parseGoInt(raw), { message: want }, raw);
    else assert.equal(parseGoInt(raw), want, raw);
  }

  const printed: Array<[number, string]> = [
    [1e6, '1e+06'],
    [123456, '123456'],
    [1234567, '1.234567e+06'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [-0, '-0'],
    [1e21, '1e+21'],
    [1.5e300, '1.5e+300'],
    [5e-324, '5e-324'],
    [100, '100'],
    [-2.5, '-2.5'],
    [0.1 + 0.2, '0.30000000000000004'],
  ];
  for (const [value, want] of printed) assert.equal(formatGoFloat(value), want, String(value));
});

test("flag errors quote the value as Go's %q does: control and non-ASCII characters", () => {
  const table: Array<[string, string]> = [
    ['a\tb', 'invalid value "a\\tb" for flag -n: parse error'],
    ['\x01', 'invalid value "\\x01" for flag -n: parse error'],
    ['\x7f', 'invalid value "\\x7f" for flag -n: parse error'],
    ['é', 'invalid value "é" for flag -n: parse error'],
    ['\u00a0', 'invalid value "\\u00a0" for flag -n: parse error'],
    ['\u200b', 'invalid value "\\u200b" for flag -n: parse error'],
    ['\u{e0001}', 'invalid value "\\U000e0001" for flag -n: parse error'],
    ['日本', 'invalid value "日本" for flag -n: parse error'],
    ['"q"\\', 'invalid value "\\"q\\"\\\\" for flag -n: parse error'],
  ];
  for (const [raw, message] of table) {
    const fs = new FlagSet('t');
    fs.int('n', 0, '');
    assert.throws(() => fs.parse([`-n=${raw}`]), { message }, JSON.stringify(raw));
  }
});
