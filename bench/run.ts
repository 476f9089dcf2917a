// Side-by-side benchmark of our resizer (compiled JS) and upstream's Go csi-resizer on one local
// control plane with the CSI mock driver, alternating A B A B per round with the same flags and
// the same RBAC identity. Prints a table and writes it as JSON under bench/results/.
//
//   npm run bench                      # everything, defaults (see --help)
//   npx tsx bench/run.ts --scenarios burst-high,latency --n 300 --rounds 2
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, release } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startCluster } from '../test/cluster/cluster.js';
import { componentsEnvPath, parseEnvFile, repoRoot } from '../test/cluster/components.js';
import { Api } from './lib/api.js';
import { AUDIT_POLICY, AuditReader } from './lib/audit.js';
import { DEFAULT_FLAGS, HIGH_FLAGS, type BenchOptions, type Ctx } from './lib/context.js';
import { Figures, ratio, summarize, table } from './lib/figures.js';
import { ensureStorageClass, teardown } from './lib/workload.js';
import { burst } from './scenarios/burst.js';
import { idle } from './scenarios/idle.js';
import { idleCpu } from './scenarios/idle-cpu.js';
import { latency } from './scenarios/latency.js';
import { startup } from './scenarios/startup.js';
import { autogrow } from './scenarios/autogrow.js';
import { parseAutoGrowShape, parseIntervalSeconds } from './lib/autogrow-plan.js';

const ALL = ['burst-default', 'burst-high', 'latency', 'startup', 'idle', 'idle-cpu', 'autogrow'] as const;
// Without --scenarios: all but autogrow, whose poll intervals make it long (docs/development.md).
const DEFAULT_SET: readonly string[] = ALL.filter((s) => s !== 'autogrow');
// The last level is the scale the performance targets name (docs/performance.md).
const DEFAULT_IDLE = '1000:10000,5000:30000,20000:100000';
const OURS_ONLY: ReadonlySet<string> = new Set(['autogrow']);
const ALIASES: Record<string, string[]> = { burst: ['burst-default', 'burst-high'], api: ['burst-high'], all: [...ALL] };

const HELP = `usage: tsx bench/run.ts [flags]
  --scenarios LIST   comma-separated: ${ALL.join(', ')} (aliases: burst, api, all);
                     default all but autogrow
  --rounds R         A B rounds per scenario (default 3, max 20)
  --n N              claims grown at once at QPS ${HIGH_FLAGS.qps}/${HIGH_FLAGS.burst} (default 1000, max 20000)
  --n-low N          claims grown at once at QPS ${DEFAULT_FLAGS.qps}/${DEFAULT_FLAGS.burst} (default 100, max 5000)
  --idle LEVELS      claims:pods levels for idle memory, cumulative (default ${DEFAULT_IDLE})
  --idle-cpu C:S     idle-cpu scenario: C claims, CPU read over S seconds at rest (default 300:60)
  --pods LIST        pods of each idle level, comma-separated (replaces the pods given in --idle)
  --latency-samples K  single resizes per implementation per run in the latency scenario, ours and
                     upstream interleaved, 2.5 s apart each (default 50, max 500)
  --startup-starts K start-ups per implementation in the startup scenario, order ABBA (default 8,
                     max 50; about 1 s each, so it does not follow --rounds)
  --autogrow C:K     autogrow scenario (ours only): C opted-in claims over K kubelet stand-ins
                     (default 2000:100)
  --autogrow-interval D  its --auto-grow-interval, 5s to 10m (default 1m, the flag's default)
  --autogrow-crossings M  claims crossing their threshold per auto-grow-on run, spread over one
                     interval (default 20)
  --workers W        --workers of both resizers (default 10)
  --timeout D        --timeout of both resizers (default 10s)
  --concurrency C    the harness's own parallel API requests when creating objects (default 16, max 64)
  --ours-entry PATH  our compiled entry point (default dist/main.js)
  --ours-node-args A extra node arguments for ours only, space-separated (e.g. --ours-node-args="--cpu-prof --cpu-prof-dir=/tmp/prof");
                     for profiling: they change what is measured, so never in a comparing run
  --out FILE         JSON output (default bench/results/<date>.json)
`;

function intFlag(v: string | undefined, def: number, min: number, max: number, name: string): number {
  if (v === undefined) return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer in [${min}, ${max}]`);
  return n;
}

function parseOptions(argv: string[]): BenchOptions & { out: string } {
  const { values } = parseArgs({
    args: argv,
    options: {
      scenarios: { type: 'string' },
      rounds: { type: 'string' },
      n: { type: 'string' },
      'n-low': { type: 'string' },
      idle: { type: 'string' },
      'idle-cpu': { type: 'string' },
      pods: { type: 'string' },
      'latency-samples': { type: 'string' },
      'startup-starts': { type: 'string' },
      autogrow: { type: 'string' },
      'autogrow-interval': { type: 'string' },
      'autogrow-crossings': { type: 'string' },
      workers: { type: 'string' },
      timeout: { type: 'string' },
      concurrency: { type: 'string' },
      'ours-entry': { type: 'string' },
      'ours-node-args': { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const scenarios = new Set<string>();
  for (const s of (values.scenarios ?? DEFAULT_SET.join(','))
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    const expanded = ALIASES[s] ?? [s];
    for (const e of expanded) {
      if (!(ALL as readonly string[]).includes(e)) throw new Error(`unknown scenario ${e}; known: ${ALL.join(', ')}`);
      scenarios.add(e);
    }
  }
  let idleLevels: Array<[number, number]> = (values.idle ?? DEFAULT_IDLE).split(',').map((lv) => {
    const [c, p] = lv.split(':').map(Number);
    if (!Number.isInteger(c) || !Number.isInteger(p) || c! < 1 || c! > 50_000 || p! < 0 || p! > 100_000) {
      throw new Error(`--idle level ${lv}: want claims:pods with claims in [1, 50000] and pods in [0, 100000]`);
    }
    return [c!, p!];
  });
  if (values.pods !== undefined) {
    const pods = values.pods.split(',').map((p) => intFlag(p, 0, 0, 100_000, 'pods'));
    idleLevels = idleLevels.map(([c], i) => [c, pods[Math.min(i, pods.length - 1)]!]);
  }
  const [cpuClaims, cpuSeconds] = (values['idle-cpu'] ?? '300:60').split(':').map(Number);
  if (!Number.isInteger(cpuClaims) || !Number.isInteger(cpuSeconds) || cpuClaims! < 0 || cpuClaims! > 20_000 || cpuSeconds! < 5 || cpuSeconds! > 600) {
    throw new Error('--idle-cpu: want claims:seconds with claims in [0, 20000] and seconds in [5, 600]');
  }
  const stamp = new Date()
    .toISOString()
    .replace(/[:.]/g, '-')
    .replace(/-\d{3}Z$/, 'Z');
  return {
    scenarios,
    rounds: intFlag(values.rounds, 3, 1, 20, 'rounds'),
    n: intFlag(values.n, 1000, 1, 20_000, 'n'),
    nLow: intFlag(values['n-low'], 100, 1, 5000, 'n-low'),
    idle: idleLevels,
    idleCpu: { claims: cpuClaims!, seconds: cpuSeconds! },
    latencySamples: intFlag(values['latency-samples'], 50, 1, 500, 'latency-samples'),
    startupStarts: intFlag(values['startup-starts'], 8, 1, 50, 'startup-starts'),
    autoGrow: {
      ...parseAutoGrowShape(values.autogrow ?? '2000:100'),
      intervalS: parseIntervalSeconds(values['autogrow-interval'] ?? '1m'),
      crossings: intFlag(values['autogrow-crossings'], 20, 1, 500, 'autogrow-crossings'),
    },
    workers: intFlag(values.workers, 10, 1, 100, 'workers'),
    timeout: values.timeout ?? '10s',
    concurrency: intFlag(values.concurrency, 16, 1, 64, 'concurrency'),
    oursEntry: values['ours-entry'] ?? join(repoRoot, 'dist', 'main.js'),
    oursNodeArgs: (values['ours-node-args'] ?? '').split(' ').filter(Boolean),
    upstreamBin: '',
    out: values.out ?? join(repoRoot, 'bench', 'results', `${stamp}.json`),
  };
}

function tryExec(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const env = parseEnvFile(readFileSync(componentsEnvPath(), 'utf8'));
  opts.upstreamBin = env.get('UPSTREAM_RESIZER_BIN') ?? '';
  // Every scenario but autogrow (ours only: upstream has no auto-grow) runs upstream too.
  const needsUpstream = [...opts.scenarios].some((s) => !OURS_ONLY.has(s));
  if (needsUpstream && (!opts.upstreamBin || !existsSync(opts.upstreamBin))) {
    throw new Error('the upstream resizer is not built: run bash scripts/setup.sh --with-upstream (npm run bench does)');
  }
  if (!existsSync(opts.oursEntry)) throw new Error(`${opts.oursEntry} does not exist: run npm run build (npm run bench does)`);
  const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

  const upstreamDeps = tryExec('go', ['version', '-m', opts.upstreamBin]);
  const machine = {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    loadavgAtStart: readFileSync('/proc/loadavg', 'utf8').trim(),
  };
  // A private snapshot (bench/snapshot.sh; docs/performance.md, "The latest full run") carries the commit it was built from.
  const snapCommit = existsSync(join(opts.oursEntry, '..', '..', 'COMMIT')) ? readFileSync(join(opts.oursEntry, '..', '..', 'COMMIT'), 'utf8').trim() : '';
  const versions = {
    ours: snapCommit
      ? `${JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version} (git ${snapCommit}, snapshot)`
      : `${JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version} (git ${tryExec('git', ['-C', repoRoot, 'rev-parse', '--short', 'HEAD'])}${tryExec('git', ['-C', repoRoot, 'status', '--porcelain', 'src']) ? ', src modified' : ''})`,
    node: process.version,
    upstream: `${env.get('UPSTREAM_RESIZER_VERSION') ?? '?'} (${/^\s*go\s+go[\d.]+|go[\d.]+/m.exec(upstreamDeps)?.[0]?.trim() ?? 'go ?'}, client-go ${/k8s\.io\/client-go\s+(v\S+)/.exec(upstreamDeps)?.[1] ?? '?'})`,
    kubernetes: env.get('K8S_VERSION') ?? '?',
    etcd: env.get('ETCD_VERSION') ?? '?',
    driver: 'Kubernetes e2e CSI mock driver (volumes in memory)',
  };
  log(`machine ${JSON.stringify(machine)}`);
  log(`versions ${JSON.stringify(versions)}`);

  const cluster = await startCluster({ auditPolicy: AUDIT_POLICY, progress: (l) => log(`cluster: ${l}`) });
  const logDir = mkdtempSync(join(cluster.dir, 'resizers-'));
  const api = new Api(cluster.adminKubeconfigPath, { maxSockets: opts.concurrency });
  const audit = new AuditReader(cluster.auditLogPath!);
  const figures = new Figures();
  const notes: string[] = [];
  const storageClass = 'bench-expandable';
  const ctx: Ctx = {
    cluster,
    api,
    audit,
    figures,
    opts,
    notes,
    storageClass,
    log,
    targets: {
      kubeconfig: cluster.resizerKubeconfigPath,
      csiAddress: cluster.csiAddress,
      oursEntry: opts.oursEntry,
      oursNodeArgs: opts.oursNodeArgs,
      upstreamBin: opts.upstreamBin,
      logDir,
    },
  };
  const started = Date.now();
  const namespaces: string[] = [];
  let failed: unknown;
  try {
    await ensureStorageClass(api, storageClass, cluster.driverName);
    // The resize admission plugin reads StorageClasses from an informer: give it a moment.
    await new Promise((r) => setTimeout(r, 1500));
    const run = async (name: string, ns: string, fn: () => Promise<void>) => {
      if (!opts.scenarios.has(name)) return;
      namespaces.push(ns);
      const t0 = Date.now();
      try {
        await fn();
      } finally {
        await teardown(api, ns, { concurrency: opts.concurrency, deadlineMs: 10 * 60_000 }).catch((e: unknown) => log(`teardown of ${ns}: ${String(e)}`));
      }
      log(`${name} took ${((Date.now() - t0) / 1000).toFixed(0)}s`);
    };
    await run('latency', 'bench-latency', () => latency(ctx));
    await run('startup', 'bench-startup', () => startup(ctx));
    await run('burst-high', `bench-burst-q${HIGH_FLAGS.qps}`, () => burst(ctx, HIGH_FLAGS, opts.n));
    await run('burst-default', `bench-burst-q${DEFAULT_FLAGS.qps}`, () => burst(ctx, DEFAULT_FLAGS, opts.nLow));
    await run('idle', 'bench-idle', () => idle(ctx));
    await run('idle-cpu', 'bench-idle-cpu', () => idleCpu(ctx));
    await run('autogrow', 'bench-autogrow', () => autogrow(ctx));
  } catch (err) {
    failed = err;
    log(`FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    log(`resizer logs kept in ${logDir}`);
  } finally {
    api.close();
    await cluster.stop({ keepLogs: failed !== undefined });
  }

  // The machine may be shared: the load over the run says how far wall times can be trusted.
  notes.push(`load average (1, 5, 15 min) at start ${machine.loadavgAtStart}; at end ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
  const result = {
    command: `tsx bench/run.ts ${process.argv.slice(2).join(' ')}`.trim(),
    date: new Date().toISOString(),
    durationS: Math.round((Date.now() - started) / 1000),
    machine,
    versions,
    settings: {
      rounds: opts.rounds,
      n: opts.n,
      nLow: opts.nLow,
      idle: opts.idle,
      idleCpu: opts.idleCpu,
      latencySamples: opts.latencySamples,
      startupStarts: opts.startupStarts,
      autoGrow: opts.autoGrow,
      workers: opts.workers,
      timeout: opts.timeout,
      defaultRate: DEFAULT_FLAGS,
      highRate: HIGH_FLAGS,
      order: 'ours, upstream per round; latency: both running, samples alternating ABBA; startup: starts alternating ABBA',
    },
    notes,
    complete: failed === undefined,
    figures: figures.list.map((f) => ({
      ...f,
      ours: summarize(f, 'ours'),
      upstream: summarize(f, 'upstream'),
      ratio: ratio(f),
    })),
  };
  process.stdout.write(`\nmachine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Linux ${machine.kernel}\n`);
  process.stdout.write(
    `versions: ours ${versions.ours} on node ${versions.node}; upstream ${versions.upstream}; kube-apiserver ${versions.kubernetes}; etcd ${versions.etcd}\n`,
  );
  process.stdout.write(
    `settings: rounds ${opts.rounds}, N ${opts.n} (QPS ${HIGH_FLAGS.qps}/${HIGH_FLAGS.burst}), N ${opts.nLow} (QPS ${DEFAULT_FLAGS.qps}/${DEFAULT_FLAGS.burst}), idle ${opts.idle.map(([c, p]) => `${c}:${p}`).join(',')}, workers ${opts.workers}, timeout ${opts.timeout}\n\n`,
  );
  process.stdout.write(table(figures.list) + '\n');
  for (const n of notes) process.stdout.write(`note: ${n}\n`);
  mkdirSync(join(repoRoot, 'bench', 'results'), { recursive: true });
  writeFileSync(opts.out, JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(`\nwritten to ${opts.out} (${result.durationS}s)\n`);
  if (failed !== undefined) process.exitCode = 1;
}

// Ctrl-C or a runner's SIGTERM: exit through process.exit so the exit hooks of test/cluster kill
// every resizer and component this run started and remove the etcd data.
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));

main().catch((err: unknown) => {
  process.stderr.write(`[bench] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
