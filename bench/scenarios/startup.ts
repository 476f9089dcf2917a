// Scenario 5. A claim is grown while no resizer runs; then the resizer starts. The figure is the
// time from spawn to the claim's final state (and to its PV expanded), seen through a watch.
// A start takes about a second, so this scenario takes its own count of starts
// (--startup-starts, default 8 each) rather than --rounds: with two, one start disturbed by the
// previous scenario's tail decided the median. The order is ABBA (ours, upstream, upstream,
// ours, ...), so neither side is always the first start after something else.
// Each start is also split at its Version line (the first line either resizer logs, read from its
// own klog timestamp): the runtime's start and the program's load before it, the resizer's own
// work after it.
import { readFileSync } from 'node:fs';
import { firstLineTime } from '../lib/klog-time.js';
import { sleep } from '../lib/api.js';
import { pairOrder } from '../lib/resizer.js';
import { DEFAULT_FLAGS, flags, gi, makeWorkspace, start, type Ctx } from '../lib/context.js';

export async function startup(ctx: Ctx): Promise<void> {
  const scenario = `start-up (qps=${DEFAULT_FLAGS.qps}/${DEFAULT_FLAGS.burst})`;
  ctx.log(`== ${scenario}`);
  const ws = await makeWorkspace(ctx, 'bench-startup', 1);
  const v = ws.volumes[0]!;
  try {
    for (let round = 1; round <= ctx.opts.startupStarts; round++) {
      for (const impl of pairOrder(round - 1)) {
        ws.sizeGi += 1;
        await ctx.api.mergePatch(`/api/v1/namespaces/${ws.ns}/persistentvolumeclaims/${v.pvc}`, {
          spec: { resources: { requests: { storage: `${ws.sizeGi}Gi` } } },
        });
        await sleep(500);
        const r = start(ctx, impl, flags(ctx, DEFAULT_FLAGS), 'startup');
        try {
          const [s] = await ws.tracker.waitAll([v.pvc], gi(ws.sizeGi), 120_000);
          const pvc = s!.pvcAt - r.spawnedAt;
          // CPU is read once the resize is seen final (a few ms late at most): on a loaded machine
          // it says more than the wall time.
          const cpu = r.sample().cpuSeconds;
          ctx.figures.add(scenario, 'CPU from start to first resize final', 'cpu-s', 'lower', impl, cpu);
          ctx.figures.add(scenario, 'start to PV expanded', 'ms', 'lower', impl, s!.pvAt - r.spawnedAt);
          ctx.figures.add(scenario, 'start to first resize final', 'ms', 'lower', impl, pvc);
          const spawnWallMs = performance.timeOrigin + r.spawnedAt;
          const versionAt = firstLineTime(readFileSync(r.proc.logPath, 'utf8'), '"Version"', spawnWallMs);
          if (versionAt === undefined) throw new Error(`no Version line in ${r.proc.logPath}`);
          ctx.figures.add(scenario, 'start to Version line (runtime start, program load)', 'ms', 'lower', impl, versionAt - spawnWallMs);
          ctx.figures.add(scenario, 'Version line to first resize final', 'ms', 'lower', impl, pvc - (versionAt - spawnWallMs));
          ctx.log(
            `  round ${round} ${impl}: first resize final ${pvc.toFixed(0)}ms after spawn, ${cpu.toFixed(2)} cpu-s, loadavg ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
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
