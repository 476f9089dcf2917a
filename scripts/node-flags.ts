// The node flags the resizer runs with, wherever it runs: the image's entry point (the Dockerfile and
// scripts/oci-layout.ts, which test/integration/image.test.ts and test/runtime/node-flags.test.ts
// keep equal to these), the README's deployment text, and the benchmark (bench/lib/resizer.ts), so
// the bench measures what ships. Otherwise the runtime runs with its defaults.
//
// --max-semi-space-size=2 (MiB): V8's young generation. Node lets each semi-space grow to tens of
//   MiB on a 64-bit machine; a sidecar that decodes one watch event at a time never needs that much,
//   and after a cache sync or a burst the grown space stays resident. It is the one runtime setting
//   kept: without it the peak of a QPS 200 burst is above the memory target (docs/performance.md,
//   "Runtime settings").
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];
