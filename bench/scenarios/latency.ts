// Scenario 4. One claim grown at a time on an idle, synced resizer: from the edit (the PATCH sent)
// to the PV showing the new capacity, and to the PVC's final state, both seen through a watch.
//
// Both resizers run at once and their samples alternate one by one (ours, upstream, upstream,
// ours, ...), so a change in the machine's load hits both alike. Each serves its own instance of
// the mock driver under its own name, with its own StorageClass and claims, so neither acts on the
// other's (the drivers swap every round). Only one runs at a time: the other is held with SIGSTOP
// and resumed with SIGCONT RESUME_SETTLE_MS before its own sample, time to read (and skip) the
// other's changes. Each implementation grows one of its claims every 2 × SAMPLE_SLOT_MS, so its
// token bucket is full again before each sample. Samples of all runs are pooled per
// implementation; median, p90 and p99 (nearest rank) of the pool.
//
// With BENCH_LATENCY_TRACE=<file>, one JSON line per sample is appended to the file: when it
// started (CLOCK_MONOTONIC µs, the clock of a --cpu-prof profile's timestamps), its two latencies,
// and per thread of the resizer (by name) the ns it ran and waited for a CPU during the sample
// (/proc/<pid>/task/*/schedstat) and how many sockets it opened, to tell the main thread from GC or compiler threads and from load.
import { appendFileSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { startMockDriver, type MockDriver } from '../../test/cluster/mock-driver.js';
import { sleep } from '../lib/api.js';
import { IMPLS, pairOrder, type Impl, type RunningResizer } from '../lib/resizer.js';
import { DEFAULT_FLAGS, flags, gi, makeWorkspace, start, syncViaCanary, type Ctx, type Workspace, type WorkspaceDriver } from '../lib/context.js';
import { ensureStorageClass, teardown, type Volume } from '../lib/workload.js';

/** One implementation's turn: resumed, RESUME_SETTLE_MS to catch up, one sample, then held. */
export const SAMPLE_SLOT_MS = 1250;
const RESUME_SETTLE_MS = 900;
const SECOND_DRIVER = 'latency-b.csi.k8s.io';
const SECOND_NS = 'bench-latency-b';

/** Holds a resizer (SIGSTOP) or lets it run again (SIGCONT); a process that has exited is left alone. */
function hold(r: RunningResizer, held: boolean): void {
  if (r.proc.hasExited()) return;
  process.kill(r.proc.pid, held ? 'SIGSTOP' : 'SIGCONT');
}

interface Lane {
  ws: Workspace;
  address: string;
}

export async function latency(ctx: Ctx): Promise<void> {
  const k = ctx.opts.latencySamples;
  const scenario = `latency (${k} per run, qps=${DEFAULT_FLAGS.qps}/${DEFAULT_FLAGS.burst})`;
  ctx.log(`== ${scenario}, ours and upstream interleaved, one driver each`);
  let second: MockDriver | undefined;
  const lanes: Lane[] = [];
  try {
    second = await startMockDriver({ name: SECOND_DRIVER });
    const secondDriver: WorkspaceDriver = { name: SECOND_DRIVER, address: second.address, storageClass: 'bench-latency-b' };
    await ensureStorageClass(ctx.api, secondDriver.storageClass, SECOND_DRIVER);
    lanes.push({ ws: await makeWorkspace(ctx, 'bench-latency', k), address: ctx.cluster.csiAddress });
    lanes.push({ ws: await makeWorkspace(ctx, SECOND_NS, k, secondDriver), address: second.address });
    for (let round = 1; round <= ctx.opts.rounds; round++) {
      // Round 1: ours on the cluster's driver, upstream on the second; round 2 the other way, ...
      const laneOf = (impl: Impl) => lanes[(IMPLS.indexOf(impl) + round - 1) % 2]!;
      for (const lane of lanes) lane.ws.sizeGi += 1;
      const running = new Map<Impl, RunningResizer>();
      try {
        // Each syncs alone: the one started first is held while the next grows its canary.
        for (const impl of IMPLS) {
          const r = start(ctx, impl, flags(ctx, DEFAULT_FLAGS), 'latency', laneOf(impl).address);
          running.set(impl, r);
          await syncViaCanary(ctx, laneOf(impl).ws, r);
          hold(r, true);
        }
        const pvMs: Record<Impl, number[]> = { ours: [], upstream: [] };
        const pvcMs: Record<Impl, number[]> = { ours: [], upstream: [] };
        /** When each sample started, in seconds since its resizer was spawned (to find what a slow one met). */
        const ageS: Record<Impl, number[]> = { ours: [], upstream: [] };
        /** With a trace: ms run during each sample by processes outside the bench (another helper's work, ...). */
        const foreignMs: Record<Impl, number[]> = { ours: [], upstream: [] };
        for (let i = 0; i < k; i++) {
          for (const impl of pairOrder(i)) {
            const r = running.get(impl)!;
            const { ws } = laneOf(impl);
            hold(r, false);
            await sleep(RESUME_SETTLE_MS);
            const slotStart = performance.now();
            ageS[impl].push((slotStart - r.spawnedAt) / 1000);
            const before = TRACE_FILE ? threadTimes(r.proc.pid) : undefined;
            const socketsBefore = TRACE_FILE ? sockets(r.proc.pid) : undefined;
            const machineBefore = TRACE_FILE ? machineTimes() : undefined;
            const startUs = Number(process.hrtime.bigint() / 1000n);
            const startWallMs = Date.now();
            const s = await sampleOne(ctx, ws, ws.volumes[i]!, r);
            const machine = TRACE_FILE ? machineDelta(machineBefore!, machineTimes()) : undefined;
            if (machine) foreignMs[impl].push(machine.foreignMs);
            if (TRACE_FILE)
              traceSample({
                impl,
                round,
                sample: i + 1,
                startUs,
                startWallMs,
                harnessMs: +slotStart.toFixed(1),
                ns: ws.ns,
                pvc: ws.volumes[i]!.pvc,
                pvMs: s.pv,
                pvcMs: s.pvc,
                threads: threadDelta(before!, threadTimes(r.proc.pid)),
                newSockets: [...sockets(r.proc.pid)].filter((x) => !socketsBefore!.has(x)).length,
                machine: machine!,
              });
            pvMs[impl].push(s.pv);
            pvcMs[impl].push(s.pvc);
            // Its trailing work (the success event) goes out before it is held.
            await sleep(Math.max(0, SAMPLE_SLOT_MS - RESUME_SETTLE_MS - (performance.now() - slotStart)));
            hold(r, true);
          }
        }
        for (const impl of IMPLS) {
          record(ctx, scenario, 'edit to PV expanded', impl, pvMs[impl]);
          record(ctx, scenario, 'edit to PVC final', impl, pvcMs[impl]);
          const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
          const slowest = pvcMs[impl].indexOf(Math.max(...pvcMs[impl]));
          ctx.log(
            `  round ${round} ${impl}: PV ${med(pvMs[impl]).toFixed(0)}ms, PVC ${med(pvcMs[impl]).toFixed(0)}ms (medians of ${k}); ` +
              `slowest PVC final ${pvcMs[impl][slowest]!.toFixed(1)}ms, sample ${slowest + 1}, ${ageS[impl][slowest]!.toFixed(1)}s after spawn`,
          );
          if (TRACE_FILE) {
            const clean = pvcMs[impl].filter((_, n) => foreignMs[impl][n]! < FOREIGN_MS);
            const sorted = [...clean].sort((x, y) => x - y);
            const p90 = sorted[Math.max(0, Math.ceil(0.9 * sorted.length) - 1)];
            ctx.log(
              `  round ${round} ${impl} (trace): ${k - clean.length} of ${k} samples met >= ${FOREIGN_MS}ms of CPU from processes outside the bench; ` +
                `the other ${clean.length}: PVC final p90 ${p90?.toFixed(1) ?? '-'}ms, max ${sorted.at(-1)?.toFixed(1) ?? '-'}ms, ${clean.filter((x) => x > 35).length} over 35ms`,
            );
          }
        }
      } finally {
        for (const r of running.values()) {
          hold(r, false);
          await r.stop();
        }
      }
    }
  } finally {
    for (const lane of lanes) lane.ws.tracker.stop();
    // The runner tears down bench-latency; the second namespace is this scenario's own.
    if (lanes.length > 1) {
      await teardown(ctx.api, SECOND_NS, { concurrency: ctx.opts.concurrency, deadlineMs: 5 * 60_000 }).catch((e: unknown) =>
        ctx.log(`teardown of ${SECOND_NS}: ${String(e)}`),
      );
    }
    await second?.stop();
  }
}

const TRACE_FILE = process.env['BENCH_LATENCY_TRACE'];
/** A sample during which processes outside the bench ran this long is counted as disturbed in the trace summary. */
const FOREIGN_MS = 3;

function traceSample(line: object): void {
  appendFileSync(TRACE_FILE!, JSON.stringify(line) + '\n');
}

/** The inodes of the process's open sockets: one not there before a sample is a connection it opened. */
function sockets(pid: number): Set<string> {
  const out = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith('socket:')) out.add(target);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

/** Per thread (tid): its name and schedstat's ns on a CPU and ns waiting for one. */
function threadTimes(pid: number): Map<string, { name: string; runNs: number; waitNs: number }> {
  const out = new Map<string, { name: string; runNs: number; waitNs: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      out.set(tid, { name: readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(), runNs: run!, waitNs: wait! });
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** Every process on the machine: its name, parent, and the ns all its threads ran and waited (to see who else ran during a sample). */
function machineTimes(): Map<string, { name: string; ppid: string; runNs: number; waitNs: number }> {
  const out = new Map<string, { name: string; ppid: string; runNs: number; waitNs: number }>();
  for (const pid of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid)) continue;
    try {
      const name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]!;
      let runNs = 0;
      let waitNs = 0;
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
        runNs += run!;
        waitNs += wait!;
      }
      out.set(pid, { name, ppid, runNs, waitNs });
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

interface MachineDelta {
  /** name:pid -> [ms ran, ms waited], per process that ran at least 0.5 ms. */
  processes: Record<string, [number, number]>;
  /** ms run by processes that are not the harness or its descendants (the cluster, drivers, resizers): other load on the machine. */
  foreignMs: number;
}

/** What each process ran between two machineTimes readings, and how much of it was outside the bench. */
function machineDelta(a: ReturnType<typeof machineTimes>, b: ReturnType<typeof machineTimes>): MachineDelta {
  const ours = new Set([String(process.pid)]);
  // Descendants of the harness: repeat until no new child is found (the table is small).
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, t] of b) {
      if (!ours.has(pid) && ours.has(t.ppid)) {
        ours.add(pid);
        grew = true;
      }
    }
  }
  const processes: Record<string, [number, number]> = {};
  let foreignMs = 0;
  for (const [pid, t] of b) {
    const t0 = a.get(pid) ?? { runNs: 0, waitNs: 0 };
    const runMs = (t.runNs - t0.runNs) / 1e6;
    if (!ours.has(pid)) foreignMs += runMs;
    if (runMs < 0.5) continue;
    processes[`${ours.has(pid) ? '' : 'other/'}${t.name}:${pid}`] = [+runMs.toFixed(2), +((t.waitNs - t0.waitNs) / 1e6).toFixed(2)];
  }
  return { processes, foreignMs: +foreignMs.toFixed(2) };
}

/** What each thread name ran and waited between two readings, in ms; names with nothing left out. */
function threadDelta(a: ReturnType<typeof threadTimes>, b: ReturnType<typeof threadTimes>): Record<string, { runMs: number; waitMs: number }> {
  const out: Record<string, { runMs: number; waitMs: number }> = {};
  for (const [tid, t] of b) {
    const t0 = a.get(tid) ?? { runNs: 0, waitNs: 0 };
    const runMs = (t.runNs - t0.runNs) / 1e6;
    const waitMs = (t.waitNs - t0.waitNs) / 1e6;
    if (runMs === 0 && waitMs === 0) continue;
    const sum = out[t.name] ?? { runMs: 0, waitMs: 0 };
    out[t.name] = { runMs: +(sum.runMs + runMs).toFixed(2), waitMs: +(sum.waitMs + waitMs).toFixed(2) };
  }
  return out;
}

async function sampleOne(ctx: Ctx, ws: Workspace, v: Volume, r: RunningResizer): Promise<{ pv: number; pvc: number }> {
  const t0 = performance.now();
  await ctx.api.mergePatch(`/api/v1/namespaces/${ws.ns}/persistentvolumeclaims/${v.pvc}`, {
    spec: { resources: { requests: { storage: `${ws.sizeGi}Gi` } } },
  });
  const race = await Promise.race([ws.tracker.waitAll([v.pvc], gi(ws.sizeGi), 60_000), r.proc.exited.then((code) => `exited ${code}` as const)]);
  if (typeof race === 'string') throw new Error(`${r.impl} resizer ${race} during the latency samples (log: ${r.proc.logPath})`);
  const [s] = race;
  return { pv: s!.pvAt - t0, pvc: s!.pvcAt - t0 };
}

/** The figure names of the earlier sequential scenario, plus p90, so earlier result files compare row by row. */
function record(ctx: Ctx, scenario: string, what: string, impl: Impl, values: readonly number[]): void {
  for (const v of values) ctx.figures.add(scenario, `${what}, median`, 'ms', 'lower', impl, v);
  for (const v of values) ctx.figures.add(scenario, `${what}, p90`, 'ms', 'lower', impl, v, 'p90');
  for (const v of values) ctx.figures.add(scenario, `${what}, p99`, 'ms', 'lower', impl, v, 'p99');
}
