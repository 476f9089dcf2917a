// Preload for bench/mem-probe.ts variants: how much of the V8 heap at rest is garbage. When the
// probe stops the resizer (SIGTERM, right after its idle RSS reading), this writes V8's heap
// figures and VmRSS before and after one forced full GC to $HEAP_LIVE_DIR/<tag>-<pid>.json
// (tag: $HEAP_LIVE_TAG). Needs --expose-gc, so the variant's node flags differ from what ships:
//   "nodeArgs": ["--max-semi-space-size=2", "--expose-gc", "--import", "./bench/heap-live-on-stop.mjs"],
//   "env": { "HEAP_LIVE_DIR": "/tmp/heap-live", "HEAP_LIVE_TAG": "new" }
import v8 from 'node:v8';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const dir = process.env.HEAP_LIVE_DIR ?? '/tmp/heap-live';
const tag = process.env.HEAP_LIVE_TAG ?? 'x';
const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024;
const reading = () => ({
  rssMiB: rssMiB(),
  heap: v8.getHeapStatistics(),
  spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }])),
  mem: process.memoryUsage(),
});
// Registered before the resizer's own handler, so it runs first.
process.once('SIGTERM', () => {
  const before = reading();
  globalThis.gc();
  const after = reading();
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/${tag}-${process.pid}.json`, JSON.stringify({ before, after }));
});
