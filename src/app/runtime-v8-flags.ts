// V8 flags the resizer sets on itself once its bundle has loaded, instead of on the command line.
// Node ships a code cache for its own modules and checks it against a hash of V8's flags: a flag
// in that hash given on the command line (--heap-growing-percent is one; --max-semi-space-size is
// not) makes Node reject the cache, so node:http, node:tls, node:http2 and every other builtin is
// compiled from its source at every start, about 30 ms of CPU. Set by the process runner once the
// app has connected and the metrics server listens, the flag changes only what is compiled later
// (a few modules loaded on first use) and bounds the heap from before the first list on. Why each
// flag: scripts/node-flags.ts. node:v8 is loaded only when the flags are set, not with the bundle.

export const RUNTIME_V8_FLAGS: readonly string[] = ['--heap-growing-percent=30', '--invocation-count-for-maglev=1000', '--no-turbofan'];

/** Sets RUNTIME_V8_FLAGS (through `setFlag`, V8's by default). */
export function applyRuntimeV8Flags(setFlag: (flag: string) => void = (flag) => process.getBuiltinModule('node:v8').setFlagsFromString(flag)): void {
  for (const flag of RUNTIME_V8_FLAGS) setFlag(flag);
}
