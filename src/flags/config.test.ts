// The real flag set against Go flag semantics (§2): the forms Go accepts, the defaults of
// upstream external-resizer v2.3.0, and the errors main maps to exit codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ConfigError, parseCommandLine, parseConfig, usageText, type Config } from './config.js';
import { FeatureGateError } from './feature-gates.js';
import { FlagError } from './go-flags.js';

test('defaults equal the reference sidecar', () => {
  const c = parseConfig([]);
  const expected: Omit<Config, 'gates' | 'featureGateSettings'> = {
    showVersion: false,
    kubeconfig: '',
    master: '',
    csiAddress: '/run/csi/socket',
    timeoutMs: 10_000,
    resizeTimeoutMs: 10_000,
    modifyTimeoutMs: 10_000,
    workers: 10,
    resyncPeriodMs: 10 * 60_000,
    retryIntervalStartMs: 1_000,
    retryIntervalMaxMs: 5 * 60_000,
    handleVolumeInUseError: true,
    extraModifyMetadata: false,
    leaderElection: false,
    nodeDeployment: false,
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
    // Ours, off by default (docs/auto-grow.md).
    autoGrow: {
      enabled: false,
      intervalMs: 60_000,
      cooldownMs: (8 * 60 + 10) * 60_000,
      minStepBytes: 1n << 30n,
      dryRun: false,
      usageSource: { kind: 'kubelet' },
      usageTimeoutMs: 10_000,
      concurrency: 16,
      kubeletCaFile: '',
      kubeletInsecureTls: false,
      kubeletPreferredAddressTypes: ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'],
    },
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
  const { gates, featureGateSettings, ...rest } = c;
  assert.deepEqual(rest, expected);
  assert.equal(featureGateSettings.size, 0);
  assert.equal(gates.annotateFsResize, true);
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
    // As the Go sidecar: 0 or fewer workers start no worker; 0 QPS/burst mean client-go's
    // defaults and a negative QPS disables the client-side limiter (src/kube/wire/rate-limiter.ts).
    { args: ['--workers=0'], expect: { workers: 0 } },
    { args: ['--workers=-2'], expect: { workers: -2 } },
    { args: ['--kube-api-qps=0', '--kube-api-burst=0'], expect: { kubeApiQps: 0, kubeApiBurst: 0 } },
    { args: ['--kube-api-qps=-1', '--kube-api-burst=-1'], expect: { kubeApiQps: -1, kubeApiBurst: -1 } },
    { args: ['-v=007'], expect: { verbosity: 7 } },
    { args: ['-v=2147483647'], expect: { verbosity: 2147483647 } },
    { args: ['--automaxprocs=false'], expect: { automaxprocs: false } },
    { args: ['--vmodule=file=2'], expect: { vmodule: 'file=2' } },
    { args: ['--feature-gates=AllAlpha=false'], expect: {}, gates: { releaseLeaderElectionOnExit: false } },
    { args: ['--feature-gates=AllBeta=false'], expect: {}, gates: { annotateFsResize: false } },
    { args: ['--leader-election'], expect: { leaderElection: true } },
    { args: ['--leader-election=true'], expect: { leaderElection: true } },
    { args: ['-leader-election=1'], expect: { leaderElection: true } },
    { args: ['--handle-volume-inuse-error=false'], expect: { handleVolumeInUseError: false } },
    { args: ['--handle-volume-inuse-error=F'], expect: { handleVolumeInUseError: false } },
    { args: ['--leader-election-labels=team:storage,tier:gold'], expect: { leaderElectionLabels: { team: 'storage', tier: 'gold' } } },
    {
      args: [
        '--leader-election-namespace',
        'kube-system',
        '--leader-election-lease-duration=30s',
        '--leader-election-renew-deadline=20s',
        '--leader-election-retry-period=2s',
      ],
      expect: {
        leaderElectionNamespace: 'kube-system',
        leaderElectionLeaseDurationMs: 30_000,
        leaderElectionRenewDeadlineMs: 20_000,
        leaderElectionRetryPeriodMs: 2_000,
      },
    },
    { args: ['--csi-address=$(ADDRESS)'], expect: { csiAddress: '$(ADDRESS)' } },
    { args: ['--csi-address', 'unix:///csi/csi.sock', '--http-endpoint=:8080'], expect: { csiAddress: 'unix:///csi/csi.sock', httpEndpoint: ':8080' } },
    { args: ['--metrics-address=:9808', '--metrics-path=/m'], expect: { metricsAddress: ':9808', metricsPath: '/m' } },
    {
      args: ['--retry-interval-start=500ms', '--retry-interval-max=10m', '--resync-period=1h'],
      expect: { retryIntervalStartMs: 500, retryIntervalMaxMs: 600_000, resyncPeriodMs: 3_600_000 },
    },
    { args: ['--logging-format=json'], expect: { loggingFormat: 'json' } },
    { args: ['--automaxprocs'], expect: { automaxprocs: true } },
    { args: ['--extra-modify-metadata'], expect: { extraModifyMetadata: true } },
    { args: ['--version'], expect: { showVersion: true } },
    // The last occurrence wins, as in Go.
    { args: ['--workers=2', '--workers=3'], expect: { workers: 3 } },
    {
      args: ['--feature-gates=ReleaseLeaderElectionOnExit=false,AnnotateFsResize=false'],
      expect: {},
      gates: { releaseLeaderElectionOnExit: false, annotateFsResize: false },
    },
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

test('--timeout replaces --resize-timeout and --modify-timeout only when the command line names it (Go flag.Visit)', () => {
  const table: Array<{ name: string; args: string[]; timeoutMs: number; resizeTimeoutMs: number; modifyTimeoutMs: number }> = [
    { name: 'neither: the defaults', args: [], timeoutMs: 10_000, resizeTimeoutMs: 10_000, modifyTimeoutMs: 10_000 },
    { name: 'only --timeout: both calls take it', args: ['--timeout=2m'], timeoutMs: 120_000, resizeTimeoutMs: 120_000, modifyTimeoutMs: 120_000 },
    {
      name: 'only --resize-timeout and --modify-timeout: each call its own, --timeout keeps its default',
      args: ['--resize-timeout=5m', '--modify-timeout=30m'],
      timeoutMs: 10_000,
      resizeTimeoutMs: 300_000,
      modifyTimeoutMs: 1_800_000,
    },
    {
      name: 'only --modify-timeout: expand keeps the default',
      args: ['--modify-timeout=1m'],
      timeoutMs: 10_000,
      resizeTimeoutMs: 10_000,
      modifyTimeoutMs: 60_000,
    },
    {
      name: 'all three: --timeout wins, wherever it stands',
      args: ['--resize-timeout=5m', '--timeout=2m', '--modify-timeout=30m'],
      timeoutMs: 120_000,
      resizeTimeoutMs: 120_000,
      modifyTimeoutMs: 120_000,
    },
    {
      name: 'all three, --timeout given at its default value: it still wins',
      args: ['--timeout=10s', '--resize-timeout=5m', '--modify-timeout=30m'],
      timeoutMs: 10_000,
      resizeTimeoutMs: 10_000,
      modifyTimeoutMs: 10_000,
    },
    {
      name: '-timeout as a separate argument counts the same',
      args: ['-resize-timeout', '5m', '-timeout', '10s'],
      timeoutMs: 10_000,
      resizeTimeoutMs: 10_000,
      modifyTimeoutMs: 10_000,
    },
  ];
  for (const row of table) {
    const c = parseConfig(row.args);
    assert.deepEqual(
      { timeoutMs: c.timeoutMs, resizeTimeoutMs: c.resizeTimeoutMs, modifyTimeoutMs: c.modifyTimeoutMs },
      { timeoutMs: row.timeoutMs, resizeTimeoutMs: row.resizeTimeoutMs, modifyTimeoutMs: row.modifyTimeoutMs },
      row.name,
    );
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
    { args: ['--resize-timeout=5'], message: 'invalid value "5" for flag -resize-timeout: parse error', cause: 'flag' },
    { args: ['--modify-timeout=forever'], message: 'invalid value "forever" for flag -modify-timeout: parse error', cause: 'flag' },
    { args: ['--leader-election=maybe'], message: 'invalid boolean value "maybe" for -leader-election: parse error', cause: 'flag' },
    { args: ['--workers=x'], message: 'invalid value "x" for flag -workers: parse error', cause: 'flag' },
    { args: ['--kube-api-qps=fast'], message: 'invalid value "fast" for flag -kube-api-qps: parse error', cause: 'flag' },
    {
      args: ['--leader-election-labels=novalue'],
      message: 'invalid value "novalue" for flag -leader-election-labels: malformed item in list of labels: novalue',
      cause: 'flag',
    },
    {
      args: ['--feature-gates=AnnotateFsResize'],
      message: 'invalid value "AnnotateFsResize" for flag -feature-gates: malformed pair, expect string=bool',
      cause: 'flag',
    },
    {
      args: ['--feature-gates=AnnotateFsResize=on'],
      message:
        'invalid value "AnnotateFsResize=on" for flag -feature-gates: invalid value of AnnotateFsResize: on, err: strconv.ParseBool: parsing "on": invalid syntax',
      cause: 'flag',
    },
    { args: ['--feature-gates=NoSuchGate=true'], message: 'unrecognized feature gate: NoSuchGate', cause: 'gate' },
    {
      args: ['--feature-gates=DeclarativeValidation=false'],
      message: 'cannot set feature gate DeclarativeValidation to false, feature is locked to true',
      cause: 'gate',
    },
    {
      args: ['--feature-gates=RecoverVolumeExpansionFailure=false'],
      message: /^cannot set feature gate RecoverVolumeExpansionFailure to false, feature was removed in external-resizer v2\.3\.0: the legacy resize path/,
      cause: 'gate',
    },
    // -v is component-base's verbosity type: strconv.ParseUint(v, 10, 31) errors, passed through.
    { args: ['-v=-1'], message: 'invalid value "-1" for flag -v: strconv.ParseUint: parsing "-1": invalid syntax', cause: 'flag' },
    { args: ['-v=x'], message: 'invalid value "x" for flag -v: strconv.ParseUint: parsing "x": invalid syntax', cause: 'flag' },
    { args: ['-v=2147483648'], message: 'invalid value "2147483648" for flag -v: strconv.ParseUint: parsing "2147483648": value out of range', cause: 'flag' },
    // -automaxprocs is a flag.BoolFunc: strconv.ParseBool's error, not the flag package's "parse error".
    {
      args: ['--automaxprocs=maybe'],
      message: 'invalid boolean value "maybe" for -automaxprocs: strconv.ParseBool: parsing "maybe": invalid syntax',
      cause: 'flag',
    },
    { args: ['--logging-format=yaml'], message: 'format: Invalid value: "yaml": Unsupported log format', cause: 'other' },
  ];
  for (const row of table) {
    assert.throws(
      () => parseConfig(row.args),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError, row.args.join(' '));
        if (typeof row.message === 'string') assert.equal(err.message, row.message);
        else assert.match(err.message, row.message);
        assert.equal(err.helpRequested, false);
        assert.match(err.usage, /^Usage of csi-resizer:\n/);
        const expectedCause = { flag: FlagError, gate: FeatureGateError, other: Error }[row.cause];
        assert.ok(err.cause instanceof expectedCause, `${row.args.join(' ')}: cause ${String(err.cause)}`);
        return true;
      },
    );
  }
});

test('-h and --help ask for help (main prints usage and exits 0)', () => {
  for (const arg of ['-h', '--help', '-help']) {
    assert.throws(
      () => parseConfig([arg]),
      (err: unknown) => err instanceof ConfigError && err.helpRequested,
    );
  }
});

test('usage lists every flag of the reference with its default', () => {
  const usage = usageText();
  for (const name of [
    'version',
    'kubeconfig',
    'master',
    'csi-address',
    'timeout',
    'resize-timeout',
    'modify-timeout',
    'workers',
    'resync-period',
    'retry-interval-start',
    'retry-interval-max',
    'handle-volume-inuse-error',
    'extra-modify-metadata',
    'leader-election',
    'leader-election-namespace',
    'leader-election-lease-duration',
    'leader-election-renew-deadline',
    'leader-election-retry-period',
    'leader-election-labels',
    'kube-api-qps',
    'kube-api-burst',
    'http-endpoint',
    'metrics-address',
    'metrics-path',
    'automaxprocs',
    'v',
    'vmodule',
    'logging-format',
    'log-flush-frequency',
    'feature-gates',
    'log-text-split-stream',
    'log-text-info-buffer-size',
    'log-json-split-stream',
    'log-json-info-buffer-size',
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

test('--node-deployment is off by default and refuses --leader-election with a clear error', () => {
  assert.equal(parseConfig(['--node-deployment']).nodeDeployment, true);
  assert.throws(
    () => parseConfig(['--node-deployment', '--leader-election']),
    (err: unknown) => err instanceof ConfigError && /--node-deployment cannot be combined with --leader-election/.test(err.message),
  );
});

test('the auto-grow flags: values in Go syntax, every bad one reported at once', () => {
  const c = parseConfig([
    '--auto-grow',
    '--auto-grow-interval=5s',
    '--auto-grow-cooldown=0s',
    '--auto-grow-min-step=0',
    '--auto-grow-dry-run',
    '--auto-grow-usage-source=http://prometheus.monitoring:9090/prom',
    '--auto-grow-usage-timeout=3s',
    '--auto-grow-usage-concurrency=4',
    '--kubelet-certificate-authority=/etc/kubelet-ca/ca.crt',
    '--kubelet-insecure-tls',
    '--kubelet-preferred-address-types=InternalIP,Hostname',
  ]);
  assert.deepEqual(c.autoGrow, {
    enabled: true,
    intervalMs: 5_000,
    cooldownMs: 0,
    minStepBytes: 0n,
    dryRun: true,
    usageSource: { kind: 'prometheus', url: 'http://prometheus.monitoring:9090/prom' },
    usageTimeoutMs: 3_000,
    concurrency: 4,
    kubeletCaFile: '/etc/kubelet-ca/ca.crt',
    kubeletInsecureTls: true,
    kubeletPreferredAddressTypes: ['InternalIP', 'Hostname'],
  });
  assert.throws(
    () =>
      parseConfig([
        '--auto-grow-min-step=lots',
        '--auto-grow-usage-source=prometheus',
        '--auto-grow-interval=0s',
        '--auto-grow-usage-concurrency=0',
        '--kubelet-preferred-address-types=InternalIP,Internal',
      ]),
    (err: unknown) =>
      err instanceof ConfigError &&
      /^invalid auto-grow flags: /.test(err.message) &&
      [
        /--auto-grow-min-step=lots: not a quantity/,
        /--auto-grow-usage-source=prometheus: use kubelet or the http\(s\) URL of a Prometheus server/,
        /--auto-grow-interval: must be positive/,
        /--auto-grow-usage-concurrency=0: must be 1 or more/,
        /--kubelet-preferred-address-types=InternalIP,Internal: "Internal" not among/,
      ].every((re) => re.test(err.message)),
  );
  assert.throws(() => parseConfig(['--auto-grow-min-step=-1Gi']), /--auto-grow-min-step=-1Gi: must not be negative/);
});

/** `-h` blocks by flag name: "  -name ..." and its indented usage lines. */
function usageBlocks(text: string): Map<string, string> {
  const blocks = new Map<string, string>();
  const lines = text.split('\n').slice(1); // "Usage of csi-resizer:"
  let name = '';
  for (const line of lines) {
    const m = /^ {2}-([^\s]+)/.exec(line);
    if (m) {
      name = m[1] as string;
      blocks.set(name, line);
    } else if (line !== '') {
      blocks.set(name, `${blocks.get(name) ?? ''}\n${line}`);
    }
  }
  return blocks;
}

test("-h prints the Go sidecar's help text, flag by flag (test/reference/upstream-v2.3.0-help.txt)", () => {
  const upstream = readFileSync(new URL('../../test/reference/upstream-v2.3.0-help.txt', import.meta.url), 'utf8');
  // Where we differ on purpose (README, "Differences from upstream"):
  const expected = usageBlocks(
    upstream
      // ReleaseLeaderElectionOnExit is on (upstream: off);
      .replace('ReleaseLeaderElectionOnExit=true|false (ALPHA - default=false)', 'ReleaseLeaderElectionOnExit=true|false (ALPHA - default=true)')
      // -automaxprocs is accepted and does nothing, and says so.
      .replace('match Linux container CPU quota\n', 'match Linux container CPU quota (accepted for compatibility; no effect on Node.js)\n'),
  );
  // Flags csi-resizer adds beyond upstream, each listed in the README's table of differences.
  const ourAdditions = [
    'node-deployment',
    'auto-grow',
    'auto-grow-cooldown',
    'auto-grow-dry-run',
    'auto-grow-interval',
    'auto-grow-min-step',
    'auto-grow-usage-concurrency',
    'auto-grow-usage-source',
    'auto-grow-usage-timeout',
    'kubelet-certificate-authority',
    'kubelet-insecure-tls',
    'kubelet-preferred-address-types',
  ];
  const ours = usageBlocks(usageText());
  for (const [name, block] of ours) {
    if (ourAdditions.includes(name)) continue;
    assert.ok(expected.has(name), `-${name} is not a flag of the Go sidecar`);
    assert.equal(block, expected.get(name), `-${name}`);
  }
  // The four log output flags, once defined here, are compared above like every other flag.
  // Nothing else may be missing.
  const arrivingWithLogging = ['log-json-info-buffer-size', 'log-json-split-stream', 'log-text-info-buffer-size', 'log-text-split-stream'];
  const missing = [...expected.keys()].filter((name) => !ours.has(name));
  assert.deepEqual(
    missing.filter((name) => !arrivingWithLogging.includes(name)),
    [],
  );
  // Go prints the flags sorted by name: ours among upstream's, upstream's in its own order.
  assert.ok(usageText().startsWith('Usage of csi-resizer:\n  -auto-grow\n'));
  assert.deepEqual(
    [...ours.keys()].filter((name) => !ourAdditions.includes(name)),
    [...expected.keys()].filter((name) => ours.has(name)),
  );
});

test('feature gates are resolved after the flags: --version never fails on a bad gate', () => {
  const commandLine = parseCommandLine(['--version', '--feature-gates=NoSuchGate=true']);
  assert.equal(commandLine.showVersion, true);
  assert.deepEqual([...commandLine.featureGateSettings], [['NoSuchGate', true]]);
});
