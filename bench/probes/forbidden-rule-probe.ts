// Evaluation probe (not part of `npm run bench`): what a resizer says in its first 40 s when its
// role lacks the VolumeAttributesClass list/watch rule (as drivers shipped after upgrading), and
// whether it resizes meanwhile. Each build runs as a child process against one test cluster, as a
// ServiceAccount bound to rbac.yaml's ClusterRole without that rule (test/cluster/rbac.ts), with
// the mock driver, which can modify: so each build's modify controller wants the class cache. Two
// fresh claims are grown, at 5 s and at 20 s after the spawn; at 40 s the build is stopped.
//
//   node --import tsx bench/probes/forbidden-rule-probe.ts [--upstream] [CHECKOUT...] > summary.txt
//
// CHECKOUT is a checkout of this repository whose src/main.ts runs under its own tsx (default:
// this one); --upstream adds upstream's csi-resizer (built by test/infra/build-components.sh
// --with-upstream). Every build gets the same flags (--v=5, as deploy/kubernetes/deployment.yaml).
// Per build it prints the lines about the refused rule (forbidden, the retries, the RBAC lines) by
// severity and message, and the claims grown within the 40 s. OUT=<file> (default
// /tmp/forbidden-rule-probe.json) gets every line with its time after the spawn.
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { useCluster } from '../../test/cluster/test-cluster.js';
import { clientsFromKubeconfig } from '../../test/cluster/kube.js';
import { loadUpstreamResizerBin, repoRoot } from '../../test/cluster/components.js';
import { createNamespace, createStorageClass, provisionVolume, requestPvcSize, uniqueName } from '../../test/cluster/fixtures.js';
import { startMockDriver } from '../../test/cluster/mock-driver.js';
import { identityWithRunnerRole, runnerRules } from '../../test/cluster/rbac.js';
import { readPvc } from '../../test/support/api-reads.js';

const WINDOW_MS = 40_000;
const GROW_AT_MS = [5_000, 20_000];
/** A line about the refused rule: the API's refusal, a retry said, or an RBAC line (names here contain none of these words). */
const ABOUT_THE_RULE = /forbidden|Failed to watch|List\/watch|RBAC/i;

const args = process.argv.slice(2);
const builds: { name: string; command: string; args: string[]; cwd?: string }[] = [];
for (const arg of args.filter((a) => a !== '--upstream')) {
  const checkout = resolve(arg);
  if (!existsSync(join(checkout, 'src', 'main.ts'))) throw new Error(`${checkout} has no src/main.ts`);
  builds.push({ name: `ours ${checkout}`, command: process.execPath, args: ['--import', 'tsx', join(checkout, 'src', 'main.ts')], cwd: checkout });
}
if (builds.length === 0 && !args.includes('--upstream')) {
  builds.push({ name: `ours ${repoRoot}`, command: process.execPath, args: ['--import', 'tsx', join(repoRoot, 'src', 'main.ts')], cwd: repoRoot });
}
if (args.includes('--upstream')) builds.push({ name: 'upstream v2.3.0', command: await loadUpstreamResizerBin(), args: [] });

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);
const driver = await startMockDriver({ name: `${uniqueName('probe')}.mock.csi.k8s.io` });
const namespace = await createNamespace(admin, 'rz-rule-probe');
const storageClassName = uniqueName('rz-sc');
await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: driver.name });
const cleanups: (() => Promise<void>)[] = [];
const identity = await identityWithRunnerRole(admin, {
  namespace,
  resizerKubeconfigPath: cluster.resizerKubeconfigPath,
  rules: runnerRules().filter((r) => !(r.resources ?? []).includes('volumeattributesclasses')),
  after: (fn) => cleanups.push(fn),
});
await identity.untilAllowed('list', 'storage.k8s.io', 'volumeattributesclasses', false);

interface Run {
  build: string;
  lines: [number, string][];
  grown: number;
}
const runs: Run[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
try {
  for (const build of builds) {
    const claims: string[] = [];
    for (const _ of GROW_AT_MS) {
      const v = await provisionVolume(admin, driver.address, { namespace, size: '1Gi', storageClassName, driverName: driver.name });
      claims.push(v.pvc.metadata!.name!);
    }
    const spawnedAt = performance.now();
    const child = spawn(build.command, [...build.args, `--kubeconfig=${identity.kubeconfigPath}`, `--csi-address=${driver.address}`, '--v=5'], {
      cwd: build.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: [number, string][] = [];
    let pending = '';
    const onData = (chunk: Buffer) => {
      const at = Math.round(performance.now() - spawnedAt);
      pending += chunk.toString();
      for (let i = pending.indexOf('\n'); i >= 0; i = pending.indexOf('\n')) {
        lines.push([at, pending.slice(0, i)]);
        pending = pending.slice(i + 1);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    // The window itself is what is measured: its waits are the schedule, not a synchronisation.
    for (const [i, atMs] of GROW_AT_MS.entries()) {
      await sleep(atMs - (performance.now() - spawnedAt));
      await requestPvcSize(admin, namespace, claims[i]!, '2Gi', { retryUntilAdmittedMs: 10_000 });
    }
    await sleep(WINDOW_MS - (performance.now() - spawnedAt));
    let grown = 0;
    for (const claim of claims) if ((await readPvc(admin, namespace, claim)).status?.capacity?.['storage'] === '2Gi') grown++;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    runs.push({ build: build.name, lines: lines.filter(([at]) => at <= WINDOW_MS), grown });
    process.stderr.write(`${build.name}: done\n`);
  }
} finally {
  for (const fn of cleanups) await fn();
  await driver.stop();
}

writeFileSync(process.env['OUT'] ?? '/tmp/forbidden-rule-probe.json', JSON.stringify(runs, null, 1));
for (const run of runs) {
  const about = run.lines.filter(([, l]) => ABOUT_THE_RULE.test(l));
  const byMessage = new Map<string, number>();
  for (const [, l] of about) {
    const key = `${l[0]} ${/\] "((?:[^"\\]|\\.)*)"/.exec(l)?.[1] ?? l.slice(l.indexOf('] ') + 2, l.indexOf('] ') + 80)}`;
    byMessage.set(key, (byMessage.get(key) ?? 0) + 1);
  }
  const warningsAndErrors = run.lines.filter(([, l]) => /^[WE]\d{4}/.test(l)).length;
  console.log(
    `${run.build}: ${about.length} lines about the refused rule in ${WINDOW_MS / 1000} s (${warningsAndErrors} warnings and errors in all); claims grown: ${run.grown}/${GROW_AT_MS.length}`,
  );
  for (const [message, n] of byMessage) console.log(`  ${n} × ${message}`);
  for (const [at, l] of about) console.log(`    ${String(at).padStart(6)} ms  ${l.slice(0, 260)}`);
}
