// The logger writes what klog (text) and component-base's zap logger (JSON) write, and never throws.
process.env['TZ'] = 'UTC';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createLogOutput } from './output.js';
import { createLogger, kKey, kObj, kRef, wallClockMs, type LogFields, type Logger, type LoggerOptions } from './logger.js';
import { goQuote } from '../../base/go-quote.js';
import { globMatch, parseVModule } from './vmodule.js';

const SOURCE = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
/** The line of this file that carries the marker comment, so assertions name the call's own line. */
function lineOf(marker: string): number {
  const index = SOURCE.findIndex((l) => l.includes(`// ${marker}`) && !l.includes('lineOf('));
  assert.ok(index >= 0, `marker ${marker} in the test source`);
  return index + 1;
}

// 2026-12-01T06:53:18.898123Z
const NOW_MS = Date.UTC(2026, 11, 1, 6, 53, 18, 898) + 0.123;

function capture(options: Partial<LoggerOptions> = {}): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = createLogger({ verbosity: 0, format: 'text', nowMs: () => NOW_MS, pid: 18389, write: (l) => lines.push(l), ...options });
  return { log, lines };
}

test('text: klog header with microseconds, the pid right-aligned in 7 columns, and this file:line', () => {
  const { log, lines } = capture();
  log.info('Version', { version: 'v2.2.1' }); // @text-info
  assert.deepEqual(lines, [`I1201 06:53:18.898123   18389 logger.test.ts:${lineOf('@text-info')}] "Version" version="v2.2.1"`]);

  for (const [pid, column] of [
    [1, '      1'],
    [1234567, '1234567'],
    [12345678, '12345678'],
  ] as const) {
    const one = capture({ pid });
    one.log.info('m');
    assert.match(one.lines[0]!, new RegExp(`^I1201 06:53:18\\.898123 ${column} logger\\.test\\.ts:\\d+\\] "m"$`));
  }
});

test('text: error lines put err first, leave it out when absent; W and E severities', () => {
  const { log, lines } = capture();
  log.error('Failed to start HTTP server', { address: ':8080', err: new Error('listen tcp :8080: bind: address already in use'), metricsPath: '/metrics' }); // @text-error
  log.error('Only one of `--metrics-address` and `--http-endpoint` can be set.');
  log.warn('careful', { n: 1 });
  assert.equal(
    lines[0],
    `E1201 06:53:18.898123   18389 logger.test.ts:${lineOf('@text-error')}] "Failed to start HTTP server" err="listen tcp :8080: bind: address already in use" address=":8080" metricsPath="/metrics"`,
  );
  assert.match(lines[1]!, /^E1201 [^\]]+\] "Only one of `--metrics-address` and `--http-endpoint` can be set\."$/);
  assert.match(lines[2]!, /^W1201 [^\]]+\] "careful" n=1$/);
});

test('text: the ...f methods print klog.Infof-style lines, unquoted and without fields', () => {
  const { log, lines } = capture({ verbosity: 4 });
  log.infof('Received SIGTERM or SIGINT signal, shutting down controller.');
  log.warnf('external-resizer may be running with older version of kubernetes api-server, please upgrade to k8s version 1.32');
  log.v(4).infof('skipping updating status for pvc ns/p\n');
  log.errorf('Failed to list pvcs when init uncertain pvcs: boom');
  assert.match(lines[0]!, /^I1201 .*\] Received SIGTERM or SIGINT signal, shutting down controller\.$/);
  assert.match(lines[1]!, /^W1201 .*\] external-resizer may be running/);
  assert.match(lines[2]!, /^I1201 .*\] skipping updating status for pvc ns\/p$/);
  assert.match(lines[3]!, /^E1201 .*\] Failed to list pvcs when init uncertain pvcs: boom$/);
});

test('text values are quoted as klog quotes them', () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic['self'] = cyclic;
  const table: Array<{ name: string; value: unknown; text: string }> = [
    { name: 'string', value: 'a "b" \\ c', text: 'k="a \\"b\\" \\\\ c"' },
    {
      name: 'control and non-ASCII characters (strconv.Quote)',
      value: 'tab\there\u0000\u007f é\u00a0€\u{1F600}\u200b',
      text: 'k="tab\\there\\x00\\x7f é\\u00a0€😀\\u200b"',
    },
    { name: 'multi-line string', value: 'line 1\nline 2', text: 'k=<\n\tline 1\n\tline 2\n >' },
    { name: 'multi-line string ending in a newline', value: 'line 1\n', text: 'k=<\n\tline 1\n >' },
    { name: 'error: its message', value: new Error('boom'), text: 'k="boom"' },
    {
      name: 'error with a cause: Go %w text',
      value: new Error('patch failed', { cause: new Error('connection refused') }),
      text: 'k="patch failed: connection refused"',
    },
    { name: 'error whose message already holds the cause', value: new Error('a: b', { cause: new Error('b') }), text: 'k="a: b"' },
    { name: 'multi-line error', value: new Error('x\ny'), text: 'k=<\n\tx\n\ty\n >' },
    { name: 'int', value: 42, text: 'k=42' },
    { name: 'float', value: 1.5, text: 'k=1.5' },
    { name: 'large float', value: 1e21, text: 'k=1e+21' },
    { name: 'small float', value: 1e-7, text: 'k=1e-7' },
    { name: 'negative zero', value: -0, text: 'k=-0' },
    { name: 'NaN: encoding/json refuses it', value: NaN, text: 'k="<internal error: json: unsupported value: NaN>"' },
    { name: 'bigint', value: 9223372036854775807n, text: 'k=9223372036854775807' },
    { name: 'bool', value: true, text: 'k=true' },
    { name: 'null', value: null, text: 'k=null' },
    { name: 'undefined', value: undefined, text: 'k=null' },
    { name: 'KRef', value: kRef('default', 'pvc-1'), text: 'k="default/pvc-1"' },
    { name: 'KRef without namespace', value: kRef('', 'pv-1'), text: 'k="pv-1"' },
    { name: 'KObj', value: kObj({ metadata: { namespace: 'ns', name: 'n' } }), text: 'k="ns/n"' },
    { name: 'key', value: kKey('ns/n'), text: 'k="ns/n"' },
    {
      name: 'struct-like object: field order, HTML escaped, undefined left out',
      value: { b: '<x>&', a: 1, u: undefined },
      text: 'k={"b":"\\u003cx\\u003e\\u0026","a":1}',
    },
    {
      name: 'map: keys sorted',
      value: new Map([
        ['b', 1],
        ['a', 2],
      ]),
      text: 'k={"a":2,"b":1}',
    },
    { name: 'array and set', value: [1, 'x', new Set([true])], text: 'k=[1,"x",[true]]' },
    { name: 'nested error and bigint', value: { err: new Error('e'), n: 5n }, text: 'k={"err":"e","n":5}' },
    { name: 'bytes: %+q', value: new Uint8Array([104, 105, 0, 0xc3, 0xa9]), text: 'k="hi\\x00\\u00e9"' },
    { name: 'symbol', value: Symbol('s'), text: 'k="Symbol(s)"' },
    { name: 'function', value: () => 1, text: 'k="<internal error: json: unsupported type: func()>"' },
    { name: 'cycle', value: cyclic, text: 'k="<internal error: json: unsupported value: encountered a cycle via Object>"' },
    { name: 'null prototype', value: Object.assign(Object.create(null) as object, { a: 'b' }), text: 'k={"a":"b"}' },
  ];
  for (const row of table) {
    const { log, lines } = capture();
    log.info('m', { k: row.value });
    assert.equal(lines[0]!.replace(/^[^\]]*\] "m" /, ''), row.text, row.name);
  }
});

test('json: component-base key order, ts in epoch milliseconds, v on info lines only, err last', () => {
  const { log, lines } = capture({ format: 'json', verbosity: 5 });
  log.info('Version', { version: 'v2.2.1' }); // @json-info
  log.v(4).info('Started PVC processing for resize controller', { key: 'ns/p' });
  log.error('Failed to start HTTP server', { err: new Error('bind'), address: ':8080', metricsPath: '/metrics' }); // @json-error
  log.error('Only one of `--metrics-address` and `--http-endpoint` can be set.');
  log.child({ controller: 'resizer' }).info('Starting external resizer', { extra: 1 });
  log.contextual().v(2).info('became leader, starting');
  log.v(4).info('Resize PVC finished', { PVC: kRef('ns', 'p') });
  log.v(4).infof('Update volumeAttributesClass of PV "pv" to gold succeeded');
  log.warnf('warning text');
  const caller = (marker: string) => `log/logger.test.ts:${lineOf(marker)}`;
  assert.equal(lines[0], `{"ts":1796107998898.123,"caller":"${caller('@json-info')}","msg":"Version","v":0,"version":"v2.2.1"}`);
  // klog.V(4).InfoS reaches the zap backend at level 0, so upstream's JSON says "v":0 for it.
  assert.match(lines[1]!, /^\{"ts":[0-9.]+,"caller":"[^"]+","msg":"Started PVC processing for resize controller","v":0,"key":"ns\/p"\}$/);
  assert.equal(
    lines[2],
    `{"ts":1796107998898.123,"caller":"${caller('@json-error')}","msg":"Failed to start HTTP server","address":":8080","metricsPath":"/metrics","err":"bind"}`,
  );
  assert.match(lines[3]!, /"msg":"Only one of `--metrics-address` and `--http-endpoint` can be set\."\}$/);
  assert.match(lines[4]!, /"msg":"Starting external resizer","controller":"resizer","v":0,"extra":1\}$/);
  assert.match(lines[5]!, /"msg":"became leader, starting","v":2\}$/);
  assert.match(lines[6]!, /"PVC":\{"name":"p","namespace":"ns"\}\}$/);
  assert.match(lines[7]!, /"msg":"Update volumeAttributesClass of PV \\"pv\\" to gold succeeded","v":0\}$/);
  assert.match(lines[8]!, /"msg":"warning text","v":0\}$/);
  for (const line of lines) JSON.parse(line);
});

test('json values are written as zap writes them', () => {
  const cyclic: Record<string, unknown> = {};
  cyclic['self'] = cyclic;
  const table: Array<{ name: string; value: unknown; json: string }> = [
    { name: 'string: zap escapes no HTML', value: '<a>&"\n\u0001', json: '"k":"<a>&\\"\\n\\u0001"' },
    { name: 'float without exponent (strconv f, -1)', value: 1e21, json: '"k":1000000000000000000000' },
    { name: 'NaN as a string', value: NaN, json: '"k":"NaN"' },
    { name: 'infinity as a string', value: -Infinity, json: '"k":"-Inf"' },
    { name: 'bigint', value: 12n, json: '"k":12' },
    { name: 'KRef: MarshalLog', value: kRef('', 'pv'), json: '"k":{"name":"pv"}' },
    { name: 'error', value: new Error('e', { cause: 'c' }), json: '"k":"e: c"' },
    { name: 'object (reflected, no HTML escaping)', value: { a: '<' }, json: '"k":{"a":"<"}' },
    { name: 'cycle: zap reports the key with Error', value: cyclic, json: '"kError":"json: unsupported value: encountered a cycle via Object"' },
  ];
  for (const row of table) {
    const { log, lines } = capture({ format: 'json' });
    log.info('m', { k: row.value });
    assert.ok(lines[0]!.endsWith(`"v":0,${row.json}}`), `${row.name}: ${lines[0]}`);
    JSON.parse(lines[0]!);
  }
});

test('never throws: values no encoder can take, hostile field objects, a failing stream', () => {
  const circular: Record<string, unknown> = { name: 'x' };
  circular['me'] = { back: circular };
  const throwingGetter = Object.defineProperty({}, 'boom', {
    enumerable: true,
    get: () => {
      throw new Error('getter failed');
    },
  });
  const throwingToJson = {
    toJSON: () => {
      throw new Error('toJSON failed');
    },
  };
  const hostileProxy = new Proxy(
    {},
    {
      ownKeys: () => {
        throw new Error('no keys');
      },
    },
  );
  let deep: unknown[] = [];
  const root = deep;
  for (let i = 0; i < 100_000; i++) {
    const next: unknown[] = [];
    deep.push(next);
    deep = next;
  }
  const throwingError = new Error('m');
  Object.defineProperty(throwingError, 'message', {
    get: () => {
      throw new Error('message getter');
    },
  });
  const cases: Array<{ name: string; fields: LogFields; expect: RegExp }> = [
    { name: 'circular value', fields: { v: circular }, expect: /v="<internal error: json: unsupported value: encountered a cycle via Object>"/ },
    { name: 'null-prototype value', fields: { v: Object.create(null) as object }, expect: /v=\{\}/ },
    { name: 'BigInt, alone and nested', fields: { v: 10n ** 30n, w: [1n] }, expect: /v=1000000000000000000000000000000 w=\[1\]/ },
    { name: 'getter that throws', fields: { v: throwingGetter }, expect: /v="<internal error: panic: getter failed>"/ },
    { name: 'toJSON that throws', fields: { v: throwingToJson }, expect: /v="<internal error: panic: toJSON failed>"/ },
    { name: 'Symbol value', fields: { v: Symbol.iterator }, expect: /v="Symbol\(Symbol\.iterator\)"/ },
    { name: 'proxy that refuses its keys', fields: { v: hostileProxy }, expect: /v="<internal error: panic: no keys>"/ },
    { name: 'nesting beyond any stack', fields: { v: root }, expect: /v="<internal error: json: unsupported value: nesting/ },
    { name: 'error whose message getter throws', fields: { err: throwingError }, expect: /err="<panic: message getter>"/ },
    { name: 'fields object with a throwing getter', fields: throwingGetter as LogFields, expect: /boom="<panic: getter failed>"/ },
    { name: 'fields object that is a hostile proxy', fields: hostileProxy as LogFields, expect: /\] "m"$/ },
  ];
  for (const format of ['text', 'json'] as const) {
    for (const row of cases) {
      const { log, lines } = capture({ format });
      assert.doesNotThrow(() => log.error('m', row.fields), `${format}: ${row.name}`);
      assert.doesNotThrow(() => log.info('m', row.fields), `${format}: ${row.name}`);
      assert.equal(lines.length, 2, `${format}: ${row.name} still writes its lines`);
      if (format === 'text') assert.match(lines[1]!.replace(/^I/, 'E'), row.expect, row.name);
      else for (const line of lines) JSON.parse(line);
    }
  }
  const failing = createLogger({
    verbosity: 0,
    format: 'text',
    write: () => {
      throw new Error('EPIPE');
    },
  });
  assert.doesNotThrow(() => failing.info('m'));
  assert.doesNotThrow(() => failing.error('m', undefined));
  // a non-string message from untyped code
  const { log, lines } = capture();
  assert.doesNotThrow(() => log.info(Object.create(null) as string));
  assert.equal(lines.length, 1);
});

test('secret-named fields are redacted', () => {
  const { log, lines } = capture();
  log.info('m', { token: 'abc', clientSecret: 'x', ok: 'y' });
  assert.match(lines[0]!, /token="<redacted>" clientSecret="<redacted>" ok="y"$/);
});

test('a key given again prints once, the later value at its later place', () => {
  const { log, lines } = capture();
  log.child({ a: 1, b: 2 }).info('m', { a: 3 });
  assert.match(lines[0]!, /"m" b=2 a=3$/);
});

test('-v gates v(n) lines; --vmodule raises the level for matching files only', () => {
  const plain = capture({ verbosity: 2 });
  plain.log.v(2).info('shown');
  plain.log.v(3).info('hidden');
  assert.equal(plain.log.enabled(3), false);
  assert.deepEqual(
    plain.lines.map((l) => l.replace(/^.*\] /, '')),
    ['"shown"'],
  );

  const table: Array<{ vmodule: string; shown: boolean }> = [
    { vmodule: 'logger.test=4', shown: true },
    { vmodule: 'logger*=4', shown: true },
    { vmodule: 'logger.tes?=5', shown: true },
    { vmodule: 'logger.[st]est=4', shown: true },
    { vmodule: 'logger.[^t]est=4', shown: false },
    { vmodule: 'logger.test=3', shown: false },
    { vmodule: 'logger=4', shown: false },
    { vmodule: 'logger.test.ts=4', shown: false },
    { vmodule: 'other=9,logger.test=4', shown: true },
    { vmodule: 'logger*=1,logger.test=4', shown: false },
    { vmodule: 'logger.test=0', shown: false },
    { vmodule: '[=4', shown: false },
  ];
  for (const row of table) {
    const { log, lines } = capture({ vmodule: row.vmodule });
    log.v(4).info('vmodule');
    assert.equal(lines.length === 1, row.shown, row.vmodule);
    assert.equal(log.enabled(4), row.shown, `enabled(): ${row.vmodule}`);
  }
  const json = capture({ format: 'json', vmodule: 'logger.test=4' });
  json.log.v(4).info('json ignores vmodule');
  assert.equal(json.lines.length, 0);
});

test('--vmodule parsing follows component-base', () => {
  assert.deepEqual(parseVModule('a=1,,b*=2'), [
    { pattern: 'a', level: 1 },
    { pattern: 'b*', level: 2 },
  ]);
  assert.throws(() => parseVModule('a'), { message: '"a" does not have the pattern=N format' });
  assert.throws(() => parseVModule('a=b=1'), { message: '"a=b=1" does not have the pattern=N format' });
  assert.throws(() => parseVModule('=1'), { message: '"=1" does not have the pattern=N format' });
  assert.throws(() => parseVModule('a=x'), { message: 'parsing verbosity in "a=x": strconv.ParseUint: parsing "x": invalid syntax' });
  assert.throws(() => parseVModule('a=-1'), { message: 'parsing verbosity in "a=-1": strconv.ParseUint: parsing "-1": invalid syntax' });
  assert.throws(() => parseVModule('a=2147483648'), {
    message: 'parsing verbosity in "a=2147483648": strconv.ParseUint: parsing "2147483648": value out of range',
  });
  assert.equal(globMatch('a\\*', 'a*'), true);
  assert.equal(globMatch('a\\*', 'ab'), false);
  assert.equal(globMatch('[a-c]x', 'bx'), true);
  assert.equal(globMatch('[]', 'x'), false);
});

test('Go quoting of messages', () => {
  assert.equal(goQuote('a\u0007\b\f\n\r\t\v\u001b'), '"a\\a\\b\\f\\n\\r\\t\\v\\x1b"');
  assert.equal(goQuote('\u{10FFFF}\u{E0001}'), '"\\U0010ffff\\U000e0001"');
  assert.equal(goQuote('\ud800'), '"\ufffd"');
});

test("klog text quotes as Go does, with the flag errors' quoting: newer Unicode escaped, bytes with %+q", () => {
  const lines: string[] = [];
  const log = createLogger({ verbosity: 0, format: 'text', write: (l) => lines.push(l) });
  // U+088F and U+1FAE9 were assigned after Unicode 15.0: Go 1.26's klog escapes them.
  log.info('sized \u088f', { name: 'vol-\u{1fae9}', raw: Uint8Array.from([0x61, 0xff, 0xc3, 0xa9]) });
  assert.match(lines[0]!, /\] "sized \\u088f" name="vol-\\U0001fae9" raw="a\\xff\\u00e9"$/);
  assert.equal(goQuote('sized \u088f'), '"sized \\u088f"');
});

test('split stream: info lines to stdout, warnings and errors to stderr; the info buffer', () => {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const unbuffered = createLogOutput({
    splitStream: true,
    infoBufferBytes: 0,
    flushIntervalMs: 5_000,
    stdout: (t) => stdout.push(t),
    stderr: (t) => stderr.push(t),
  });
  const text = createLogger({ verbosity: 0, format: 'text', output: unbuffered });
  text.info('i');
  text.warn('w');
  text.error('e');
  assert.equal(stdout.length, 1);
  assert.match(stdout[0]!, /^I.*"i"\n$/);
  assert.deepEqual(
    stderr.map((l) => l[0]),
    ['W', 'E'],
  );
  unbuffered.close();

  // JSON has no warning level: zap gets warnings as info lines.
  stdout.length = 0;
  stderr.length = 0;
  const jsonOut = createLogOutput({
    splitStream: true,
    infoBufferBytes: 0,
    flushIntervalMs: 5_000,
    stdout: (t) => stdout.push(t),
    stderr: (t) => stderr.push(t),
  });
  const json = createLogger({ verbosity: 0, format: 'json', output: jsonOut });
  json.info('i');
  json.warnf('w');
  json.error('e');
  assert.equal(stdout.length, 2);
  assert.equal(stderr.length, 1);
  jsonOut.close();

  stdout.length = 0;
  const buffered = createLogOutput({ splitStream: true, infoBufferBytes: 10, flushIntervalMs: 60_000, stdout: (t) => stdout.push(t), stderr: () => {} });
  buffered.write('1234', true); // 5 bytes with the newline
  buffered.write('5678', true); // 10 bytes: fits exactly
  assert.equal(stdout.length, 0);
  buffered.write('9', true); // doesn't fit: the buffer goes out first
  assert.deepEqual(stdout, ['1234\n5678\n']);
  buffered.write('a line longer than the buffer', true); // flush, then written directly
  assert.deepEqual(stdout, ['1234\n5678\n', '9\n', 'a line longer than the buffer\n']);
  buffered.write('x', true);
  buffered.flush();
  assert.deepEqual(stdout.at(-1), 'x\n');
  buffered.close();

  stdout.length = 0;
  stderr.length = 0;
  const single = createLogOutput({
    splitStream: false,
    infoBufferBytes: 1000,
    flushIntervalMs: 5_000,
    stdout: (t) => stdout.push(t),
    stderr: (t) => stderr.push(t),
  });
  single.write('i', true);
  single.write('e', false);
  assert.equal(stdout.length, 0, 'one stream without the split');
  assert.deepEqual(stderr, ['i\n', 'e\n'], 'stderr');
});

test('the default clock: epoch milliseconds with a sub-millisecond fraction, never going back', () => {
  const now = wallClockMs();
  const before = Date.now();
  const readings = Array.from({ length: 1000 }, () => now());
  const after = Date.now();
  assert.ok(readings[0]! >= before - 1 && readings.at(-1)! <= after + 1, 'within a millisecond of Date.now()');
  for (let i = 1; i < readings.length; i++) assert.ok(readings[i]! >= readings[i - 1]!, 'monotonic');
  assert.ok(
    readings.some((ms) => !Number.isInteger(ms)),
    'a fraction (klog prints microseconds)',
  );
});
