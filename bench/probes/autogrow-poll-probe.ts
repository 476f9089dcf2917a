// Where the auto-grow poll's memory goes (a diagnostic beside bench/scenarios/autogrow.ts): the
// kubelet usage source alone, without the rest of the resizer, so one process's RSS and V8 heap
// answer for the poll. One local control plane (the stand-ins' TokenReview and
// SubjectAccessReview), K kubelet stand-ins shaped as the scenario's nodes (C opted-in claims over
// them, 5 plain claims and 15 pods without claims per node); then, per round, one child per
// variant at once: `off` (no poll) and `on:<tree>` (KubeletUsageSource.readUsage of that tree's
// src/ every interval, the last report kept, as UsagePoll keeps it; `on:<tree>@<n>` asks n
// kubelets at once instead of the flag's default 16). Every child holds the same
// ballast of small objects, a stand-in for the resizer's caches, so V8 sizes its heap as it would
// there, and runs with the shipped node flags plus --expose-gc. Each child's RSS (and its
// anonymous part) is averaged over whole intervals from mid-interval, as the scenario does; then
// V8's heap is read before and after one full GC, and the RSS by mapping.
//
// CPU per poll is the child's CPU time over the window, less the `off` child's, per poll.
//
//   node --import tsx bench/probes/autogrow-poll-probe.ts --trees /work/main,. --interval 30 --rounds 2
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startCluster } from '../../test/cluster/cluster.js';
import { repoRoot } from '../../test/cluster/components.js';
import { clientsFromKubeconfig } from '../../test/cluster/kube.js';
import { applyRbac } from '../../test/cluster/rbac.js';
import { spawnLogged } from '../../test/cluster/process.js';
import { NODE_FLAGS } from '../../scripts/node-flags.js';
import { sleep } from '../lib/api.js';
import { readProc } from '../lib/resizer.js';
import { KubeletFleet } from '../lib/kubelet-fleet.js';
import { GI } from '../lib/workload.js';
import { rssByMapping } from './rss-by-mapping.js';

const { values } = parseArgs({
  options: {
    child: { type: 'string' },
    trees: { type: 'string', default: '.' },
    claims: { type: 'string', default: '2000' },
    nodes: { type: 'string', default: '80' },
    interval: { type: 'string', default: '30' },
    intervals: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '1' },
    ballast: { type: 'string', default: '20' },
    'trace-gc': { type: 'boolean', default: false },
    out: { type: 'string' },
  },
  allowPositionals: true,
});

const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
const round1 = (x: number) => Math.round(x * 10) / 10;

interface Plan {
  kubeconfig: string;
  caPath: string;
  intervalMs: number;
  ballastMiB: number;
  nodes: Array<{ name: string; port: number; claims: string[] }>;
}

if (values.child !== undefined) await child(values.child);
else await parent();

/** A child: `off` holds the ballast; `on:<tree>` also polls through that tree's kubelet source. */
async function child(variant: string): Promise<void> {
  const plan = JSON.parse(readFileSync(process.env['PROBE_PLAN']!, 'utf8')) as Plan;
  // Objects of a few strings and numbers, as an informer cache holds them.
  const ballast: object[] = [];
  for (let i = 0; ballast.length * 200 < plan.ballastMiB * 2 ** 20; i++) ballast.push({ name: `obj-${i}`, ns: 'ns', rv: String(i), n: i, tags: [i, i + 1] });
  (globalThis as Record<string, unknown>)['ballast'] = ballast;
  if (!variant.startsWith('on:')) {
    setInterval(() => undefined, 60_000);
    return;
  }
  const [tree, concurrency] = variant.slice(3).split('@') as [string, string | undefined];
  const { KubeletUsageSource } = (await import(join(tree, 'src/usage/kubelet-source.ts'))) as typeof import('../../src/usage/kubelet-source.js');
  const { fromKubeconfigFile } = (await import(join(tree, 'src/kube/wire/kubeconfig.ts'))) as typeof import('../../src/kube/wire/kubeconfig.js');
  const source = new KubeletUsageSource({
    kubeConfig: await fromKubeconfigFile(plan.kubeconfig),
    caFile: plan.caPath,
    insecureSkipTlsVerify: false,
    timeoutMs: 10_000,
    concurrency: Number(concurrency ?? 16),
  });
  const asked = plan.nodes.map((n) => ({
    node: {
      metadata: { name: n.name },
      status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: n.port } } },
    },
    claims: n.claims.map((key) => ({ namespace: key.slice(0, key.indexOf('/')), name: key.slice(key.indexOf('/') + 1) })),
  }));
  let kept: unknown;
  for (;;) {
    const started = Date.now();
    const report = await source.readUsage(asked, AbortSignal.timeout(60_000));
    kept = report.claims;
    const sampled = [...report.claims.values()].filter((c) => c.kind === 'sampled').length;
    process.stdout.write(`poll ${sampled} sampled, ${report.failures.length} failures, ${Date.now() - started} ms\n`);
    (globalThis as Record<string, unknown>)['kept'] = kept;
    await sleep(Math.max(0, started + plan.intervalMs - Date.now()));
  }
}

async function parent(): Promise<void> {
  const trees = values.trees!.split(',').map((t) => {
    const [path, concurrency] = t.split('@') as [string, string | undefined];
    return concurrency === undefined ? resolve(path) : `${resolve(path)}@${concurrency}`;
  });
  const [claims, nodeCount, intervalS, intervals, rounds, ballastMiB] = [
    values.claims,
    values.nodes,
    values.interval,
    values.intervals,
    values.rounds,
    values.ballast,
  ].map(Number) as [number, number, number, number, number, number];
  const intervalMs = intervalS * 1000;
  const log = (l: string) => process.stderr.write(`[autogrow-poll-probe] ${l}\n`);
  const dir = mkdtempSync('/tmp/autogrow-poll-probe-');
  const preload = join(dir, 'heap-on-signal.mjs');
  writeFileSync(
    preload,
    `import v8 from 'node:v8'; import { writeFileSync } from 'node:fs';
const reading = () => ({ heap: v8.getHeapStatistics(), spaces: v8.getHeapSpaceStatistics(), mem: process.memoryUsage() });
process.on('SIGUSR2', () => { const before = reading(); globalThis.gc(); writeFileSync('${dir}/heap-' + process.pid + '.json', JSON.stringify({ before, after: reading() })); });\n`,
  );
  const cluster = await startCluster();
  const results: Array<Record<string, unknown>> = [];
  let fleet: KubeletFleet | undefined;
  try {
    await applyRbac(clientsFromKubeconfig(cluster.adminKubeconfigPath), join(repoRoot, 'deploy', 'kubernetes', 'auto-grow', 'rbac-auto-grow.yaml'));
    const capacityBytes = 10n * GI;
    const perNode = Math.ceil(claims / nodeCount);
    const volume = (claim: string, j: number) => ({
      namespace: 'bench',
      claim,
      pod: `pod-${claim}`,
      capacityBytes,
      availableBytes: capacityBytes / 2n + BigInt(j),
      inodes: 655_360n,
      inodesFree: 589_824n,
    });
    const fleetNodes = Array.from({ length: nodeCount }, (_, i) => ({
      name: `node-${i}`,
      volumes: [
        ...Array.from({ length: perNode }, (_, k) => volume(`ag-${i * perNode + k}`, k)),
        ...Array.from({ length: 5 }, (_, k) => volume(`plain-${i * 5 + k}`, k)),
      ],
    }));
    fleet = await KubeletFleet.start({ nodes: fleetNodes, fillerPods: 15, reviewerKubeconfigPath: cluster.adminKubeconfigPath, dir, concurrency: 8 });
    const ports = fleet.ports();
    const plan: Plan = {
      kubeconfig: cluster.resizerKubeconfigPath,
      caPath: fleet.caPath,
      intervalMs,
      ballastMiB,
      nodes: fleetNodes.map((n) => ({
        name: n.name,
        port: ports.get(n.name)!,
        claims: n.volumes.filter((v) => v.claim.startsWith('ag-')).map((v) => `bench/${v.claim}`),
      })),
    };
    const planPath = join(dir, 'plan.json');
    writeFileSync(planPath, JSON.stringify(plan));
    const variants = ['off', ...trees.map((t) => `on:${t}`)];
    for (let round = 1; round <= rounds; round++) {
      const children = variants.map((variant) => {
        const proc = spawnLogged({
          name: `probe ${variant}`,
          command: process.execPath,
          args: [
            ...NODE_FLAGS,
            '--expose-gc',
            ...(values['trace-gc'] ? ['--trace-gc'] : []),
            '--import',
            preload,
            '--import',
            'tsx',
            join(repoRoot, 'bench/probes/autogrow-poll-probe.ts'),
            '--child',
            variant,
          ],
          env: { ...process.env, PROBE_PLAN: planPath },
          logPath: join(dir, `${variant.replace(/[^a-z0-9]+/gi, '_')}-${round}.log`),
        });
        return { variant, proc, logPath: join(dir, `${variant.replace(/[^a-z0-9]+/gi, '_')}-${round}.log`) };
      });
      try {
        // The first poll, then mid-interval: whole intervals from here hold one poll each.
        await sleep(intervalMs + intervalMs / 2);
        const rss = new Map(children.map((c) => [c.variant, [] as Array<{ rss: number; anon: number }>]));
        const cpu0 = new Map(children.map((c) => [c.variant, readProc(c.proc.pid).cpuSeconds]));
        const log0 = new Map(children.map((c) => [c.variant, readFileSync(c.logPath, 'utf8').length]));
        for (const until = Date.now() + intervals * intervalMs; Date.now() < until;) {
          for (const c of children) {
            const p = readProc(c.proc.pid);
            rss.get(c.variant)!.push({ rss: p.rssKiB / 1024, anon: p.rssAnonKiB / 1024 });
          }
          await sleep(250);
        }
        const cpuMs = new Map(children.map((c) => [c.variant, (readProc(c.proc.pid).cpuSeconds - cpu0.get(c.variant)!) * 1000]));
        for (const c of children) {
          const s = rss.get(c.variant)!;
          const mean = (f: (x: { rss: number; anon: number }) => number) => round1(s.reduce((a, x) => a + f(x), 0) / s.length);
          const hwm = readProc(c.proc.pid).hwmKiB / 1024;
          const heap = await heapReading(dir, c.proc.pid);
          const cpuPerPollMs = Math.round((cpuMs.get(c.variant)! - cpuMs.get('off')!) / intervals);
          const gcLines = readFileSync(c.logPath, 'utf8').slice(log0.get(c.variant)).split('\n');
          const gc = {
            scavenges: gcLines.filter((l) => l.includes('Scavenge')).length,
            markCompacts: gcLines.filter((l) => l.includes('Mark-Compact')).length,
          };
          const r = {
            round,
            variant: c.variant,
            cpuPerPollMs,
            ...(values['trace-gc'] ? { gcInWindow: gc } : {}),
            rssMeanMiB: mean((x) => x.rss),
            anonMeanMiB: mean((x) => x.anon),
            hwmMiB: round1(hwm),
            mappings: rssByMapping(c.proc.pid),
            ...heap,
          };
          results.push(r);
          log(JSON.stringify(r));
        }
      } finally {
        for (const c of children) await c.proc.stop(5000);
      }
    }
  } finally {
    await fleet?.close();
    await cluster.stop();
  }
  const out = values.out ?? join(repoRoot, 'bench', 'results', `autogrow-poll-probe-${new Date().toISOString().slice(0, 16).replace(/[:T]/g, '')}.json`);
  writeFileSync(
    out,
    `${JSON.stringify({ command: `tsx bench/probes/autogrow-poll-probe.ts ${process.argv.slice(2).join(' ')}`, date: new Date().toISOString(), nodeFlags: NODE_FLAGS, results }, null, 2)}\n`,
  );
  log(`wrote ${out}`);
  rmSync(dir, { recursive: true, force: true });
}

async function heapReading(dir: string, pid: number): Promise<Record<string, unknown>> {
  const file = join(dir, `heap-${pid}.json`);
  rmSync(file, { force: true });
  const rssBefore = readProc(pid).rssKiB / 1024;
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 50 && !existsSync(file); i++) await sleep(100);
  await sleep(200);
  const { before, after } = JSON.parse(readFileSync(file, 'utf8'));
  const spaces = (s: Array<{ space_name: string; space_used_size: number; space_size: number }>) =>
    Object.fromEntries(s.filter((x) => x.space_size > 0).map((x) => [x.space_name, `${mib(x.space_used_size)}/${mib(x.space_size)}`]));
  return {
    beforeGc: {
      rssMiB: round1(rssBefore),
      heapTotalMiB: mib(before.heap.total_heap_size),
      heapUsedMiB: mib(before.heap.used_heap_size),
      externalMiB: mib(before.mem.external),
      arrayBuffersMiB: mib(before.mem.arrayBuffers),
      spaces: spaces(before.spaces),
    },
    afterGc: {
      rssMiB: round1(readProc(pid).rssKiB / 1024),
      heapTotalMiB: mib(after.heap.total_heap_size),
      heapUsedMiB: mib(after.heap.used_heap_size),
      spaces: spaces(after.spaces),
    },
  };
}
