// component-base's logging flags: help texts, defaults, value syntax and the LoggingConfiguration checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parseConfig, usageText } from './config.js';
import { FlagError } from './go-flags.js';
import { LoggingConfigError } from './logging-flags.js';

test('the four stream options have component-base help texts and hide their zero defaults', () => {
  const usage = usageText();
  const entry = (name: string) =>
    new RegExp(`^  -${name}( value)?\\n((?:    \\t.*\\n?)+)`, 'm')
      .exec(usage)?.[2]
      ?.replace(/\n    \t/g, ' ')
      .trim();
  assert.equal(
    entry('log-text-split-stream'),
    '[Alpha] In text format, write error messages to stderr and info messages to stdout. The default is to write a single stream to stdout. Enable the LoggingAlphaOptions feature gate to use this.',
  );
  assert.equal(
    entry('log-json-split-stream'),
    '[Alpha] In JSON format, write error messages to stderr and info messages to stdout. The default is to write a single stream to stdout. Enable the LoggingAlphaOptions feature gate to use this.',
  );
  assert.equal(
    entry('log-text-info-buffer-size'),
    '[Alpha] In text format with split output streams, the info messages can be buffered for a while to increase performance. The default value of zero bytes disables buffering. The size can be specified as number of bytes (512), multiples of 1000 (1K), multiples of 1024 (2Ki), or powers of those (3M, 4G, 5Mi, 6Gi). Enable the LoggingAlphaOptions feature gate to use this.',
  );
  assert.equal(
    entry('log-json-info-buffer-size'),
    '[Alpha] In JSON format with split output streams, the info messages can be buffered for a while to increase performance. The default value of zero bytes disables buffering. The size can be specified as number of bytes (512), multiples of 1000 (1K), multiples of 1024 (2Ki), or powers of those (3M, 4G, 5Mi, 6Gi). Enable the LoggingAlphaOptions feature gate to use this.',
  );
  assert.doesNotMatch(usage, /info-buffer-size[^\n]*\n[^\n]*\(default/);
});

test('values: quantities for the buffers, -v as an unsigned level, --vmodule items accumulate', () => {
  const table: Array<{ args: string[]; expect: Record<string, unknown> }> = [
    { args: ['--log-text-split-stream', '--log-text-info-buffer-size=2Ki'], expect: { logTextSplitStream: true, logTextInfoBufferBytes: 2048 } },
    { args: ['--log-json-split-stream=true', '--log-json-info-buffer-size=3M'], expect: { logJsonSplitStream: true, logJsonInfoBufferBytes: 3_000_000 } },
    { args: ['--log-text-info-buffer-size=512'], expect: { logTextInfoBufferBytes: 512 } },
    { args: ['--log-text-info-buffer-size=1.5k'], expect: { logTextInfoBufferBytes: 1500 } },
    { args: ['-v=4'], expect: { verbosity: 4 } },
    { args: ['--vmodule=reconcile=4', '--vmodule=leader*=5,,x=0'], expect: { vmodule: 'reconcile=4,leader*=5,x=0' } },
  ];
  for (const row of table) {
    const c = parseConfig(row.args) as unknown as Record<string, unknown>;
    for (const [k, v] of Object.entries(row.expect)) assert.equal(c[k], v, `${row.args.join(' ')}: ${k}`);
  }
});

test("bad values are flag errors with component-base's reasons (usage, exit 2)", () => {
  const table: Array<{ args: string[]; message: string | RegExp }> = [
    { args: ['-v=-1'], message: 'invalid value "-1" for flag -v: strconv.ParseUint: parsing "-1": invalid syntax' },
    { args: ['-v=2147483648'], message: 'invalid value "2147483648" for flag -v: strconv.ParseUint: parsing "2147483648": value out of range' },
    { args: ['--vmodule=reconcile'], message: 'invalid value "reconcile" for flag -vmodule: "reconcile" does not have the pattern=N format' },
    { args: ['--vmodule=a=x'], message: 'invalid value "a=x" for flag -vmodule: parsing verbosity in "a=x": strconv.ParseUint: parsing "x": invalid syntax' },
    { args: ['--log-text-info-buffer-size=lots'], message: /^invalid value "lots" for flag -log-text-info-buffer-size: / },
  ];
  for (const row of table) {
    assert.throws(
      () => parseConfig(row.args),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError && err.cause instanceof FlagError, row.args.join(' '));
        if (typeof row.message === 'string') assert.equal(err.message, row.message);
        else assert.match(err.message, row.message);
        return true;
      },
    );
  }
});

test("LoggingConfiguration checks: component-base's messages, one alone or several in brackets (main: exit 1)", () => {
  const table: Array<{ args: string[]; message: string }> = [
    { args: ['--logging-format=json', '--vmodule=reconcile=4'], message: 'vmodule: Forbidden: Only supported for text log format' },
    { args: ['--logging-format=json', '--vmodule=reconcile=0'], message: 'vmodule: Forbidden: Only supported for text log format' },
    { args: ['--logging-format=xml'], message: 'format: Invalid value: "xml": Unsupported log format' },
    { args: ['--log-flush-frequency=0'], message: 'flushFrequency: Invalid value: "0s": Must be greater than zero' },
    {
      args: ['--log-flush-frequency=-1m', '--logging-format=xml', '--vmodule=a=1'],
      message:
        '[flushFrequency: Invalid value: "-1m0s": Must be greater than zero, format: Invalid value: "xml": Unsupported log format, vmodule: Forbidden: Only supported for text log format]',
    },
  ];
  for (const row of table) {
    assert.throws(
      () => parseConfig(row.args),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError && err.cause instanceof LoggingConfigError, row.args.join(' '));
        assert.equal(err.message, row.message);
        return true;
      },
    );
  }
  assert.equal(parseConfig(['--logging-format=json', '--log-json-split-stream']).logJsonSplitStream, true, 'the stream options are honoured (see the README)');
});
