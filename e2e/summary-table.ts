// The results table of one e2e run per resizer image, from the JUnit XML files e2e/suite.sh
// writes (committed, unlike ginkgo's multi-megabyte JSON reports, so the table can be made again
// from what the repository holds): one row per spec, one column per image, the totals, each spec
// that did not pass with its failure, and the specs our image did not pass although upstream's
// did. Parsing and summarising only; e2e/summary.ts reads and writes the files.
import { XMLParser } from 'fast-xml-parser';

export interface SpecResult {
  /** The spec's full text, without ginkgo's "[It] " node-type prefix. */
  name: string;
  /** ginkgo's state: passed, failed, skipped, pending, panicked, interrupted, aborted, timedout. */
  status: string;
  seconds: number;
  /** The failure's description: message, then where ("In [It] at: file:line"). */
  failure?: string;
}

export interface SuiteResult {
  seconds: number;
  /** When the suite started, as JUnit's testsuite timestamp (UTC, seconds). */
  timestamp: string;
  specs: SpecResult[];
}

export interface ImageResult {
  /** upstream, ours, ours-uid1000. */
  image: string;
  suite: SuiteResult;
}

export interface Summary {
  /** Markdown: a line naming the text all specs begin with (if any), then the table. */
  table: string;
  /** One sentence per image: passed of run, suite time, start. */
  totals: string[];
  /** One line per spec and image that did not pass, with where and why. */
  failures: string[];
  /** Specs upstream passed and ours did not (the run's verdict). */
  regressions: string[];
}

const IT = '[It] ';

/**
 * One ginkgo JUnit report (one testsuite). Only spec ("[It]") test cases count: the suite's setup
 * nodes are reported as test cases too. A spec outside the focus never appears (report-trim drops
 * them), so every spec listed ran, or was skipped by the spec itself.
 */
export function parseJunit(xml: string, source = 'JUnit report'): SuiteResult {
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    textNodeName: 'text',
    parseAttributeValue: false,
    parseTagValue: false,
    // Go's encoding/xml (ginkgo's writer) writes newlines and quotes as numeric character
    // references (&#xA;, &#34;), which only this option decodes.
    htmlEntities: true,
    isArray: (name) => ['testsuite', 'testcase', 'failure', 'error'].includes(name),
  });
  const doc = parser.parse(xml) as { testsuites?: { testsuite?: JunitSuite[] } };
  const suites = doc.testsuites?.testsuite ?? [];
  const suite = suites[0];
  if (suites.length !== 1 || suite === undefined) throw new Error(`${source}: want one <testsuite>, found ${suites.length}`);
  const specs: SpecResult[] = [];
  for (const c of suite.testcase ?? []) {
    if (!c.name?.startsWith(IT)) continue;
    if (c.status === undefined) throw new Error(`${source}: test case "${c.name}" has no status`);
    const problem = c.failure?.[0] ?? c.error?.[0];
    const failure = typeof problem === 'string' ? problem : (problem?.text ?? problem?.message);
    specs.push({ name: c.name.slice(IT.length), status: c.status, seconds: Number(c.time ?? 0), ...(failure ? { failure: failure.trim() } : {}) });
  }
  return { seconds: Number(suite.time ?? 0), timestamp: suite.timestamp ?? '', specs };
}

interface JunitProblem {
  message?: string;
  text?: string;
}
interface JunitCase {
  name?: string;
  status?: string;
  time?: string;
  failure?: (JunitProblem | string)[];
  error?: (JunitProblem | string)[];
}
interface JunitSuite {
  time?: string;
  timestamp?: string;
  testcase?: JunitCase[];
}

const seconds = (s: number) => `${Math.round(s)} s`;

/** Whether every "[" and "(" in text is closed again. */
function balanced(text: string): boolean {
  let depth = 0;
  for (const c of text) {
    if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') depth--;
  }
  return depth === 0;
}

/**
 * The words every name begins with, when there are at least two names and each has more, cut
 * where no bracket is open (so "[Testpattern: Dynamic PV (default fs)]" stays whole in the rows).
 */
function sharedPrefix(names: readonly string[]): string {
  if (names.length < 2) return '';
  const split = names.map((n) => n.split(' '));
  const first = split[0]!;
  let n = 0;
  while (split.every((words) => words.length > n + 1 && words[n] === first[n])) n++;
  while (n > 0 && !balanced(first.slice(0, n).join(' '))) n--;
  return n === 0 ? '' : `${first.slice(0, n).join(' ')} `;
}

/** "<message> at <file>:<line>" from ginkgo's failure description, on one short line. */
function oneLine(failure: string): string {
  const where = /In \[[^\]]+\] at: (\S+?):(\d+)/.exec(failure);
  const location = where ? ` at ${where[1]!.replace(/.*\/k8s\.io\//, 'k8s.io/')}:${where[2]}` : '';
  // The message is what comes before the "In [...] at:" line; a progress report may follow it.
  const lines = failure.split('\n');
  const at = lines.findIndex((line) => line.startsWith('In ['));
  const message = (at < 0 ? lines : lines.slice(0, at))
    .filter((line) => line.trim() !== '')
    .slice(0, 6)
    .join(' ')
    .replace(/^\[[A-Z]+\] /, '')
    .slice(0, 600);
  return `${location}: ${message}`;
}

export function summarize(results: readonly ImageResult[]): Summary {
  const runs = results.map((r) => ({ image: r.image, suite: r.suite, specs: new Map(r.suite.specs.map((s) => [s.name, s])) }));
  const names = [...new Set(runs.flatMap((r) => [...r.specs.keys()]))].sort();
  // The words all specs begin with (the Describe they share) go above the table, not in each row.
  const shared = sharedPrefix(names);
  const cell = (spec: SpecResult | undefined) => (spec === undefined ? 'not run' : `${spec.status} (${seconds(spec.seconds)})`);

  const lines: string[] = [];
  if (shared) lines.push(`Specs of \`${shared.trim()}\`:`, '');
  lines.push(`| Spec | ${runs.map((r) => r.image).join(' | ')} |`);
  lines.push(`|---|${runs.map(() => '---').join('|')}|`);
  for (const name of names) {
    lines.push(`| ${name.slice(shared.length).replace(/\|/g, '\\|')} | ${runs.map((r) => cell(r.specs.get(name))).join(' | ')} |`);
  }

  const totals = runs.map((r) => {
    const passed = r.suite.specs.filter((s) => s.status === 'passed').length;
    const started = r.suite.timestamp ? ` (started ${r.suite.timestamp.slice(0, 16).replace('T', ' ')} UTC)` : '';
    return `${r.image}: ${passed} of ${r.suite.specs.length} passed in ${seconds(r.suite.seconds)}${started}`;
  });

  const failures: string[] = [];
  for (const r of runs) {
    for (const spec of r.suite.specs) {
      if (spec.status === 'passed') continue;
      failures.push(`- ${r.image}, ${spec.name}: ${spec.status}${spec.failure ? oneLine(spec.failure) : ''}`);
    }
  }

  const upstream = runs.find((r) => r.image === 'upstream');
  const ours = runs.find((r) => r.image === 'ours');
  const regressions = upstream && ours
    ? names.filter((n) => upstream.specs.get(n)?.status === 'passed' && ours.specs.get(n)?.status !== 'passed')
    : [];
  return { table: lines.join('\n'), totals, failures, regressions };
}

/** The README text between its markers, replaced by this table and its totals. */
export function replaceBetweenMarkers(readme: string, summary: Summary, command: string): string {
  const begin = '<!-- e2e-table:begin -->';
  const end = '<!-- e2e-table:end -->';
  const from = readme.indexOf(begin);
  const to = readme.indexOf(end);
  if (from < 0 || to < from) throw new Error(`no ${begin} ... ${end} markers`);
  const block = `${begin}\n${summary.table}\n\n${summary.totals.join('; ')} (\`${command}\`).\n${end}`;
  return readme.slice(0, from) + block + readme.slice(to + end.length);
}
