// How each ending is reported and which exit code it gets (the one place: endProcess), and the
// endings the command line reaches before the process runner (runCommand).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parseCommandLine } from '../flags/config.js';
import { endProcess, type ProcessEnd } from './exit.js';
import { FeatureGateError } from '../flags/feature-gates.js';
import type { ProcessSignals } from './os-signals.js';
import { programName, runCommand } from './run.js';
import { createLogger } from '../observability/log/logger.js';
import { StartupError } from './startup-error.js';

function report(end: ProcessEnd) {
  const lines: string[] = [];
  const out = { stdout: '', stderr: '' };
  const log = createLogger({ verbosity: 0, format: 'text', write: (line) => lines.push(line.replace(/^(\w)\d{4} [^\]]+\] /, '$1 ')) });
  const code = endProcess(end, {
    log,
    stdout: (s) => {
      out.stdout += s;
    },
    stderr: (s) => {
      out.stderr += s;
    },
  });
  return { code, lines, ...out };
}

const badFlag = (() => {
  try {
    parseCommandLine(['--no-such-flag']);
  } catch (err) {
    if (err instanceof ConfigError) return err;
  }
  throw new Error('expected a ConfigError');
})();

test('every ending: its exit code and what it prints', () => {
  const cases: { end: ProcessEnd; code: number; lines?: string[]; stdout?: string; stderr?: string }[] = [
    { end: { kind: 'helpShown', usage: 'Usage of csi-resizer:' }, code: 0, stderr: 'Usage of csi-resizer:\n' },
    { end: { kind: 'versionShown', line: 'csi-resizer 0.1.0\n' }, code: 0, stdout: 'csi-resizer 0.1.0\n' },
    { end: { kind: 'subcommandDone', code: 1 }, code: 1 },
    { end: { kind: 'badFlags', error: badFlag }, code: 2, stderr: `flag provided but not defined: -no-such-flag\n${badFlag.usage}` },
    {
      end: { kind: 'badLoggingConfig', error: new ConfigError('vmodule: Forbidden', 'usage') },
      code: 1,
      lines: ['E "LoggingConfiguration is invalid" err="vmodule: Forbidden"'],
    },
    { end: { kind: 'conflictingHttpFlags' }, code: 1, lines: ['E "Only one of `--metrics-address` and `--http-endpoint` can be set."'] },
    {
      end: { kind: 'badFeatureGates', error: new FeatureGateError('unrecognized feature gate: Nope') },
      code: 1,
      lines: ['E "Failed to set feature gates" err="unrecognized feature gate: Nope"'],
    },
    {
      end: { kind: 'startupFailed', error: new StartupError('CSI driver does not support resize nor modify', 255) },
      code: 255,
      lines: ['F CSI driver does not support resize nor modify'],
    },
    {
      end: { kind: 'startupFailed', error: new StartupError('Get driver name failed', 1, { cause: new Error('empty name') }) },
      code: 1,
      lines: ['E "Get driver name failed" err="empty name"'],
    },
    {
      end: { kind: 'startupFailed', error: new StartupError('Invalid leader election configuration', 2) },
      code: 2,
      lines: ['E "Invalid leader election configuration"'],
    },
    {
      end: { kind: 'httpServerFailed', error: new Error('listen EADDRINUSE'), address: ':8080', metricsPath: '/metrics' },
      code: 1,
      lines: ['E "Failed to start HTTP server" err="listen EADDRINUSE" address=":8080" metricsPath="/metrics"'],
    },
    { end: { kind: 'driverRenamed', error: new Error('was a, now b') }, code: 1, lines: ['E "CSI driver name changed, exiting" err="was a, now b"'] },
    { end: { kind: 'controllersFailed', error: new Error('boom') }, code: 1, lines: ['E "Controllers stopped unexpectedly" err="boom"'] },
    // The elector has already logged "Stopped leading", as csi-lib-utils does before it exits 1.
    { end: { kind: 'leadershipLost' }, code: 1, lines: [] },
    { end: { kind: 'forced', signal: 'SIGINT' }, code: 1, lines: ['I "Received second signal, exiting immediately" signal="SIGINT"'] },
    { end: { kind: 'stopped' }, code: 0, lines: [] },
  ];
  for (const c of cases) {
    const got = report(c.end);
    assert.equal(got.code, c.code, c.end.kind);
    if (c.lines) assert.deepEqual(got.lines, c.lines, c.end.kind);
    assert.equal(got.stdout, c.stdout ?? '', c.end.kind);
    assert.equal(got.stderr, c.stderr ?? '', c.end.kind);
  }
});

test('the command line ends before the runner (and without a logger) for -h, --version and flag errors', async () => {
  const signals = {} as ProcessSignals; // never reached
  const cases: { args: string[]; kind: ProcessEnd['kind'] }[] = [
    { args: ['-h'], kind: 'helpShown' },
    { args: ['--version'], kind: 'versionShown' },
    { args: ['--version', '--feature-gates=Nope=true'], kind: 'versionShown' },
    { args: ['--timeout=soon'], kind: 'badFlags' },
    { args: ['--logging-format=json', '--vmodule=reconcile=4'], kind: 'badLoggingConfig' },
  ];
  for (const c of cases) {
    const { end, log } = await runCommand({
      args: c.args,
      scriptPath: '/app/dist/main.js',
      entryUrl: import.meta.url,
      stdout: () => {},
      stderr: () => {},
      signals,
    });
    assert.equal(end.kind, c.kind, c.args.join(' '));
    assert.equal(log, undefined);
  }
});

test('the program name is the command as invoked, csi-resizer for the entry files', () => {
  assert.equal(programName('/app/dist/main.js'), 'csi-resizer');
  assert.equal(programName('/repo/src/main.ts'), 'csi-resizer');
  assert.equal(programName('/usr/local/bin/external-resizer'), 'external-resizer');
  assert.equal(programName(undefined), 'csi-resizer');
});
