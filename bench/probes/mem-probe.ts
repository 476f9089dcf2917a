// What our resizer's memory consists of, and what runtime settings change it: one local control
// plane, one set of objects, and our resizer started once per variant (node flags and environment),
// alternating variants per round. Per run: RSS at rest after the caches synced (in-use handling off,
// few objects), and CPU and peak RSS over a burst; with --diag, where the RSS lives (smaps: the
// node binary, glibc's main heap and per-thread arenas, other anonymous mappings, stacks) and V8's
// heap spaces (read through a preloaded module on SIGUSR2, so only in --diag runs).
//
//   node --import tsx bench/probes/mem-probe.ts --variants bench/mem-variants.json --idle 1000:10000 --n 1000 --rounds 2
// Bursts: --n N at QPS 200 and --n-low N at QPS 5, each after --warmup K unmeasured bursts in the
// same process (0 by default: a fresh process, as bench/run.ts measures); per thread CPU in the output.
// A variants file is [{ "name": "...", "nodeArgs": ["--max-semi-space-size=2"], "env": { "K": "V" } }].
import { readFileSync, readdirSync, writeFileSync, mkdtempSync, existsSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startCluster } from '../../test/cluster/cluster.js';
import { spawnLogged, type Managed } from '../../test/cluster/process.js';
import { repoRoot } from '../../test/cluster/components.js';
import { Api, sleep } from '../lib/api.js';
import { commonArgs, podEnv, readProc, type ResizerTargets } from '../lib/resizer.js';
import { GI, Tracker, createNamespace, createPods, ensureStorageClass, growAll, provisionBulk, teardown } from '../lib/workload.js';

interface Variant {
  name: string;
  nodeArgs: string[];
  env?: Record<string, string>;
  entry?: string;
}

const { values } = parseArgs({
  options: {
    variants: { type: 'string' },
    idle: { type: 'string', default: '1000:10000' },
    n: { type: 'string', default: '1000' },
    'n-low': { type: 'string', default: '0' },
    warmup: { type: 'string', default: '0' },
    settle: { type: 'string', default: '0' },
    rounds: { type: 'string', default: '2' },
    diag: { type: 'boolean', default: false },
    entry: { type: 'string', default: join(repoRoot, 'dist', 'main.js') },
    pagemap: { type: 'string' },
    out: { type: 'string' },
    'in-use': { type: 'string', default: 'false' },
  },
});
const variants = JSON.parse(readFileSync(values.variants!, 'utf8')) as Variant[];
const [idleClaims, idlePods] = values.idle!.split(':').map(Number) as [number, number];
const n = Number(values.n);
const nLow = Number(values['n-low']);
const rounds = Number(values.rounds);
const warmups = Number(values.warmup);
const inUseSettings = values['in-use']!.split(',').map((s) => s === 'true');
const log = (l: string) => process.stderr.write(`[probe] ${l}\n`);
const diagDir = mkdtempSync('/tmp/mem-probe-');
const preload = join(diagDir, 'heap-on-signal.mjs');
writeFileSync(
  preload,
  `import v8 from 'node:v8'; import { writeFileSync, readdirSync } from 'node:fs';
process.on('SIGUSR2', () => writeFileSync('${diagDir}/heap-' + process.pid + '.json', JSON.stringify({
  heap: v8.getHeapStatistics(), spaces: v8.getHeapSpaceStatistics(), mem: process.memoryUsage(), threads: readdirSync('/proc/self/task').length })));\n`,
);

/** RSS by where it lives, from /proc/PID/smaps (KiB). */
function smapsBreakdown(pid: number): Record<string, number> {
  const text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  const maps: Array<{ start: number; end: number; perms: string; name: string; rss: number; anon: number }> = [];
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      maps.push({ start: parseInt(head[1]!, 16), end: parseInt(head[2]!, 16), perms: head[3]!, name: head[4]!, rss: 0, anon: 0 });
      continue;
    }
    const kv = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line);
    if (kv && maps.length) maps[maps.length - 1]![kv[1] === 'Rss' ? 'rss' : 'anon'] += Number(kv[2]);
  }
  const out: Record<string, number> = {};
  const add = (k: string, v: number) => {
    out[k] = (out[k] ?? 0) + v;
  };
  const ARENA = 64 * 1024 * 1024;
  for (let i = 0; i < maps.length; i++) {
    const m = maps[i]!;
    if (m.name.endsWith('/node')) (add(`node binary ${m.perms} (file)`, m.rss - m.anon), add('node binary (anon: relocations, .data/.bss)', m.anon));
    else if (m.name === '[heap]') add('malloc main arena ([heap])', m.rss);
    else if (m.name === '[stack]') add('stacks', m.rss);
    else if (m.name.startsWith('/')) add('other files (libs, ICU)', m.rss);
    else if (m.name.startsWith('[')) add(`other ${m.name}`, m.rss);
    else {
      // A glibc thread arena: a 64 MiB-aligned reservation, its used part rw-p followed by ---p.
      const next = maps[i + 1];
      const isArena = m.start % ARENA === 0 && next !== undefined && next.start === m.end && next.perms.startsWith('---') && next.end - m.start === ARENA;
      add(isArena ? 'malloc thread arenas' : 'other anonymous (V8 heap pages, large mallocs, thread stacks)', m.rss);
    }
  }
  return out;
}

async function diagnose(pid: number): Promise<Record<string, unknown>> {
  const file = join(diagDir, `heap-${pid}.json`);
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 50 && !existsSync(file); i++) await sleep(100);
  const heap = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const rollup = Object.fromEntries(
    readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
      .split('\n')
      .map((l) => /^(\w+):\s+(\d+) kB/.exec(l))
      .filter((m) => m !== null)
      .map((m) => [m![1], Number(m![2])]),
  );
  const threads = readdirSync(`/proc/${pid}/task`).map((t) => readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim());
  // An external script that attributes the node binary's resident pages to symbols (slow: diag only).
  const pagemap = values.pagemap
    ? execFileSync(
        values.pagemap.endsWith('.py') ? 'python3' : values.pagemap,
        values.pagemap.endsWith('.py') ? [values.pagemap, String(pid)] : [String(pid)],
        { encoding: 'utf8', timeout: 120_000 },
      )
    : undefined;
  return { rollup, smaps: smapsBreakdown(pid), threads, v8: heap, pagemap };
}

/** CPU seconds per thread name (main thread, V8 workers, libuv pool...) from each /proc/PID/task/TID/schedstat (ns). */
function threadCpuS(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      const name = tid === String(pid) ? 'main' : readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      out.set(name, (out.get(name) ?? 0) + ns / 1e9);
    } catch {
      /* the thread ended */
    }
  }
  return out;
}

async function stableRssKiB(pid: number): Promise<number> {
  const window: number[] = [];
  const t0 = Date.now();
  for (;;) {
    window.push(readProc(pid).rssKiB);
    if (window.length > 6) window.shift();
    const lo = Math.min(...window),
      hi = Math.max(...window);
    if ((window.length === 6 && hi - lo <= lo * 0.02) || Date.now() - t0 > 60_000) return window[window.length - 1]!;
    await sleep(500);
  }
}

async function main(): Promise<void> {
  const cluster = await startCluster({ progress: (l) => log(`cluster: ${l}`) });
  const api = new Api(cluster.adminKubeconfigPath, { maxSockets: 16 });
  const logDir = mkdtempSync(join(cluster.dir, 'resizers-'));
  const targets: ResizerTargets = {
    kubeconfig: cluster.resizerKubeconfigPath,
    csiAddress: cluster.csiAddress,
    oursEntry: values.entry!,
    upstreamBin: '',
    logDir,
  };
  const results: Array<Record<string, unknown>> = [];
  let launches = 0;
  const start = (v: Variant, qps: number, burst: number, inUse: boolean): Managed => {
    launches++;
    const args = commonArgs(targets, { workers: 10, qps, burst, timeout: '10s', handleVolumeInUseError: inUse });
    const nodeArgs = [...v.nodeArgs, ...(values.diag ? ['--import', preload] : [])];
    return spawnLogged({
      name: `ours ${v.name}`,
      command: process.execPath,
      args: [...nodeArgs, v.entry ?? values.entry!, ...args],
      logPath: join(logDir, `${launches}-${v.name.replace(/\W+/g, '_')}.log`),
      env: podEnv(v.env),
    });
  };
  const storageClass = 'probe';
  try {
    await ensureStorageClass(api, storageClass, cluster.driverName);
    await sleep(1500);
    const common = { sizeGi: 1, storageClass, driverName: cluster.driverName, concurrency: 16, deadlineMs: 30 * 60_000 };
    const csi = { protoPath: cluster.driver.protoPath, address: cluster.csiAddress };
    const space = async (ns: string, count: number) => {
      await createNamespace(api, ns);
      const [canary] = await provisionBulk(api, { ...common, ns, count: 1, prefix: 'canary', csi });
      const vols = count > 0 ? await provisionBulk(api, { ...common, ns, count, prefix: 'vol', csi }) : [];
      return { ns, canary: canary!.pvc, claims: vols.map((v) => v.pvc), tracker: await Tracker.start(api, ns), canaryGi: 1, sizeGi: 1 };
    };
    type Space = Awaited<ReturnType<typeof space>>;
    const sync = async (s: Space, p: Managed) => {
      s.canaryGi++;
      await api.mergePatch(`/api/v1/namespaces/${s.ns}/persistentvolumeclaims/${s.canary}`, {
        spec: { resources: { requests: { storage: `${s.canaryGi}Gi` } } },
      });
      const r = await Promise.race([s.tracker.waitAll([s.canary], BigInt(s.canaryGi) * GI, 180_000).then(() => 'ok'), p.exited.then((c) => `exited ${c}`)]);
      if (r !== 'ok') throw new Error(`resizer ${r} (log ${p.logPath})`);
    };
    if (idleClaims > 0) {
      const s = await space('probe-idle', idleClaims);
      if (idlePods > 0) await createPods(api, { ns: s.ns, count: idlePods, prefix: 'pod', claims: s.claims, concurrency: 16, deadlineMs: 20 * 60_000 });
      log(`idle: ${idleClaims} claims, ${idlePods} pods`);
      for (let round = 1; round <= rounds; round++) {
        for (const v of variants) {
          for (const inUse of inUseSettings) {
            const p = start(v, 5, 10, inUse);
            try {
              await sync(s, p);
              const rss = await stableRssKiB(p.pid);
              // --settle S: RSS again S seconds later (V8's memory reducer collects an idle heap some seconds after its last full GC).
              const settleS = Number(values.settle);
              const settled = settleS > 0 ? (await sleep(settleS * 1000), readProc(p.pid).rssKiB / 1024) : undefined;
              const proc = readProc(p.pid);
              const d = values.diag ? await diagnose(p.pid) : {};
              results.push({
                scenario: 'idle',
                inUse,
                variant: v.name,
                round,
                rssMiB: rss / 1024,
                ...(settled === undefined ? {} : { rssSettledMiB: settled }),
                hwmMiB: proc.hwmKiB / 1024,
                cpuS: proc.cpuSeconds,
                ...d,
              });
              log(
                `idle inuse=${inUse} ${v.name} r${round}: rss ${(rss / 1024).toFixed(1)} MiB${settled === undefined ? '' : ` (${settleS} s later ${settled.toFixed(1)})`} hwm ${(proc.hwmKiB / 1024).toFixed(1)} cpu ${proc.cpuSeconds.toFixed(2)}`,
              );
            } finally {
              await p.stop(15_000);
            }
          }
        }
      }
      s.tracker.stop();
      await teardown(api, s.ns, { concurrency: 16, deadlineMs: 10 * 60_000 });
    }
    for (const [label, count, qps, burst] of [
      ['burst-high', n, 200, 400],
      ['burst-low', nLow, 5, 10],
    ] as const) {
      if (count <= 0) continue;
      const s = await space(`probe-${label}`, count);
      for (let round = 1; round <= rounds; round++) {
        for (const v of variants) {
          const p = start(v, qps, burst, true);
          try {
            await sync(s, p);
            // --warmup K: K unmeasured bursts first, in the same process (what the measured burst
            // costs once V8 has compiled and optimised the resize path).
            for (let w = 0; w < warmups; w++) {
              s.sizeGi++;
              await growAll(api, s.ns, s.claims, s.sizeGi, 16);
              await s.tracker.waitAll(s.claims, BigInt(s.sizeGi) * GI, 20 * 60_000);
            }
            await sleep(1000);
            const before = readProc(p.pid);
            const threadsBefore = threadCpuS(p.pid);
            s.sizeGi++;
            await growAll(api, s.ns, s.claims, s.sizeGi, 16);
            await s.tracker.waitAll(s.claims, BigInt(s.sizeGi) * GI, 20 * 60_000);
            await sleep(1500);
            const after = readProc(p.pid);
            const threadCpu = Object.fromEntries(
              [...threadCpuS(p.pid)].map(([k, v]) => [k, Number((v - (threadsBefore.get(k) ?? 0)).toFixed(4))]).filter(([, v]) => (v as number) > 0),
            );
            const d = values.diag ? await diagnose(p.pid) : {};
            results.push({
              scenario: label,
              variant: v.name,
              round,
              warmups,
              cpuS: after.cpuSeconds - before.cpuSeconds,
              sysS: after.sysSeconds - before.sysSeconds,
              hwmMiB: after.hwmKiB / 1024,
              rssAfterMiB: after.rssKiB / 1024,
              threadCpuS: threadCpu,
              ...d,
            });
            log(
              `${label} ${v.name} r${round}: cpu ${(after.cpuSeconds - before.cpuSeconds).toFixed(2)} s (sys ${(after.sysSeconds - before.sysSeconds).toFixed(2)}), hwm ${(after.hwmKiB / 1024).toFixed(1)} MiB, rss after ${(after.rssKiB / 1024).toFixed(1)}, load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}, threads ${JSON.stringify(threadCpu)}`,
            );
          } finally {
            await p.stop(15_000);
          }
        }
      }
      s.tracker.stop();
      await teardown(api, s.ns, { concurrency: 16, deadlineMs: 10 * 60_000 });
    }
  } finally {
    api.close();
    await cluster.stop();
    if (values.out) writeFileSync(values.out, JSON.stringify(results, null, 2) + '\n');
  }
  // Per variant and figure: the values of all rounds.
  const summary = new Map<string, number[]>();
  for (const r of results) {
    const k = `${String(r.scenario)}${r.inUse === undefined ? '' : ` inuse=${String(r.inUse)}`} | ${String(r.variant)}`;
    for (const f of ['rssMiB', 'rssSettledMiB', 'hwmMiB', 'cpuS'] as const) {
      if (typeof r[f] === 'number') summary.set(`${k} | ${f}`, [...(summary.get(`${k} | ${f}`) ?? []), r[f] as number]);
    }
  }
  for (const [k, vs] of summary) process.stdout.write(`${k}: ${vs.map((x) => x.toFixed(2)).join(' ')}\n`);
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));
main().catch((err: unknown) => {
  process.stderr.write(`[probe] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
