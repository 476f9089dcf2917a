// The results table of one e2e run with each resizer image: reads the ginkgo JSON reports
// e2e/suite.sh wrote (report-<image><suffix>.json), writes summary<suffix>.md beside them (one
// row per spec, one column per image, then each failure's message), prints it, and exits 1 when
// our image failed a spec that upstream's passed. With --readme it also replaces the README's
// table between its e2e-table markers (only for the main run, without a suffix).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

interface SpecReport {
  ContainerHierarchyTexts?: string[] | null;
  LeafNodeType: string;
  LeafNodeText: string;
  State: string;
  RunTime: number; // ns
  Failure?: { Message?: string; Location?: { FileName?: string; LineNumber?: number } };
}
interface SuiteReport {
  SuiteSucceeded: boolean;
  RunTime: number; // ns
  StartTime: string;
  PreRunStats: { TotalSpecs: number; SpecsThatWillRun: number };
  SpecReports: SpecReport[] | null;
}
interface ImageRun {
  image: string;
  suite: SuiteReport;
  specs: Map<string, SpecReport>;
}

const IMAGES = ['upstream', 'ours', 'ours-uid0'] as const;

function fullText(spec: SpecReport): string {
  return [...(spec.ContainerHierarchyTexts ?? []), spec.LeafNodeText].join(' ');
}

function readRun(results: string, image: string, suffix: string): ImageRun | undefined {
  const path = join(results, `report-${image}${suffix}.json`);
  if (!existsSync(path)) return undefined;
  const reports = JSON.parse(readFileSync(path, 'utf8')) as SuiteReport[];
  const suite = reports[0];
  if (suite === undefined) throw new Error(`${path} holds no suite report`);
  const specs = new Map<string, SpecReport>();
  for (const spec of suite.SpecReports ?? []) {
    // Specs outside the focus are reported as skipped with no run time: not part of this run.
    if (spec.LeafNodeType !== 'It' || (spec.State === 'skipped' && spec.RunTime === 0)) continue;
    specs.set(fullText(spec), spec);
  }
  return { image, suite, specs };
}

const seconds = (ns: number) => `${Math.round(ns / 1e9)} s`;

function cell(spec: SpecReport | undefined): string {
  if (spec === undefined) return 'not run';
  return `${spec.State} (${seconds(spec.RunTime)})`;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      results: { type: 'string' },
      suffix: { type: 'string', default: '' },
      readme: { type: 'string' },
      command: { type: 'string', default: 'npm run e2e' },
    },
  });
  if (values.results === undefined) throw new Error('--results DIR is required');
  const suffix = values.suffix ?? '';
  const runs = IMAGES.map((image) => readRun(values.results!, image, suffix)).filter((r): r is ImageRun => r !== undefined);
  if (runs.length === 0) throw new Error(`no report-<image>${suffix}.json in ${values.results}`);

  const names = [...new Set(runs.flatMap((r) => [...r.specs.keys()]))].sort();
  // The outermost Describe every spec shares goes above the table, not in each row.
  const outer = [...new Set(runs.flatMap((r) => [...r.specs.values()].map((s) => s.ContainerHierarchyTexts?.[0] ?? '')))];
  const shared = outer.length === 1 && outer[0] ? `${outer[0]} ` : '';
  const lines: string[] = [];
  if (shared) lines.push(`Specs of \`${shared.trim()}\`:`, '');
  lines.push(`| Spec | ${runs.map((r) => r.image).join(' | ')} |`);
  lines.push(`|---|${runs.map(() => '---').join('|')}|`);
  for (const name of names) {
    const short = name.startsWith(shared) ? name.slice(shared.length) : name;
    lines.push(`| ${short.replace(/\|/g, '\\|')} | ${runs.map((r) => cell(r.specs.get(name))).join(' | ')} |`);
  }
  const totals = runs.map((r) => {
    const states = [...r.specs.values()].map((s) => s.State);
    const passed = states.filter((s) => s === 'passed').length;
    return `${r.image}: ${passed} of ${states.length} passed in ${seconds(r.suite.RunTime)} (started ${r.suite.StartTime.slice(0, 16).replace('T', ' ')} UTC)`;
  });
  const failures: string[] = [];
  for (const r of runs) {
    for (const [name, spec] of r.specs) {
      if (spec.State === 'passed') continue;
      const where = spec.Failure?.Location?.FileName ? ` at ${spec.Failure.Location.FileName.replace(/.*\/k8s\.io\//, 'k8s.io/')}:${spec.Failure.Location.LineNumber}` : '';
      const message = (spec.Failure?.Message ?? '').split('\n').slice(0, 6).join(' ').slice(0, 600);
      failures.push(`- ${r.image}, ${name}: ${spec.State}${where}: ${message}`);
    }
  }
  const text = [lines.join('\n'), '', totals.join('; '), ...(failures.length ? ['', 'Not passed:', ...failures] : []), ''].join('\n');
  writeFileSync(join(values.results, `summary${suffix}.md`), text);
  process.stdout.write(text);

  if (values.readme !== undefined && suffix === '') {
    const readme = readFileSync(values.readme, 'utf8');
    const begin = '<!-- e2e-table:begin -->';
    const end = '<!-- e2e-table:end -->';
    const from = readme.indexOf(begin);
    const to = readme.indexOf(end);
    if (from < 0 || to < from) throw new Error(`${values.readme} has no ${begin} ... ${end} markers`);
    const table = `${begin}\n${lines.join('\n')}\n\n${totals.join('; ')} (\`${values.command}\`).\n${end}`;
    writeFileSync(values.readme, readme.slice(0, from) + table + readme.slice(to + end.length));
  }

  const upstream = runs.find((r) => r.image === 'upstream');
  const ours = runs.find((r) => r.image === 'ours');
  if (upstream && ours) {
    const regressions = names.filter((n) => upstream.specs.get(n)?.State === 'passed' && ours.specs.get(n)?.State !== 'passed');
    if (regressions.length > 0) {
      process.stderr.write(`our image did not pass ${regressions.length} spec(s) upstream's passed:\n${regressions.map((n) => `  ${n}`).join('\n')}\n`);
      process.exitCode = 1;
    }
  }
}

main();
