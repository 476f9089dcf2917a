// Scenario 6. CPU at rest: N bound claims, nothing to resize. Each run: start, wait for the canary
// resize (caches synced, workers running), then read the resizer's utime+stime before and after
// `seconds` of doing nothing. The figure is CPU seconds per minute at rest: what timers, watch
// keep-alives, resyncs and metric collectors cost while no claim changes. The load average at the
// end of each window is logged beside it (the machine may be shared).
import { readFileSync } from 'node:fs';
import { sleep } from '../lib/api.js';
import { IMPLS } from '../lib/resizer.js';
import { DEFAULT_FLAGS, flags, makeWorkspace, start, syncViaCanary, type Ctx } from '../lib/context.js';

export async function idleCpu(ctx: Ctx): Promise<void> {
  const { claims, seconds } = ctx.opts.idleCpu;
  const scenario = `idle CPU, ${claims} PVC/PV, ${seconds} s at rest`;
  ctx.log(`== ${scenario}`);
  const ws = await makeWorkspace(ctx, 'bench-idle-cpu', claims);
  try {
    for (let round = 1; round <= ctx.opts.rounds; round++) {
      for (const impl of IMPLS) {
        const r = start(ctx, impl, flags(ctx, DEFAULT_FLAGS), 'idle-cpu');
        try {
          await syncViaCanary(ctx, ws, r);
          // Let the canary's trailing events and the first scrape-free second pass.
          await sleep(2000);
          const before = r.sample().cpuSeconds;
          await sleep(seconds * 1000);
          const used = r.sample().cpuSeconds - before;
          const perMinute = (used * 60) / seconds;
          ctx.figures.add(scenario, 'CPU at rest per minute', 'cpu-s', 'lower', impl, perMinute);
          const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
          ctx.log(`  round ${round} ${impl}: ${used.toFixed(2)} cpu-s in ${seconds}s (${perMinute.toFixed(3)}/min), loadavg ${load}`);
        } finally {
          await r.stop();
        }
      }
    }
  } finally {
    ws.tracker.stop();
  }
}
