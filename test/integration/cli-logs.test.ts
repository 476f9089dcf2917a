// The real command line's log output: klog's text header (pid in 7 columns, our file:line),
// component-base's JSON (ts in epoch ms, caller, v, no err when there is none), the split streams,
// --vmodule per file, and the LoggingConfiguration checks. The API server is unreachable on
// purpose; the CSI side is the fault driver.
import { suite, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FaultDriver } from '../fakes/fault-driver.js';
import { CliProcess, runCli, unreachableKubeconfig } from './cli-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'rz-logs-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(kubeconfig, unreachableKubeconfig());
const BOTH_HTTP_FLAGS = ['--metrics-address=:9000', '--http-endpoint=:9001'];

suite('log output', { concurrency: 3, timeout: 600_000 }, () => {
  test('text: klog header with the pid right-aligned in 7 columns and the calling file:line', async () => {
    const proc = new CliProcess(BOTH_HTTP_FLAGS);
    const exit = await proc.exited;
    assert.equal(exit.code, 1);
    const pid = String(proc.pid).padStart(7, ' ');
    const lines = proc.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 2, proc.stderr);
    assert.match(
      lines[0]!,
      new RegExp(`^I\\d{4} \\d{2}:\\d{2}:\\d{2}\\.\\d{6} ${pid} run\\.ts:\\d+\\] "Version" version="0\\.1\\.0(-g[0-9a-f]{12}(-dirty)?)?"$`),
    );
    assert.match(
      lines[1]!,
      new RegExp(`^E\\d{4} \\d{2}:\\d{2}:\\d{2}\\.\\d{6} ${pid} exit\\.ts:\\d+\\] "Only one of \`--metrics-address\` and \`--http-endpoint\` can be set\\."$`),
    );
    assert.equal(proc.stdout, '');
  });

  test('json: ts in epoch milliseconds, caller, msg, v on info lines, no err when there is none', async () => {
    const before = Date.now();
    const run = await runCli(['--logging-format=json', ...BOTH_HTTP_FLAGS]);
    const after = Date.now();
    assert.equal(run.code, 1);
    const lines = run.stderr.trimEnd().split('\n');
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(Object.keys(entries[0]!), ['ts', 'caller', 'msg', 'v', 'version']);
    assert.deepEqual(Object.keys(entries[1]!), ['ts', 'caller', 'msg']);
    for (const e of entries) {
      const ts = e['ts'] as number;
      assert.ok(ts >= before - 1 && ts <= after + 1, `ts ${ts} is epoch milliseconds between ${before} and ${after}`);
    }
    assert.match(String(entries[0]!['caller']), /^app\/run\.ts:\d+$/);
    assert.match(String(entries[1]!['caller']), /^app\/exit\.ts:\d+$/);
    assert.deepEqual([entries[0]!['msg'], entries[0]!['v']], ['Version', 0]);
    assert.match(String(entries[0]!['version']), /^0\.1\.0(-g[0-9a-f]{12}(-dirty)?)?$/);
  });

  test('--log-text-split-stream and --log-json-split-stream: info to stdout, errors to stderr', async () => {
    const text = await runCli(['--log-text-split-stream', ...BOTH_HTTP_FLAGS]);
    assert.equal(text.code, 1);
    assert.match(text.stdout, /^I\d{4} [^\n]*"Version" version="0\.1\.0(-g[0-9a-f]{12}(-dirty)?)?"\n$/);
    assert.match(text.stderr, /^E\d{4} [^\n]*"Only one of/);
    const json = await runCli(['--logging-format=json', '--log-json-split-stream', '--log-json-info-buffer-size=64Ki', ...BOTH_HTTP_FLAGS]);
    assert.equal(json.code, 1);
    assert.equal((JSON.parse(json.stdout) as { msg: string }).msg, 'Version', 'the buffered info line is written at exit');
    assert.equal((JSON.parse(json.stderr) as { msg: string }).msg, 'Only one of `--metrics-address` and `--http-endpoint` can be set.');
  });

  test("LoggingConfiguration checks exit 1 with component-base's message in err", async () => {
    const run = await runCli(['--logging-format=json', '--vmodule=reconcile=4']);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /"LoggingConfiguration is invalid" err="vmodule: Forbidden: Only supported for text log format"$/m);
    const flush = await runCli(['--log-flush-frequency=0s']);
    assert.equal(flush.code, 1);
    assert.match(flush.stderr, /"LoggingConfiguration is invalid" err="flushFrequency: Invalid value: \\"0s\\": Must be greater than zero"$/m);
  });

  test('--vmodule raises the verbosity of the files it names only', async (t) => {
    const driver = await FaultDriver.start();
    t.after(() => driver.stop());
    const run = async (extra: string[]) => {
      const proc = new CliProcess([`--kubeconfig=${kubeconfig}`, `--csi-address=${driver.address}`, ...extra]);
      t.after(() => proc.destroy());
      await proc.waitForLog(/"Starting external resizer"/);
      proc.kill('SIGTERM');
      await proc.exited;
      return proc.stderr;
    };
    // "CSI driver name" is a -v=2 line of csi/client.ts.
    assert.doesNotMatch(await run([]), /"CSI driver name"/);
    const named = await run(['--vmodule=client=2']);
    assert.match(named, /^I\d{4} [^\]]+ client\.ts:\d+\] "CSI driver name" driverName="[^"]+"$/m);
    assert.doesNotMatch(await run(['--vmodule=connection=9']), /"CSI driver name"/);
    assert.match(await run(['--vmodule=cl*nt=2']), /"CSI driver name"/);
  });
});
