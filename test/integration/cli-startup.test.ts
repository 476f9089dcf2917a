// The real command line, run as a child process: help, version, flag errors, and every startup
// failure with the reference's message and exit code (§1). The CSI side is the fault driver (a
// real gRPC server on a unix socket) so each capability combination can be served; the API server
// is unreachable on purpose, which startup tolerates until the controllers run.
import { suite, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatVersion, parseDescribe } from '../../src/app/version.js';
import { repoRoot } from '../cluster/components.js';
import { FaultDriver, type FaultDriverOptions } from '../fakes/fault-driver.js';
import { CliProcess, runCli, unreachableKubeconfig } from './cli-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'rz-cli-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(kubeconfig, unreachableKubeconfig());

async function driver(t: { after(fn: () => unknown): void }, options: FaultDriverOptions = {}): Promise<FaultDriver> {
  const d = await FaultDriver.start(options);
  t.after(() => d.stop());
  return d;
}

/**
 * VolumeAttributesClass discovery runs while the driver is reached, but a driver's failure is
 * judged after the discovery's line, as upstream logs them (docs/differences/startup-order.md).
 */
function discoveryLoggedBefore(stderr: string, failure: string): void {
  const discovery = stderr.indexOf('"Failed to check VolumeAttributesClass V1 API availability"');
  assert.ok(discovery >= 0, `no discovery line in:\n${stderr}`);
  assert.ok(discovery < stderr.indexOf(`"${failure}"`), `the discovery's line comes after "${failure}":\n${stderr}`);
}

suite('command line', { concurrency: 3, timeout: 900_000 }, () => {
  test('--version prints "<argv0> <version>-g<commit>" (git at run time from a checkout) and exits 0', async () => {
    const run = await runCli(['--version']);
    assert.equal(run.code, 0);
    const described = execFileSync('git', ['describe', '--always', '--dirty', '--abbrev=40', '--exclude=*'], { cwd: repoRoot, encoding: 'utf8' });
    assert.equal(run.stdout, `csi-resizer ${formatVersion('0.1.0', parseDescribe(described))}\n`);
    assert.match(run.stdout, /^csi-resizer 0\.1\.0-g[0-9a-f]{12}(-dirty)?\n$/);
  });

  test('-h prints the usage and exits 0, as Go', async () => {
    const run = await runCli(['-h']);
    assert.equal(run.code, 0);
    assert.match(run.stderr, /^Usage of csi-resizer:\n/);
    // Go's type words: `value` for custom types, the back-quoted word where the usage has one.
    for (const line of [
      '  -leader-election-labels value',
      '  -feature-gates value',
      '  -v value',
      '  -kube-api-qps float',
      '  -http-endpoint :8080',
      '  -metrics-path /metrics',
    ]) {
      assert.ok(run.stderr.split('\n').includes(line), line);
    }
    assert.match(run.stderr, /\n {4}\tAllAlpha=true\|false \(ALPHA - default=false\)\n/);
  });

  test('--version answers before feature gates are checked, as upstream', async () => {
    const run = await runCli(['--version', '--feature-gates=NoSuchGate=true']);
    assert.equal(run.code, 0);
    assert.match(run.stdout, /^csi-resizer 0\.1\.0(-g[0-9a-f]{12}(-dirty)?)?\n$/);
  });

  test('an unknown flag prints the error and the usage and exits 2', async () => {
    const run = await runCli(['--csi-address=/x', '--no-such-flag']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /^flag provided but not defined: -no-such-flag\nUsage of csi-resizer:\n/);
  });

  test('a bad value exits 2', async () => {
    const run = await runCli(['--timeout=ten']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /^invalid value "ten" for flag -timeout: parse error\nUsage of/);
  });

  test('an unknown feature gate: "Failed to set feature gates" after the Version line, exit 1', async () => {
    const run = await runCli(['--feature-gates=NoSuchGate=true']);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /"Version"[^\n]*\n[^\n]*"Failed to set feature gates" err="unrecognized feature gate: NoSuchGate"/);
    const locked = await runCli(['--feature-gates=AllBeta=true,DeclarativeValidation=false']);
    assert.equal(locked.code, 1);
    assert.match(locked.stderr, /err="cannot set feature gate DeclarativeValidation to false, feature is locked to true"/);
  });

  test('RecoverVolumeExpansionFailure, removed in v2.3.0: =true warns once and starts on, =false is refused (exit 1)', async () => {
    const kept = await runCli(['--feature-gates=RecoverVolumeExpansionFailure=true', '--kubeconfig=/nonexistent/kubeconfig']);
    const warnings = kept.stderr.split('\n').filter((l) => l.includes('removed feature gate'));
    assert.equal(warnings.length, 1, kept.stderr);
    assert.match(
      warnings[0] ?? '',
      /"Warning: setting removed feature gate\. It has no effect; upstream external-resizer refuses it since v2\.3\.0, and a later release will refuse it too\." featureGate="RecoverVolumeExpansionFailure" value=true/,
    );
    // Past the gates: it ends at the next step, the missing kubeconfig.
    assert.doesNotMatch(kept.stderr, /Failed to set feature gates/);
    assert.match(kept.stderr, /"Failed to create cluster config"/);
    const refused = await runCli(['--feature-gates=RecoverVolumeExpansionFailure=false']);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /"Failed to set feature gates" err="cannot set feature gate RecoverVolumeExpansionFailure to false, feature was removed in external-resizer v2\.3\.0: the legacy resize path it selected no longer exists/,
    );
  });

  test('a positive --kube-api-qps with --kube-api-burst 0: "Failed to create kube client", exit 1', async () => {
    const run = await runCli([`--kubeconfig=${kubeconfig}`, '--csi-address=/nonexistent.sock', '--kube-api-qps=5', '--kube-api-burst=0']);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /"Failed to create kube client" err="burst is required to be greater than 0 when RateLimiter is not set and QPS is set to greater than 0"/,
    );
  });

  test('leader-election durations client-go refuses exit 2 (the Go sidecar panics) with its text', async (t) => {
    const d = await driver(t);
    const run = await runCli([
      `--kubeconfig=${kubeconfig}`,
      `--csi-address=${d.address}`,
      '--leader-election',
      '--leader-election-renew-deadline=10s',
      '--leader-election-retry-period=9s',
    ]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /renewDeadline must be greater than retryPeriod\*JitterFactor/);
  });

  test('--metrics-address with --http-endpoint exits 1', async () => {
    const run = await runCli(['--metrics-address=:9000', '--http-endpoint=:9001']);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /"Version" version="0\.1\.0-g[0-9a-f]{12}(-dirty)?"/);
    assert.match(run.stderr, /Only one of `--metrics-address` and `--http-endpoint` can be set\./);
  });

  test('--logging-format=json logs one JSON object per line; an unknown format exits 1', async () => {
    const run = await runCli(['--logging-format=json', '--metrics-address=:9000', '--http-endpoint=:9001']);
    assert.equal(run.code, 1);
    const entries = run.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string });
    assert.deepEqual(
      entries.map((e) => e.msg),
      ['Version', 'Only one of `--metrics-address` and `--http-endpoint` can be set.'],
    );
    const bad = await runCli(['--logging-format=yaml']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /"LoggingConfiguration is invalid"/);
  });

  test('no kubeconfig out of a cluster: "Failed to create cluster config", exit 1', async () => {
    const run = await runCli(['--csi-address=/nonexistent.sock'], { env: { KUBERNETES_SERVICE_HOST: '', KUBERNETES_SERVICE_PORT: '' } });
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /^E\d{4} [\d:.]+ +\d+ [\w.-]+\.[jt]s:\d+\] "Failed to create cluster config" err="unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined"$/m,
    );
  });

  test('a driver without the controller service: exit 1', async (t) => {
    const d = await driver(t, { capabilities: { controllerService: false } });
    const run = await runCli([`--kubeconfig=${kubeconfig}`, `--csi-address=${d.address}`]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /"Failed to create CSI resizer" err="CSI driver does not support controller service"/);
    discoveryLoggedBefore(run.stderr, 'Failed to create CSI resizer');
  });

  test('a driver with an empty name: exit 1', async (t) => {
    const d = await driver(t, { name: '' });
    const run = await runCli([`--kubeconfig=${kubeconfig}`, `--csi-address=${d.address}`]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /"Get driver name failed" err="driver name is empty"/);
    discoveryLoggedBefore(run.stderr, 'Get driver name failed');
  });

  test('a driver that can neither resize nor modify: exit 255', async (t) => {
    const d = await driver(t, { capabilities: { controllerExpand: false, nodeExpand: false, controllerModify: false } });
    const run = await runCli([`--kubeconfig=${kubeconfig}`, `--csi-address=${d.address}`]);
    assert.equal(run.code, 255);
    assert.match(run.stderr, /^F\d{4} [^\]]+\] CSI driver does not support resize nor modify$/m);
  });

  test('the HTTP port is taken: "Failed to start HTTP server", exit 1', async (t) => {
    const d = await driver(t);
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    t.after(() => blocker.close());
    const port = (blocker.address() as { port: number }).port;
    const run = await runCli([`--kubeconfig=${kubeconfig}`, `--csi-address=${d.address}`, `--http-endpoint=127.0.0.1:${port}`]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /"Failed to start HTTP server"/);
  });

  test('SIGTERM stops a running resizer with exit 0 (ReleaseLeaderElectionOnExit on)', async (t) => {
    const d = await driver(t);
    const proc = new CliProcess([`--kubeconfig=${kubeconfig}`, `--csi-address=${d.address}`]);
    t.after(() => proc.destroy());
    await proc.waitForLog(/"Starting external resizer"/);
    proc.kill('SIGTERM');
    const exit = await proc.exited;
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.match(proc.stderr, /\] Received SIGTERM or SIGINT signal, shutting down controller\.$/m);
    assert.match(proc.stderr, /"Shutting down external resizer" controller="[^"]+"/);
  });

  test('with ReleaseLeaderElectionOnExit=false a signal ends the process at once, as Go', async (t) => {
    const d = await driver(t);
    const proc = new CliProcess([`--kubeconfig=${kubeconfig}`, `--csi-address=${d.address}`, '--feature-gates=ReleaseLeaderElectionOnExit=false']);
    t.after(() => proc.destroy());
    await proc.waitForLog(/"Starting external resizer"/);
    proc.kill('SIGTERM');
    assert.deepEqual(await proc.exited, { code: null, signal: 'SIGTERM' });
  });

  test('the driver comes back under another name: exit 1', async (t) => {
    const d = await driver(t);
    const proc = new CliProcess([`--kubeconfig=${kubeconfig}`, `--csi-address=${d.address}`]);
    t.after(() => proc.destroy());
    // Once the controllers run (their informers report the unreachable API server); a rename
    // during startup itself is reported before main can subscribe (see the csi client).
    await proc.waitForLog(/List\/watch failed/);
    await d.restart({ name: 'impostor.csi.test' });
    assert.deepEqual(await proc.exited, { code: 1, signal: null });
    assert.match(proc.stderr, /CSI driver name changed/);
  });

  // The dial deadline is the reference's fixed 30 s, so this one waits that long, once.
  test('no CSI socket: "Failed to create CSI client" after the 30 s dial deadline, exit 1', async () => {
    const started = Date.now();
    const run = await runCli([`--kubeconfig=${kubeconfig}`, `--csi-address=${join(dir, 'missing.sock')}`], { timeoutMs: 120_000 });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /"Failed to create CSI client" err="failed to connect to CSI driver/);
    assert.ok(Date.now() - started >= 30_000);
  });
});
