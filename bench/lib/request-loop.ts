// The measured loop the request-transport probes share (layer-probe, http2-probe):
// k requests from `concurrency` workers, the even ones a GET and the odd ones a PATCH, with the
// process's CPU and the wall time around them. Bounded by k.

export interface LoopRun {
  cpuMs: number;
  sysMs: number;
  wallMs: number;
}

/** Runs `send(i, patch)` for i in [0, k), `concurrency` at a time. */
export async function getPatchLoop(k: number, concurrency: number, send: (i: number, patch: boolean) => Promise<void>): Promise<LoopRun> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < k) {
      const i = next++;
      await send(i, i % 2 === 1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { cpuMs: (cpu.user + cpu.system) / 1000, sysMs: cpu.system / 1000, wallMs };
}
