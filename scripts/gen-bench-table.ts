// The README's benchmark table, rendered from one result file of bench/run.ts: the figures an
// operator compares first, ours against upstream's. `node --import tsx scripts/gen-bench-table.ts
// [bench/results/full-<commit>.json]` (npm run gen:bench-table) rewrites the table between the
// README's bench-table markers, from the file named there unless another is given; and the
// auto-grow table of docs/performance.md (ours only: upstream has no auto-grow) between its
// autogrow-table markers, from the file named there (`--autogrow <file>` gives another).
// test/docs.test.ts fails when a table differs from what its result file renders.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(fileURLToPath(import.meta.url), '../..');
export const README = join(REPO, 'README.md');
export const PERFORMANCE = join(REPO, 'docs', 'performance.md');
const START = /<!-- bench-table: (bench\/results\/[\w.-]+\.json)[^>]*-->\n/;
const END = '<!-- /bench-table -->';
const AUTOGROW_START = /<!-- autogrow-table: (bench\/results\/[\w.-]+\.json)[^>]*-->\n/;
const AUTOGROW_END = '<!-- /autogrow-table -->';

interface ResultFigure {
  scenario: string;
  name: string;
  unit: string;
  summary: string;
  ours: number;
  upstream: number;
  ratio: number;
}

/**
 * The rows, in order: the scenario, the figure's name, how the row names it, and the bound the
 * project set on ours/upstream for it, if any (docs/performance.md, "Targets").
 */
const ROWS: ReadonlyArray<{ scenario: RegExp; name: string; label: [string, string]; target?: number }> = [
  { scenario: /^burst N=1000 qps=200\/400$/, name: 'CPU during burst', label: ['1000 claims grown at once, QPS 200', 'CPU'], target: 1.0 },
  { scenario: /^burst N=1000 qps=200\/400$/, name: 'time to all final', label: ['', 'time to all final'] },
  { scenario: /^burst N=1000 qps=200\/400$/, name: 'peak RSS (VmHWM)', label: ['', 'peak RSS'], target: 1.3 },
  { scenario: /^burst N=\d+ qps=5\/10$/, name: 'CPU during burst', label: ['claims grown at once, QPS 5', 'CPU'], target: 1.0 },
  { scenario: /^burst N=\d+ qps=5\/10$/, name: 'peak RSS (VmHWM)', label: ['', 'peak RSS'], target: 1.3 },
  { scenario: /^api cost qps=5\/10$/, name: 'requests per resize', label: ['API cost, QPS 5', 'requests per resize'] },
  { scenario: /^latency /, name: 'edit to PVC final, median', label: ['one resize on an idle resizer', 'edit to PVC final, median'], target: 1.05 },
  { scenario: /^latency /, name: 'edit to PVC final, p99', label: ['', 'edit to PVC final, p99'], target: 1.0 },
  { scenario: /^start-up /, name: 'start to first resize final', label: ['start-up', 'start to first resize final'], target: 1.0 },
  { scenario: /^start-up /, name: 'CPU from start to first resize final', label: ['', 'CPU to first resize final'] },
  { scenario: /^idle 1000 PVC\/PV, 10000 pods$/, name: 'RSS, inuse=false', label: ['at rest, 1000 claims', 'RSS'], target: 1.25 },
  { scenario: /^idle 1000 PVC\/PV, 10000 pods$/, name: 'RSS, inuse=true', label: ['at rest, 1000 claims, 10,000 pods', 'RSS'] },
  {
    scenario: /^idle 5000 PVC\/PV, 30000 pods$/,
    name: 'RSS, inuse=true',
    label: ['at rest, 5000 claims, 30,000 pods', 'RSS, in-use handling on'],
    target: 0.35,
  },
  { scenario: /^idle 5000 PVC\/PV, 30000 pods$/, name: 'RSS, inuse=false', label: ['', 'RSS, in-use handling off'], target: 1.0 },
  { scenario: /^idle 20000 PVC\/PV, 100000 pods$/, name: 'RSS, inuse=true', label: ['at rest, 20,000 claims, 100,000 pods', 'RSS'], target: 0.2 },
  { scenario: /^idle CPU/, name: 'CPU at rest per minute', label: ['at rest, 300 claims', 'CPU per minute'] },
];

function value(v: number, unit: string): string {
  switch (unit) {
    case 'ms':
      return `${v.toFixed(1)} ms`;
    case 's':
      return `${v.toFixed(2)} s`;
    case 'MiB':
      return `${v.toFixed(1)} MiB`;
    case 'cpu-s':
      return `${v.toFixed(2)} cpu-s`;
    default:
      return v.toFixed(2);
  }
}

/** The table for one result file (a path relative to the repository), then the targets it missed. */
export function renderBenchTable(resultFile: string): string {
  const result = JSON.parse(readFileSync(join(REPO, resultFile), 'utf8')) as { figures: ResultFigure[]; versions: { ours: string } };
  const lines = ['| scenario | figure | ours | upstream | ours/upstream |', '|---|---|---:|---:|---:|'];
  const missed: string[] = [];
  let scenario = '';
  for (const row of ROWS) {
    const f = result.figures.find((x) => row.scenario.test(x.scenario) && x.name === row.name);
    if (!f) throw new Error(`${resultFile} has no figure "${row.name}" in a scenario matching ${String(row.scenario)}`);
    const label = row.label[0].startsWith('claims') ? `${/N=(\d+)/.exec(f.scenario)?.[1] ?? '?'} ${row.label[0]}` : row.label[0];
    if (label !== '') scenario = label;
    const ratio = f.ratio.toFixed(2);
    if (row.target !== undefined && Number(ratio) > row.target) {
      missed.push(`${scenario}, ${row.label[1]}: ${ratio} (≤ ${row.target % 1 === 0 ? row.target.toFixed(1) : String(row.target)})`);
    }
    lines.push(`| ${label} | ${row.label[1]} | ${value(f.ours, f.unit)} | ${value(f.upstream, f.unit)} | ${ratio} |`);
  }
  const targets =
    missed.length === 0
      ? 'Every target (ours/upstream) was met.'
      : `Targets (ours/upstream) missed in this run: ${missed.join('; ')}. Every other target was met.`;
  return `${lines.join('\n')}\n\n${targets}\n`;
}

/** The README with its bench table rendered from `resultFile` (default: the file its marker names). */
export function readmeWithBenchTable(readme: string, resultFile?: string): { text: string; file: string } {
  const start = START.exec(readme);
  const end = readme.indexOf(END);
  if (!start || end < start.index) throw new Error('README.md has no bench-table markers');
  const file = resultFile ?? start[1]!;
  const marker = start[0].replace(start[1]!, file);
  return { text: readme.slice(0, start.index) + marker + renderBenchTable(file) + readme.slice(end), file };
}

interface AutoGrowResult {
  figures: ResultFigure[];
  settings: { autoGrow?: { claims: number; kubelets: number; intervalS: number; crossings: number } };
}

/**
 * The auto-grow rows, in order: the figure's name, how the row names it, and the target the
 * project set for it (docs/performance.md, "Auto-grow"), as a check of the value.
 */
const AUTOGROW_ROWS: ReadonlyArray<{ name: string; label: string; target?: (v: number, intervalS: number) => [string, boolean] }> = [
  { name: 'threshold crossed to request written, p50', label: 'threshold crossed to request written, p50' },
  {
    name: 'threshold crossed to request written, p99',
    label: 'threshold crossed to request written, p99',
    target: (v, i) => [`≤ ${i + 5} s (one interval + 5 s)`, v <= i + 5],
  },
  { name: 'poll to request written, p50', label: 'the poll that saw it to request written, p50' },
  { name: 'poll to request written, p99', label: 'the poll that saw it to request written, p99' },
  { name: 'crossings not written in time', label: 'crossings not written within an interval and 30 s', target: (v) => ['0', v === 0] },
  { name: 'CPU per poll cycle (on less off)', label: 'CPU per poll cycle (on less off)' },
  { name: 'RSS, auto-grow off', label: 'RSS, auto-grow off' },
  { name: 'RSS, auto-grow on', label: 'RSS, auto-grow on' },
  { name: 'RSS on less off', label: 'RSS on less off', target: (v) => ['≤ 10 MiB', v <= 10] },
  { name: 'kubelet requests per poll', label: 'kubelet requests per poll' },
  {
    name: 'kubelet requests to nodes without an opted-in claim',
    label: 'kubelet requests to nodes without an opted-in claim',
    target: (v) => ['0', v === 0],
  },
  { name: 'kubelet requests, auto-grow off', label: 'kubelet requests, auto-grow off', target: (v) => ['0', v === 0] },
  { name: 'API requests per poll cycle', label: 'API server requests per poll cycle (no grow)' },
];

function autoGrowValue(v: number, unit: string): string {
  switch (unit) {
    case 'cpu-ms':
      return `${v.toFixed(0)} cpu-ms`;
    case 'count':
    case 'req':
      return Number.isInteger(v) ? String(v) : v.toFixed(1);
    default:
      return value(v, unit);
  }
}

/** The auto-grow table for one result file (a path relative to the repository). */
export function renderAutoGrowTable(resultFile: string): string {
  const result = JSON.parse(readFileSync(join(REPO, resultFile), 'utf8')) as AutoGrowResult;
  const settings = result.settings.autoGrow;
  if (!settings) throw new Error(`${resultFile} has no auto-grow settings`);
  const lines = [
    `${settings.claims} opted-in claims over ${settings.kubelets} kubelet stand-ins, \`--auto-grow-interval=${settings.intervalS}s\`:`,
    '',
    '| figure | value | target |',
    '|---|---:|---|',
  ];
  for (const row of AUTOGROW_ROWS) {
    const f = result.figures.find((x) => x.scenario.startsWith('auto-grow ') && x.name === row.name);
    if (!f) throw new Error(`${resultFile} has no auto-grow figure "${row.name}"`);
    const target = row.target ? row.target(f.ours, settings.intervalS) : undefined;
    lines.push(`| ${row.label} | ${autoGrowValue(f.ours, f.unit)} | ${target ? `${target[0]}: ${target[1] ? 'met' : 'missed'}` : ''} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** docs/performance.md with its auto-grow table rendered from `resultFile` (default: the file its marker names). */
export function performanceWithAutoGrowTable(doc: string, resultFile?: string): { text: string; file: string } {
  const start = AUTOGROW_START.exec(doc);
  const end = doc.indexOf(AUTOGROW_END);
  if (!start || end < start.index) throw new Error('docs/performance.md has no autogrow-table markers');
  const file = resultFile ?? start[1]!;
  const marker = start[0].replace(start[1]!, file);
  return { text: doc.slice(0, start.index) + marker + renderAutoGrowTable(file) + doc.slice(end), file };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--autogrow');
  const autoGrowFile = at >= 0 ? args.splice(at, 2)[1] : undefined;
  const { text } = readmeWithBenchTable(readFileSync(README, 'utf8'), args[0]);
  writeFileSync(README, text);
  writeFileSync(PERFORMANCE, performanceWithAutoGrowTable(readFileSync(PERFORMANCE, 'utf8'), autoGrowFile).text);
}
