// The real flag set against Go flag semantics (§2): the forms Go accepts, the defaults of
// upstream external-resizer v2.2, and the errors main maps to exit codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parseConfig, usageText, type Config } from './config.js';
import { FeatureGateError } from './feature-gates.js';
import { FlagError } from './go-flags.js';

test('defaults equal the reference sidecar', () => {
  const c = parseConfig([]);
  const expected: Omit<Config, 'gates'> = {
    showVersion: false,
    kubeconfig: '',
    master: '',
    csiAddress: '/run/csi/socket',
    timeoutMs: 10_000,
    workers: 10,
    resyncPeriodMs: 10 * 60_000,
    retryIntervalStartMs: 1_000,
    retryIntervalMaxMs: 5 * 60_000,
    handleVolumeInUseError: true,
    extraModifyMetadata: false,
    leaderElection: false,
    leaderElectionNamespace: '',
    leaderElectionLeaseDurationMs: 15_000,
    leaderElectionRenewDeadlineMs: 10_000,
    leaderElectionRetryPeriodMs: 5_000,
    leaderElectionLabels: {},
    kubeApiQps: 5,
    kubeApiBurst: 10,
    httpEndpoint: '',
    metricsAddress: '',
    metricsPath: '/metrics',
    automaxprocs: false,
    verbosity: 0,
    vmodule: '',
    loggingFormat: 'text',
    logFlushFrequencyMs: 5_000,
    logTextSplitStream: false,
    logTextInfoBufferBytes: 0,
    logJsonSplitStream: false,
    logJsonInfoBufferBytes: 0,
    positionalArgs: [],
  };
  const { gates, ...rest } = c;
  assert.deepEqual(rest, expected);
  assert.equal(gates.annotateFsResize, true);
  assert.equal(gates.recoverVolumeExpansionFailure, true);
  assert.equal(gates.volumeAttributesClass, true);
  // Deliberately different from upstream (false, alpha): SIGTERM drains and releases the Lease.
  assert.equal(gates.releaseLeaderElectionOnExit, true);
  assert.equal(gates.explicit.size, 0);
  assert.ok(Object.isFrozen(c));
});

test('flag forms parse with Go flag semantics', () => {
  const table: Array<{ args: string[]; expect: Partial<Config>; gates?: Record<string, boolean> }> = [
    { args: ['-v=5'], expect: { verbosity: 5 } },
    { args: ['--v=5'], expect: { verbosity: 5 } },
    { args: ['-v', '5'], expect: { verbosity: 5 } },
    { args: ['--timeout', '1m30s'], expect: { timeoutMs: 90_000 } },
    { args: ['-timeout=1.5s'], expect: { timeoutMs: 1_500 } },
    { args: ['--timeout=0'], expect: { timeoutMs: 0 } },
    { args: ['--kube-api-qps=20.5', '--kube-api-burst=40'], expect: { kubeApiQps: 20.5, kubeApiBurst: 40 } },
    { args: ['--kube-api-qps', '1e2'], expect: { kubeApiQps: 100 } },
    { args: ['--workers=0x10'], expect: { workers: 16 } },
    { args: ['--leader-election'], expect: { leaderElection: true } },
    { args: ['--leader-election=true'], expect: { leaderElection: true } },
    { args: ['-leader-election=1'], expect: { leaderElection: true } },
    { args: ['--handle-volume-inuse-error=false'], expect: { handleVolumeInUseError: false } },
    { args: ['--handle-volume-inuse-error=F'], expect: { handleVolumeInUseError: false } },
    { args: ['--leader-election-labels=team:storage,tier:gold'], expect: { leaderElectionLabels: { team: 'storage', tier: 'gold' } } },
    { args: ['--leader-election-namespace', 'kube-system', '--leader-election-lease-duration=30s', '--leader-election-renew-deadline=20s', '--leader-election-retry-period=2s'],
      expect: { leaderElectionNamespace: 'kube-system', leaderElectionLeaseDurationMs: 30_000, leaderElectionRenewDeadlineMs: 20_000, leaderElectionRetryPeriodMs: 2_000 } },
    { args: ['--csi-address=$(ADDRESS)'], expect: { csiAddress: '$(ADDRESS)' } },
    { args: ['--csi-address', 'unix:///csi/csi.sock', '--http-endpoint=:8080'], expect: { csiAddress: 'unix:///csi/csi.sock', httpEndpoint: ':8080' } },
    { args: ['--metrics-address=:9808', '--metrics-path=/m'], expect: { metricsAddress: ':9808', metricsPath: '/m' } },
    { args: ['--retry-interval-start=500ms', '--retry-interval-max=10m', '--resync-period=1h'], expect: { retryIntervalStartMs: 500, retryIntervalMaxMs: 600_000, resyncPeriodMs: 3_600_000 } },
    { args: ['--logging-format=json'], expect: { loggingFormat: 'json' } },
    { args: ['--automaxprocs'], expect: { automaxprocs: true } },
    { args: ['--extra-modify-metadata'], expect: { extraModifyMetadata: true } },
    { args: ['--version'], expect: { showVersion: true } },
    // The last occurrence wins, as in Go.
    { args: ['--workers=2', '--workers=3'], expect: { workers: 3 } },
    { args: ['--feature-gates=ReleaseLeaderElectionOnExit=false,AnnotateFsResize=false'], expect: {}, gates: { releaseLeaderElectionOnExit: false, annotateFsResize: false } },
    { args: ['--feature-gates', 'VolumeAttributesClass=true'], expect: {}, gates: { volumeAttributesClass: true } },
  ];
  for (const row of table) {
    const c = parseConfig(row.args);
    for (const [key, value] of Object.entries(row.expect)) {
      assert.deepEqual(c[key as keyof Config], value, `${row.args.join(' ')} → ${key}`);
    }
    for (const [key, value] of Object.entries(row.gates ?? {})) {
      assert.equal(c.gates[key as keyof typeof c.gates], value, `${row.args.join(' ')} → gate ${key}`);
    }
  }
});

test('explicitly set gates are remembered (VolumeAttributesClass auto-detection skips them)', () => {
  const c = parseConfig(['--feature-gates=VolumeAttributesClass=false']);
  assert.equal(c.gates.volumeAttributesClass, false);
  assert.deepEqual([...c.gates.explicit], ['VolumeAttributesClass']);
});

test('bad command lines: every error carries the usage and the reason, as Go prints it', () => {
  const table: Array<{ args: string[]; message: string | RegExp; cause: 'flag' | 'gate' | 'other' }> = [
    { args: ['--no-such-flag'], message: 'flag provided but not defined: -no-such-flag', cause: 'flag' },
    { args: ['-logtostderr'], message: 'flag provided but not defined: -logtostderr', cause: 'flag' },
    { args: ['--timeout=abc'], message: 'invalid value "abc" for flag -timeout: parse error', cause: 'flag' },
    { args: ['--timeout=10'], message: 'invalid value "10" for flag -timeout: parse error', cause: 'flag' },
    { args: ['--timeout'], message: 'flag needs an argument: -timeout', cause: 'flag' },
    { args: ['--leader-election=maybe'], message: 'invalid boolean value "maybe" for -leader-election: parse error', cause: 'flag' },
    { args: ['--workers=x'], message: 'invalid value "x" for flag -workers: parse error', cause: 'flag' },
    { args: ['--kube-api-qps=fast'], message: 'invalid value "fast" for flag -kube-api-qps: parse error', cause: 'flag' },
    { args: ['--leader-election-labels=novalue'], message: /malformed pair, expect string:string/, cause: 'flag' },
    { args: ['--feature-gates=AnnotateFsResize'], message: /malformed pair, expect string=bool/, cause: 'flag' },
    { args: ['--feature-gates=NoSuchGate=true'], message: /unrecognized feature gate: NoSuchGate/, cause: 'gate' },
    { args: ['--logging-format=yaml'], message: 'format: Invalid value: "yaml": Unsupported log format', cause: 'other' },
  ];
  for (const row of table) {
    assert.throws(() => parseConfig(row.args), (err: unknown) => {
      assert.ok(err instanceof ConfigError, row.args.join(' '));
      if (typeof row.message === 'string') assert.equal(err.message, row.message);
      else assert.match(err.message, row.message);
      assert.equal(err.helpRequested, false);
      assert.match(err.usage, /^Usage of csi-resizer:\n/);
      const expectedCause = { flag: FlagError, gate: FeatureGateError, other: Error }[row.cause];
      assert.ok(err.cause instanceof expectedCause, `${row.args.join(' ')}: cause ${String(err.cause)}`);
      return true;
    });
  }
});

test('-h and --help ask for help (main prints usage and exits 0)', () => {
  for (const arg of ['-h', '--help', '-help']) {
    assert.throws(() => parseConfig([arg]), (err: unknown) => err instanceof ConfigError && err.helpRequested);
  }
});

test('usage lists every flag of the reference with its default', () => {
  const usage = usageText();
  for (const name of [
    'version', 'kubeconfig', 'master', 'csi-address', 'timeout', 'workers', 'resync-period', 'retry-interval-start',
    'retry-interval-max', 'handle-volume-inuse-error', 'extra-modify-metadata', 'leader-election', 'leader-election-namespace',
    'leader-election-lease-duration', 'leader-election-renew-deadline', 'leader-election-retry-period', 'leader-election-labels',
    'kube-api-qps', 'kube-api-burst', 'http-endpoint', 'metrics-address', 'metrics-path', 'automaxprocs', 'v', 'vmodule',
    'logging-format', 'log-flush-frequency', 'feature-gates', 'log-text-split-stream', 'log-text-info-buffer-size',
    'log-json-split-stream', 'log-json-info-buffer-size',
  ]) {
    assert.match(usage, new RegExp(`^  -${name}\\b`, 'm'), `usage lists -${name}`);
  }
  assert.match(usage, /-csi-address string\n\s+Address of the CSI driver socket\. \(default "\/run\/csi\/socket"\)/);
  assert.match(usage, /-timeout duration\n[^\n]*\(default 10s\)/);
  assert.match(usage, /-retry-interval-max duration\n[^\n]*\(default 5m0s\)/);
  assert.match(usage, /-handle-volume-inuse-error\n[^\n]*\(default true\)/);
});

test('arguments after the flags are kept aside, as Go leaves them in flag.Args()', () => {
  const c = parseConfig(['--workers=3', 'extra', '--v=5']);
  assert.equal(c.workers, 3);
  assert.equal(c.verbosity, 0, 'parsing stops at the first non-flag');
  assert.deepEqual(c.positionalArgs, ['extra', '--v=5']);
});
