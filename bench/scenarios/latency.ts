// Scenario 4. One claim grown at a time on an idle, synced resizer: from the edit (the PATCH sent)
// to the PV showing the new capacity, and to the PVC's final state, both seen through a watch.
// Samples of all runs are pooled per implementation; median and p99 (nearest rank) of the pool.
import { sleep } from '../lib/api.js';
import { IMPLS } from '../lib/resizer.js';
import { DEFAULT_FLAGS, flags, gi, makeWorkspace, start, syncViaCanary, type Ctx } from '../lib/context.js';

export async function latency(ctx: Ctx): Promise<void> {
  const k = ctx.opts.latencySamples;
  const scenario = `latency (${k} per run, qps=${DEFAULT_FLAGS.qps}/${DEFAULT_FLAGS.burst})`;
  ctx.log(`== ${scenario}`);
  const ws = await makeWorkspace(ctx, 'bench-latency', k);
  try {
    for (let round = 1; round <= ctx.opts.rounds; round++) {
      for (const impl of IMPLS) {
        const r = start(ctx, impl, flags(ctx, DEFAULT_FLAGS), 'latency');
        try {
          await syncViaCanary(ctx, ws, r);
          ws.sizeGi += 1;
          const pvMs: number[] = [];
          const pvcMs: number[] = [];
          for (const v of ws.volumes) {
            // Let the token bucket refill so each sample starts from the same idle state.
            await sleep(2500);
            const t0 = performance.now();
            await ctx.api.mergePatch(`/api/v1/namespaces/${ws.ns}/persistentvolumeclaims/${v.pvc}`, {
              spec: { resources: { requests: { storage: `${ws.sizeGi}Gi` } } },
            });
            const [s] = await ws.tracker.waitAll([v.pvc], gi(ws.sizeGi), 60_000);
            pvMs.push(s!.pvAt - t0);
            pvcMs.push(s!.pvcAt - t0);
          }
          for (const v of pvMs) ctx.figures.add(scenario, 'edit to PV expanded, median', 'ms', 'lower', impl, v);
          for (const v of pvMs) ctx.figures.add(scenario, 'edit to PV expanded, p99', 'ms', 'lower', impl, v, 'p99');
          for (const v of pvcMs) ctx.figures.add(scenario, 'edit to PVC final, median', 'ms', 'lower', impl, v);
          for (const v of pvcMs) ctx.figures.add(scenario, 'edit to PVC final, p99', 'ms', 'lower', impl, v, 'p99');
          const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
          ctx.log(`  round ${round} ${impl}: PV ${med(pvMs).toFixed(0)}ms, PVC ${med(pvcMs).toFixed(0)}ms (medians of ${k})`);
        } finally {
          await r.stop();
        }
      }
    }
  } finally {
    ws.tracker.stop();
  }
}
