// --kube-api-qps and --kube-api-burst mean the same to the sidecar and to its doctor and explain
// subcommands: all three make their API client with kube/wire/client-factory.ts. The values each
// purpose gets are client-factory.test.ts's; here, the flag pairs client-go refuses are refused by
// all three, with the same text, before anything is asked of the API server or the driver.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../flags/config.js';
import { runSubcommand } from '../diagnose/subcommands.js';
import { createMetrics } from '../observability/metrics.js';
import { silentLogger } from '../observability/log/logger.js';
import { ClientRateLimitError } from '../kube/wire/rate-limiter.js';
import { startApp } from './build.js';
import { StartupError } from './startup-error.js';

const common = ['--master=https://127.0.0.1:1', '--csi-address=/nonexistent/csi.sock'];
const REFUSED = [
  { flags: ['--kube-api-qps=5', '--kube-api-burst=0'], text: 'burst is required to be greater than 0' },
  { flags: ['--kube-api-qps=0', '--kube-api-burst=-1'], text: '--kube-api-burst -1 with --kube-api-qps 0' },
];

async function subcommand(command: 'doctor' | 'explain', args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runSubcommand(command, args, { program: 'csi-resizer', out: (s) => (out += s), err: (s) => (err += s) });
  return { code, out, err };
}

for (const { flags, text } of REFUSED) {
  test(`${flags.join(' ')}: the sidecar, doctor and explain refuse it alike`, async () => {
    await assert.rejects(
      startApp(parseConfig([...common, ...flags]), { log: silentLogger, metrics: createMetrics() }, new AbortController().signal),
      (err: unknown) => {
        assert.ok(err instanceof StartupError);
        assert.equal(err.message, 'Failed to create kube client');
        assert.ok(err.cause instanceof ClientRateLimitError);
        assert.match(err.cause.message, new RegExp(text));
        return true;
      },
    );

    const doctor = await subcommand('doctor', [...common, ...flags, '--output=json']);
    assert.equal(doctor.code, 1);
    const apiServer = (JSON.parse(doctor.out) as { checks: { name: string; status: string; summary: string }[] }).checks.find((c) => c.name === 'API server');
    assert.equal(apiServer?.status, 'fail');
    assert.match(apiServer.summary, new RegExp(`^no client configuration: .*${text}`));

    const explain = await subcommand('explain', ['ns/claim', ...common, ...flags]);
    assert.equal(explain.code, 1);
    assert.match(explain.err, new RegExp(`^explain ns/claim: .*${text}`));
  });
}
