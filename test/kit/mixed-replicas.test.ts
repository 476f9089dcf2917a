// docs/upgrading-from-upstream.md, section 4, for real: during a rolling update, replicas of
// upstream's Go sidecar (the pinned v2.3.0, built from the module proxy) and of ours share one Lease, so at
// most one of them resizes at a time, each takes over from the other, and no volume is expanded
// twice. Both run as the test identity bound to our deploy/kubernetes/rbac.yaml, which also shows
// that upstream's binary works with our narrower RBAC (section 2 and 7 of the guide).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { componentsEnvPath, parseEnvFile, repoRoot } from '../cluster/components.js';
import { expandableClaims, requestPvcSize, type Provisioned } from '../cluster/fixtures.js';
import { adminClients, useCluster } from '../cluster/test-cluster.js';
import { CliProcess } from '../integration/cli-harness.js';
import { eventually } from '../support/eventually.js';

const LEASE_MS = 6_000;
const RENEW_MS = 4_000;
const RETRY_MS = 1_000;

/** The upstream binary, built by build-components.sh --with-upstream when it is not cached yet. */
async function upstreamBinary(): Promise<string> {
  const fromEnv = () => parseEnvFile(readFileSync(componentsEnvPath(), 'utf8')).get('UPSTREAM_RESIZER_BIN') ?? '';
  if (fromEnv()) return fromEnv();
  process.stderr.write('[mixed-replicas] building upstream csi-resizer (first time only)\n');
  await promisify(execFile)('bash', [join(repoRoot, 'test', 'infra', 'build-components.sh'), '--with-upstream'], {
    cwd: repoRoot,
    maxBuffer: 64 << 20,
    timeout: 1_800_000,
  });
  const bin = fromEnv();
  if (!bin) throw new Error('build-components.sh --with-upstream did not produce the upstream csi-resizer');
  return bin;
}

/** A replica of upstream's sidecar: its stderr in memory, killed by pid. */
class GoReplica {
  readonly child: ChildProcess;
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private done = false;

  constructor(bin: string, args: string[]) {
    this.child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString('utf8');
    });
    this.exited = new Promise((resolve) =>
      this.child.once('close', (code, signal) => {
        this.done = true;
        resolve({ code, signal });
      }),
    );
  }

  get hasExited(): boolean {
    return this.done;
  }

  kill(signal: NodeJS.Signals): void {
    if (!this.done) this.child.kill(signal);
  }
}

const until = <T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000) => eventually(what, fn, timeoutMs);

test('rolling update: upstream and csi-resizer replicas share the Lease and hand over both ways', { timeout: 2_400_000 }, async (t) => {
  const upstreamBin = await upstreamBinary();
  const cluster = await useCluster();
  const admin = adminClients(cluster);
  const driver = cluster.driverName;
  const leaseName = `external-resizer-${driver.replace(/[^a-zA-Z0-9-]/g, '-')}`;
  const holder = async () =>
    (await admin.coordination.readNamespacedLease({ namespace: 'default', name: leaseName }).catch(() => undefined))?.spec?.holderIdentity ?? '';
  const { namespace, provision } = await expandableClaims(admin, cluster, 'rz-mixed');

  // The same flags for both, as one Deployment's args would be, with the per-call timeouts a
  // v2.3 manifest may carry (longer than any call here takes).
  const args = [
    '--resize-timeout=1m',
    '--modify-timeout=2m',
    `--kubeconfig=${cluster.resizerKubeconfigPath}`,
    `--csi-address=${cluster.csiAddress}`,
    '--v=5',
    '--leader-election',
    '--leader-election-namespace=default',
    `--leader-election-lease-duration=${LEASE_MS}ms`,
    `--leader-election-renew-deadline=${RENEW_MS}ms`,
    `--leader-election-retry-period=${RETRY_MS}ms`,
  ];
  const goReplicas: GoReplica[] = [];
  const ours: CliProcess[] = [];
  const startGo = () => {
    const r = new GoReplica(upstreamBin, args);
    t.after(async () => {
      r.kill('SIGKILL');
      await r.exited;
    });
    goReplicas.push(r);
    return r;
  };
  const startOurs = (identity: string) => {
    const r = new CliProcess(args, { env: { CSI_RESIZER_LEADER_ELECTION_IDENTITY: identity } });
    t.after(() => r.destroy());
    ours.push(r);
    return r;
  };
  const logs = () => [...goReplicas.map((r) => r.stderr), ...ours.map((r) => r.stderr)];
  // A failed run keeps every replica's log.
  let passed = false;
  t.after(() => {
    if (passed) return;
    const logDir = mkdtempSync(join(tmpdir(), 'rz-mixed-'));
    goReplicas.forEach((r, i) => writeFileSync(join(logDir, `upstream-${i + 1}.log`), r.stderr));
    ours.forEach((r, i) => writeFileSync(join(logDir, `ours-${i + 1}.log`), r.stderr));
    process.stderr.write(`[mixed-replicas] replica logs kept in ${logDir}\n`);
  });
  // Both log each driver call at -v=5 as "GRPC call" with the request (ours as JSON, upstream's
  // as a quoted JSON string, so its quotes are escaped): the volume_id field finds every
  // ControllerExpandVolume sent.
  const expandCallsIn = (log: string, p: Provisioned) => {
    const field = `"volume_id":${JSON.stringify(p.volumeId)}`;
    const escaped = field.replaceAll('"', '\\"');
    return log
      .split('\n')
      .filter((l) => /"GRPC call"/.test(l) && l.includes('/csi.v1.Controller/ControllerExpandVolume') && (l.includes(field) || l.includes(escaped))).length;
  };
  const expandCalls = (p: Provisioned) => logs().reduce((n, log) => n + expandCallsIn(log, p), 0);
  const resizeAndWait = async (p: Provisioned, size: string) => {
    await requestPvcSize(admin, namespace, p.pvc.metadata!.name!, size, { retryUntilAdmittedMs: 10_000 });
    await until(
      `${p.pvc.metadata!.name} at ${size}`,
      async () => {
        const pvc = await admin.core.readNamespacedPersistentVolumeClaim({ namespace, name: p.pvc.metadata!.name! });
        return pvc.status?.capacity?.['storage'] === size ? true : undefined;
      },
      90_000,
    );
  };
  const [v1, v2, v3] = await Promise.all([provision(), provision(), provision()]);

  // 1. The old Deployment: an upstream replica leads (a Lease left by an earlier test expires first).
  const go1 = startGo();
  const goIdentity = await until(
    'the upstream replica to lead',
    async () => {
      if (go1.hasExited) throw new Error(`upstream's replica exited:\n${go1.stderr.slice(-4000)}`);
      const h = await holder();
      return /successfully acquired lease/i.test(go1.stderr) && h !== '' ? h : undefined;
    },
    120_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\nupstream's log:\n${go1.stderr.slice(-4000)}`);
  });
  // 2. The new pod starts and waits as a standby while upstream's replica keeps renewing.
  const ours1 = startOurs('ours-1');
  await ours1.waitForLog(/Attempting to acquire leader lease/, 120_000);
  await resizeAndWait(v1, '2Gi');
  assert.equal(await holder(), goIdentity);
  assert.ok(!/Became leader, starting/i.test(ours1.stderr), 'our standby did not lead while upstream held the Lease');
  assert.equal(expandCalls(v1), 1);
  assert.equal(expandCallsIn(go1.stderr, v1), 1, 'upstream expanded it');
  assert.equal(expandCallsIn(ours1.stderr, v1), 0, 'ours did not');

  // 3. The old leader is stopped. Upstream v2.3.0 does not release the Lease on SIGTERM (its gate is
  //    off), so ours takes over once the Lease has not been renewed for the lease duration.
  const stoppedAt = Date.now();
  go1.kill('SIGTERM');
  await go1.exited;
  await ours1.waitForLog(/Became leader, starting/i, LEASE_MS + 30_000);
  const goToOursMs = Date.now() - stoppedAt;
  assert.ok(goToOursMs >= LEASE_MS - RETRY_MS - 500, `took over before the Lease expired (${goToOursMs} ms)`);
  assert.equal(await holder(), 'ours-1');
  await resizeAndWait(v2, '2Gi');
  assert.equal(expandCalls(v2), 1);
  assert.equal(expandCalls(v1), 1, 'the finished volume was not expanded again');

  // 4. A rollback: an upstream replica waits; ours releases the Lease on SIGTERM, so upstream's
  //    replica takes it within a retry period or two instead of the lease duration.
  const go2 = startGo();
  await until('the upstream standby to try the Lease', () => (/attempting to acquire leader lease/i.test(go2.stderr) ? true : undefined), 120_000);
  const releasedAt = Date.now();
  ours1.kill('SIGTERM');
  assert.deepEqual(await ours1.exited, { code: 0, signal: null });
  await until(
    'upstream to lead again',
    async () => ((await holder()) === goIdentity && /successfully acquired lease/i.test(go2.stderr) ? true : undefined),
    30_000,
  );
  const oursToGoMs = Date.now() - releasedAt;
  assert.ok(oursToGoMs < LEASE_MS, `hand-over after our release took ${oursToGoMs} ms, not faster than expiry`);
  await resizeAndWait(v3, '3Gi');
  for (const v of [v1, v2, v3]) assert.equal(expandCalls(v), 1, `${v.volumeId} expanded exactly once`);
  assert.equal(expandCallsIn(go2.stderr, v3), 1, 'upstream expanded the last one');
  assert.equal(expandCallsIn(ours1.stderr, v2), 1, 'ours expanded the one in between');
  t.diagnostic(`upstream -> ours after SIGTERM (no release) ${goToOursMs} ms; ours -> upstream after our release ${oursToGoMs} ms (lease ${LEASE_MS} ms)`);
  passed = true;
});
