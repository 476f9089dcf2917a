// Where a CPU profile of the bundled resizer (node --cpu-prof) spends its time, by origin: each
// sample's function is mapped through the bundle's source map (dist/resizer.js.map) to the file it
// came from, then summed by package (one of our folders, a dependency, a node: module, or V8's own
// entries: GC, program, idle). With --window the samples are cut to a span of the monotonic clock
// (µs; mem-probe.ts writes each burst's as burstWindowUs, with the resizer's pid), so a profile of a
// whole process gives the burst's share alone.
//
//   node --import tsx bench/probes/cpu-profile-summary.ts PROFILE.cpuprofile [--map dist/resizer.js.map]
//        [--window FROM_US:TO_US] [--top 30] [--by package|file|function]
// Several profiles (each with its own --window, in order: --window A:B --window C:D) are summed, and
// the figures are ms per profile.
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { parseArgs } from 'node:util';
import { packageOf } from './code-origin.js';

interface CallFrame {
  url: string;
  functionName: string;
  lineNumber: number;
  columnNumber: number;
}
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: CallFrame; children?: number[] }>;
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    map: { type: 'string', default: 'dist/resizer.js.map' },
    window: { type: 'string', multiple: true },
    top: { type: 'string', default: '30' },
    by: { type: 'string', default: 'package' },
    json: { type: 'boolean', default: false },
  },
});
if (positionals.length === 0) throw new Error('usage: cpu-profile-summary.ts PROFILE... [--map MAP] [--window FROM_US:TO_US]... [--by package|file|function]');

const map = new SourceMap(JSON.parse(readFileSync(values.map!, 'utf8')));

/** The file a bundled function came from, relative to the repository (src/..., node_modules/...). */
function originOf(frame: CallFrame): string {
  if (frame.url === '') return frame.functionName === '' ? '(native)' : `(${frame.functionName.replace(/^\(|\)$/g, '')})`;
  if (frame.url.startsWith('node:')) return frame.url.replace('internal/', '');
  if (!frame.url.endsWith('resizer.js')) return frame.url;
  const entry = map.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string };
  const source = entry.originalSource ?? '(unmapped bundle)';
  return source.replace(/^.*?\/(src|node_modules)\//, '$1/');
}

function keyOf(frame: CallFrame, origin: string): string {
  if (values.by === 'file') return origin;
  if (values.by === 'function') return `${frame.functionName || '(anonymous)'} ${origin}${frame.url.endsWith('resizer.js') ? '' : `:${frame.lineNumber + 1}`}`;
  return packageOf(origin);
}

const totals = new Map<string, number>();
let all = 0;
positionals.forEach((file, i) => {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const window = values.window?.[i]?.split(':').map(Number);
  const keys = new Map<number, string>();
  for (const node of profile.nodes) keys.set(node.id, keyOf(node.callFrame, originOf(node.callFrame)));
  let at = profile.startTime;
  profile.samples.forEach((id, s) => {
    const delta = profile.timeDeltas[s]!;
    at += delta;
    if (window && (at < window[0]! || at > window[1]!)) return;
    // A sample's delta is the time since the one before: charged to this sample's function.
    const key = keys.get(id)!;
    totals.set(key, (totals.get(key) ?? 0) + delta);
    all += delta;
  });
});

const n = positionals.length;
const rows = [...totals].sort((a, b) => b[1] - a[1]);
const isIdle = (key: string) => key.startsWith('(idle)');
const busy = rows.filter(([k]) => !isIdle(k)).reduce((sum, [, us]) => sum + us, 0);
if (values.json) {
  process.stdout.write(JSON.stringify({ profiles: n, msPerProfile: Object.fromEntries(rows.map(([k, us]) => [k, us / 1000 / n])) }, null, 1) + '\n');
} else {
  process.stdout.write(`${n} profile(s); sampled ${(all / 1000 / n).toFixed(1)} ms per profile, of which not idle ${(busy / 1000 / n).toFixed(1)} ms\n`);
  for (const [key, us] of rows.slice(0, Number(values.top))) {
    const share = isIdle(key) ? '' : `${((100 * us) / busy).toFixed(1).padStart(5)} %`;
    process.stdout.write(`${(us / 1000 / n).toFixed(1).padStart(9)} ms ${share.padStart(7)}  ${key}\n`);
  }
}
