// Scenario 3. Memory with many claims and pods and nothing to resize. The levels are cumulative
// (claims and pods are added, never re-made). Each run: start, wait for the canary resize (the
// caches have synced and the workers run), then sample VmRSS every 500 ms until it has stayed
// within 2% for 3 s (bounded at 60 s); the figure is that RSS. Pods are Pending pods with one
// claim each (no kubelet): non-terminated, so they count for --handle-volume-inuse-error.
import { sleep } from '../lib/api.js';
import { IMPLS, type RunningResizer } from '../lib/resizer.js';
import { DEFAULT_FLAGS, flags, makeWorkspace, start, syncViaCanary, type Ctx } from '../lib/context.js';
import { createPods, provisionBulk } from '../lib/workload.js';

async function stableRss(r: RunningResizer): Promise<{ rssMiB: number; hwmMiB: number; waitedMs: number }> {
  const t0 = Date.now();
  const window: number[] = [];
  for (;;) {
    const s = r.sample();
    window.push(s.rssKiB);
    if (window.length > 6) window.shift();
    const lo = Math.min(...window);
    const hi = Math.max(...window);
    if ((window.length === 6 && hi - lo <= lo * 0.02) || Date.now() - t0 > 60_000) {
      return { rssMiB: s.rssKiB / 1024, hwmMiB: s.hwmKiB / 1024, waitedMs: Date.now() - t0 };
    }
    await sleep(500);
  }
}

export async function idle(ctx: Ctx): Promise<void> {
  ctx.log('== idle memory');
  const ws = await makeWorkspace(ctx, 'bench-idle', 0);
  let claims: string[] = [];
  let pods = 0;
  try {
    for (const [wantClaims, wantPods] of ctx.opts.idle) {
      if (wantClaims > claims.length) {
        const t0 = Date.now();
        const more = await provisionBulk(ctx.api, {
          ns: ws.ns,
          count: wantClaims - claims.length,
          prefix: `idle${claims.length}`,
          sizeGi: 1,
          storageClass: ctx.storageClass,
          driverName: ctx.cluster.driverName,
          concurrency: ctx.opts.concurrency,
          deadlineMs: 20 * 60_000,
        });
        claims = claims.concat(more.map((v) => v.pvc));
        ctx.log(`  ${claims.length} claims ready (${((Date.now() - t0) / 1000).toFixed(0)}s, not timed)`);
      }
      if (wantPods > pods) {
        const t0 = Date.now();
        // Bounded in time: whatever exists at the deadline is what the level measures (the table says how many).
        const made = await createPods(ctx.api, {
          ns: ws.ns,
          count: wantPods - pods,
          prefix: `pod${pods}`,
          claims,
          concurrency: ctx.opts.concurrency,
          deadlineMs: 20 * 60_000,
          progress: (m) => ctx.log(`  ${pods + m}/${wantPods} pods`),
        });
        pods += made;
        const s = (Date.now() - t0) / 1000;
        ctx.log(`  ${pods} pods ready (${made} in ${s.toFixed(0)}s, ${(made / s).toFixed(0)}/s, not timed)`);
        if (pods < wantPods) ctx.notes.push(`idle: only ${pods} of ${wantPods} pods could be created within 20 min`);
      }
      const scenario = `idle ${claims.length} PVC/PV, ${pods} pods`;
      for (let round = 1; round <= ctx.opts.rounds; round++) {
        for (const impl of IMPLS) {
          for (const inUse of [true, false]) {
            const r = start(ctx, impl, flags(ctx, DEFAULT_FLAGS, inUse), `idle-${claims.length}-${pods}-${inUse}`);
            try {
              const syncMs = await syncViaCanary(ctx, ws, r);
              const m = await stableRss(r);
              const cpu = r.sample().cpuSeconds;
              const label = `inuse=${inUse}`;
              ctx.figures.add(scenario, `RSS, ${label}`, 'MiB', 'lower', impl, m.rssMiB);
              ctx.figures.add(scenario, `peak RSS (VmHWM), ${label}`, 'MiB', 'lower', impl, m.hwmMiB);
              ctx.figures.add(scenario, `start to synced (canary done), ${label}`, 's', 'lower', impl, syncMs / 1000);
              ctx.figures.add(scenario, `CPU start to steady, ${label}`, 'cpu-s', 'lower', impl, cpu);
              ctx.log(
                `  round ${round} ${impl} ${label}: RSS ${m.rssMiB.toFixed(1)}MiB (hwm ${m.hwmMiB.toFixed(1)}), synced ${(syncMs / 1000).toFixed(1)}s, cpu ${cpu.toFixed(1)}s`,
              );
            } finally {
              await r.stop();
            }
          }
        }
      }
    }
  } finally {
    ws.tracker.stop();
  }
}
