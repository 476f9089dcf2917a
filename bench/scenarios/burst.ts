// Scenarios 1 and 2. N bound claims are grown at once on a running, synced resizer; the time runs
// from the first edit to the moment every PV and every PVC shows the new size (seen through a
// watch). CPU and peak RSS come from /proc; the requests come from the apiserver's audit log,
// from the first edit until the resizer has been quiet for 2 s (so trailing events count).
import { growAll } from '../lib/workload.js';
import { IMPLS } from '../lib/resizer.js';
import { flags, gi, makeWorkspace, settleAudit, start, syncViaCanary, type Ctx } from '../lib/context.js';

export async function burst(ctx: Ctx, rate: { qps: number; burst: number }, n: number): Promise<void> {
  const scenario = `burst N=${n} qps=${rate.qps}/${rate.burst}`;
  ctx.log(`== ${scenario}`);
  const ws = await makeWorkspace(ctx, `bench-burst-q${rate.qps}`, n);
  const claims = ws.volumes.map((v) => v.pvc);
  // Each resize costs the resizer about 5-6 requests; allow 4x the QPS-bound time, at least 2 min, at most 40 min.
  const timeoutMs = Math.min(40 * 60_000, Math.max(120_000, ((n * 7) / rate.qps) * 4000));
  try {
    for (let round = 1; round <= ctx.opts.rounds; round++) {
      for (const impl of IMPLS) {
        const r = start(ctx, impl, flags(ctx, rate), `burst-q${rate.qps}`);
        try {
          await syncViaCanary(ctx, ws, r);
          await settleAudit(ctx, 1000, 10_000);
          const before = r.sample();
          ws.sizeGi += 1;
          const wallStart = Date.now();
          const t0 = performance.now();
          await growAll(ctx.api, ws.ns, claims, ws.sizeGi, ctx.opts.concurrency);
          const editsMs = performance.now() - t0;
          const states = await ws.tracker.waitAll(claims, gi(ws.sizeGi), timeoutMs);
          const pvDone = Math.max(...states.map((s) => s.pvAt)) - t0;
          const allDone = Math.max(...states.map((s) => s.pvcAt), ...states.map((s) => s.pvAt)) - t0;
          await settleAudit(ctx);
          const after = r.sample();
          const requests = ctx.audit.countBetween(wallStart, Date.now());
          const f = ctx.figures;
          f.add(scenario, 'time to all final', 's', 'lower', impl, allDone / 1000);
          f.add(scenario, 'time to all PVs expanded', 's', 'lower', impl, pvDone / 1000);
          f.add(scenario, 'resizes per second', '1/s', 'higher', impl, n / (allDone / 1000));
          f.add(scenario, 'CPU during burst', 'cpu-s', 'lower', impl, after.cpuSeconds - before.cpuSeconds);
          f.add(scenario, 'peak RSS (VmHWM)', 'MiB', 'lower', impl, after.hwmKiB / 1024);
          const api = `api cost qps=${rate.qps}/${rate.burst}`;
          f.add(api, 'requests per resize', 'req', 'lower', impl, requests.total / n);
          for (const [kind, count] of Object.entries(requests.byKind)) {
            f.add(api, `  ${kind}`, 'req', 'lower', impl, count / n);
          }
          if (requests.errors > 0) f.add(api, '  of which HTTP errors', 'req', 'lower', impl, requests.errors / n);
          ctx.log(
            `  round ${round} ${impl}: ${n} resizes in ${(allDone / 1000).toFixed(1)}s (edits sent in ${(editsMs / 1000).toFixed(1)}s), ` +
              `${(requests.total / n).toFixed(2)} req/resize ${JSON.stringify(requests.byKind)}, ` +
              `cpu ${(after.cpuSeconds - before.cpuSeconds).toFixed(2)}s (sys ${(after.sysSeconds - before.sysSeconds).toFixed(2)}s), hwm ${(after.hwmKiB / 1024).toFixed(0)}MiB`,
          );
        } finally {
          await r.stop();
        }
      }
    }
  } finally {
    ws.tracker.stop();
  }
}
