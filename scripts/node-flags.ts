// The V8 flags the resizer runs with, wherever it runs: the image's entry point (scripts/oci-layout.ts
// and the Dockerfile, which test/integration/image.test.ts and test/runtime/node-flags.test.ts keep
// equal to this) and the benchmark (bench/lib/resizer.ts), so the bench measures what ships.
//
// --max-semi-space-size (MiB): V8's young generation. Node 26 lets each semi-space grow to 16-32 MiB
// on a 64-bit machine; a sidecar that decodes one watch event at a time never needs that much, and
// after a cache sync or a burst the grown space stays resident. See README "Runtime".
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];
