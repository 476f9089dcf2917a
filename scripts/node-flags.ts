// The V8 flags and the environment the resizer runs with, wherever it runs: the image's entry point
// and environment (scripts/oci-layout.ts and the Dockerfile, which test/integration/image.test.ts
// and test/runtime/node-flags.test.ts keep equal to these) and the benchmark (bench/lib/resizer.ts),
// so the bench measures what ships. Each was measured with bench/mem-probe.ts; see README "Runtime".
//
// --max-semi-space-size=2 (MiB): V8's young generation. Node 26 lets each semi-space grow to
//   16-32 MiB on a 64-bit machine; a sidecar that decodes one watch event at a time never needs
//   that much, and after a cache sync or a burst the grown space stays resident.
// --heap-growing-percent=30 (RUNTIME_V8_FLAGS, set by the resizer itself: on the command line it
//   makes Node reject the code cache of its builtins, see src/app/runtime-v8-flags.ts): after a
//   full GC the old generation may grow by 30 % before the next one, instead of up to 4x when GC
//   looks cheap. A burst promotes many short-lived request objects (small semi-spaces); without the
//   bound the old generation doubled before it was collected.
// --invocation-count-for-maglev=1000 (RUNTIME_V8_FLAGS too; V8's default is 400): a function is
//   compiled by Maglev, V8's mid-tier optimiser, after about 1000 calls' worth of bytecode instead
//   of 400. At the reference QPS 5 the resize path's functions reach the default budget spread over
//   the first several hundred resizes, so every low-rate burst paid for some 150 Maglev compiles on
//   V8's worker threads (the same in a fresh process and after 100 resizes); the functions that
//   are really hot still reach Maglev, and TurboFan's own threshold is unchanged. Measured with
//   bench/mem-probe.ts, see README "Benchmarks".
// --no-turbofan (RUNTIME_V8_FLAGS too): hot code stays Maglev code and never reaches TurboFan, V8's
//   top tier. TurboFan's compiles take large zones on V8's worker threads (kept by glibc's arenas)
//   and page in its own code from the node binary; the resizer's CPU is in builtins, the runtime and
//   the kernel, not in optimised JS, so the top tier bought no CPU per burst: the peak of a QPS 200
//   burst fell by 4-8 MiB and the RSS at rest with 1000 claims by 3-5 MiB, CPU unchanged (README
//   "Runtime").
// Not set: --no-maglev (V8's mid-tier compiler) lowered a QPS 200 burst's peak by 10 MiB but raised
//   a QPS 5 burst's by 4.5 MiB (hot code then reaches TurboFan, whose own code is paged in); with
//   TurboFan off as well it took 2.5-3.5 MiB off the QPS 200 peak for about 10 % more CPU there.
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];
export { RUNTIME_V8_FLAGS } from '../src/app/runtime-v8-flags.js';

// MALLOC_ARENA_MAX=2: glibc gives each thread that calls malloc an arena of its own, up to 8 per
//   core; Node has about ten threads (V8's platform workers, libuv's pool, the main thread) and each
//   arena keeps what it once held.
// MALLOC_TRIM_THRESHOLD_=131072: glibc's default value, but set explicitly it turns off the
//   threshold's growth after large frees, so blocks of 128 KiB and more stay mmapped (returned when
//   freed) and free memory at the top of the heap is returned after a burst.
export const RUNTIME_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '131072' };

/** RUNTIME_ENV as NAME=value lines (an OCI image config's Env, a Dockerfile's ENV). */
export function runtimeEnvLines(): string[] {
  return Object.entries(RUNTIME_ENV).map(([name, value]) => `${name}=${value}`);
}
