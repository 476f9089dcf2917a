// The documentation is part of the contract. Every section reference a comment or a doc makes
// ("section sign" + 3.5, optionally followed by "step 4") resolves to a heading of
// docs/behavior.md (or of the docs/ page named earlier on the same line) and to a step listed
// there; every relative link in docs/ and README.md reaches an existing file and heading; every
// difference page is linked where readers look for it; no source cites a document that is not in
// the repository; no code comment carries a measurement, an issue number or a commit hash (figures
// live in docs/performance.md beside their result files, history in git and CHANGELOG.md); the
// README stays at most README_MAX_LINES lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { commentsOf } from './support/code-comments.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_PAGE = 'docs/behavior.md';
const SOURCE_EXTENSIONS = new Set(['.ts', '.js', '.mjs', '.sh', '.go', '.proto', '.yaml', '.yml']);
// Written with an escape so this file's own pattern is not a reference.
const SECTION_REF = /\u00a7\s?(\d+(?:\.\d+)*)/g;
const DOC_PATH = /docs\/[\w./-]+\.md/g;

function walk(dir: string, keep: (path: string) => boolean): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(path, keep));
    else if (keep(path)) out.push(path);
  }
  return out.sort();
}

const rel = (path: string) => relative(ROOT, path);

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function slugOf(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The lines of a Markdown text outside fenced code blocks. */
function proseLines(text: string): { line: string; number: number }[] {
  const out: { line: string; number: number }[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, i) => {
    const opener = /^\s*(```|~~~)/.exec(line);
    if (opener) {
      if (fence === undefined) fence = opener[1];
      else if (opener[1] === fence) fence = undefined;
      return;
    }
    if (fence === undefined) out.push({ line, number: i + 1 });
  });
  return out;
}

function headingsOf(text: string): string[] {
  const headings: string[] = [];
  for (const { line } of proseLines(text)) {
    const match = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (match?.[1]) headings.push(match[1]);
  }
  return headings;
}

/** Anchors of a page, with GitHub's -1, -2 suffixes for repeated headings. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const heading of headingsOf(text)) {
    const slug = slugOf(heading);
    const count = seen.get(slug) ?? 0;
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  return anchors;
}

/**
 * Section numbers a page defines (a heading that starts "3.5 " or "1. "), each with the numbers
 * of the steps it lists: the items of its unindented ordered lists ("4. ...").
 */
function sectionsOf(text: string): Map<string, Set<number>> {
  const sections = new Map<string, Set<number>>();
  let steps: Set<number> | undefined;
  for (const { line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const number = /^(\d+(?:\.\d+)*)\.?\s/.exec(heading[1] ?? '')?.[1];
      steps = number === undefined ? undefined : new Set();
      if (number !== undefined && steps) sections.set(number, steps);
      continue;
    }
    const item = /^(\d+)\.\s/.exec(line);
    if (item && steps) steps.add(Number(item[1]));
  }
  return sections;
}

interface SectionRef {
  file: string;
  line: number;
  page: string;
  section: string;
  /** "step 4" or "steps 6–18" right after the reference: the steps it names. */
  steps: number[];
}

function stepsNamedAfter(rest: string): number[] {
  const match = /^,?\s*steps?\s+(\d+)(?:\s*[–-]\s*(\d+))?/.exec(rest);
  if (!match) return [];
  return [Number(match[1]), ...(match[2] === undefined ? [] : [Number(match[2])])];
}

/** Every section reference in src/, test/, docs/ and the README, with the page it points into. */
function sectionRefs(): SectionRef[] {
  const files = [
    ...walk(join(ROOT, 'src'), (p) => SOURCE_EXTENSIONS.has(extname(p))),
    ...walk(join(ROOT, 'test'), (p) => SOURCE_EXTENSIONS.has(extname(p))),
    ...markdownFiles(),
  ];
  const refs: SectionRef[] = [];
  for (const file of files) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const match of line.matchAll(SECTION_REF)) {
          // A docs/ page named earlier on the same line is the target; otherwise the behaviour contract.
          const before = line.slice(0, match.index);
          const named = [...before.matchAll(DOC_PATH)].at(-1)?.[0];
          const steps = stepsNamedAfter(line.slice((match.index ?? 0) + match[0].length));
          refs.push({ file: rel(file), line: i + 1, page: named ?? DEFAULT_PAGE, section: match[1] ?? '', steps });
        }
      });
  }
  return refs;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

/** Relative links of a Markdown file: inline `[text](target)` and reference definitions. */
function relativeLinks(file: string): Link[] {
  const links: Link[] = [];
  for (const { line, number } of proseLines(readFileSync(file, 'utf8'))) {
    const prose = line.replace(/`[^`]*`/g, '');
    const targets = [
      ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? ''),
      ...[...prose.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/g)].map((m) => m[1] ?? ''),
    ];
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...
      links.push({ file: rel(file), line: number, target });
    }
  }
  return links;
}

function markdownFiles(): string[] {
  return [join(ROOT, 'README.md'), ...walk(join(ROOT, 'docs'), (p) => extname(p) === '.md')];
}

/** Why a link does not resolve, or undefined when it does. */
function brokenReason(link: Link): string | undefined {
  const hash = link.target.indexOf('#');
  const pathPart = decodeURIComponent(hash === -1 ? link.target : link.target.slice(0, hash));
  const anchor = hash === -1 ? undefined : decodeURIComponent(link.target.slice(hash + 1));
  const from = join(ROOT, link.file);
  const targetPath = pathPart === '' ? from : resolve(dirname(from), pathPart);
  if (!targetPath.startsWith(ROOT)) return 'leaves the repository';
  if (!existsSync(targetPath)) return `no file ${rel(targetPath)}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(targetPath).isDirectory() || extname(targetPath) !== '.md') return 'anchor on a file that is not Markdown';
  return anchorsOf(readFileSync(targetPath, 'utf8')).has(anchor) ? undefined : `no heading #${anchor} in ${rel(targetPath)}`;
}

test('slugOf makes the anchors GitHub makes', () => {
  const cases: [string, string][] = [
    ['3.5 Recovery-aware resize', '35-recovery-aware-resize'],
    ['VolumeAttributesClass (modify)', 'volumeattributesclass-modify'],
    ['Differences from upstream, in one place', 'differences-from-upstream-in-one-place'],
    ['`--timeout` and `ReleaseLeaderElectionOnExit`', '--timeout-and-releaseleaderelectiononexit'],
    ['1. Startup', '1-startup'],
  ];
  for (const [heading, slug] of cases) assert.equal(slugOf(heading), slug, heading);
});

test('every section reference in src/, test/ and docs/ resolves to a heading (and step) of the page it cites', () => {
  const refs = sectionRefs();
  assert.ok(refs.length > 0, 'the scan found no section references at all: the pattern is broken');
  assert.ok(
    refs.some((r) => r.steps.length > 0),
    'the scan found no step references at all: the pattern is broken',
  );
  const pages = new Map<string, Map<string, Set<number>> | undefined>();
  const unresolved: string[] = [];
  for (const ref of refs) {
    if (!pages.has(ref.page)) {
      const path = join(ROOT, ref.page);
      pages.set(ref.page, existsSync(path) ? sectionsOf(readFileSync(path, 'utf8')) : undefined);
    }
    const sections = pages.get(ref.page);
    if (!sections) unresolved.push(`${ref.file}:${ref.line}: cites ${ref.page}, which does not exist`);
    else if (!sections.has(ref.section)) unresolved.push(`${ref.file}:${ref.line}: section ${ref.section} has no heading in ${ref.page}`);
    else {
      const listed = sections.get(ref.section) ?? new Set<number>();
      for (const step of ref.steps) {
        if (!listed.has(step)) unresolved.push(`${ref.file}:${ref.line}: section ${ref.section} of ${ref.page} has no step ${step}`);
      }
    }
  }
  assert.deepEqual(unresolved, []);
});

test('no source cites a document outside the repository', () => {
  const outside = /external-resizer-behavior|what-users-ask|typescript-ecosystem|real-test-components|\/work\/shared|docs\/spec\b/;
  const offenders: string[] = [];
  for (const dir of ['src', 'test']) {
    for (const file of walk(join(ROOT, dir), (p) => SOURCE_EXTENSIONS.has(extname(p)))) {
      if (file === fileURLToPath(import.meta.url)) continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (outside.test(line)) offenders.push(`${rel(file)}:${i + 1}: ${line.trim()}`);
        });
    }
  }
  assert.deepEqual(offenders, []);
});

test('every relative link in README.md and docs/ reaches an existing file and heading', () => {
  const links = markdownFiles().flatMap(relativeLinks);
  assert.ok(links.length > 0, 'the scan found no links at all: the pattern is broken');
  const broken = links.flatMap((link) => {
    const reason = brokenReason(link);
    return reason === undefined ? [] : [`${link.file}:${link.line}: (${link.target}) ${reason}`];
  });
  assert.deepEqual(broken, []);
});

/** The repository paths a Markdown file links to (anchors dropped). */
function linkedPaths(file: string): string[] {
  return relativeLinks(file).map((l) => {
    const path = l.target.split('#')[0] ?? '';
    return path === '' ? l.file : rel(resolve(dirname(join(ROOT, l.file)), path));
  });
}

test('every page of docs/differences is linked from the README and from the behaviour contract', () => {
  const pages = walk(join(ROOT, 'docs', 'differences'), (p) => extname(p) === '.md')
    .map(rel)
    .filter((page) => !page.endsWith('/README.md'));
  assert.ok(pages.length > 0, 'docs/differences has no pages');
  for (const from of ['README.md', DEFAULT_PAGE]) {
    const linked = new Set(linkedPaths(join(ROOT, from)));
    assert.deepEqual(
      pages.filter((page) => !linked.has(page)),
      [],
      `pages not linked from ${from}`,
    );
  }
});

const README_MAX_LINES = 400;

test(`the README is at most ${README_MAX_LINES} lines`, () => {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length - 1;
  assert.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines: move depth into docs/`);
});

/** History in a comment: an issue or pull request number, a commit hash, the commit messages. */
const HISTORY =
  /\b(?:issue|PR|pull request)\s*#?\d+|(?:^|[\s(])#\d{1,5}\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])(?![0-9]+e[0-9]+\b)[0-9a-f]{7,40}\b|commit messages?|measured on Node/i;
/** A measurement in a comment: an approximate cost, a cost "of CPU/start-up/heap", a percentile, "measured", a runtime version. */
const FIGURE =
  /\d\s?µs\b|(?:about|~|≈|roughly|around)\s?\d[\d.,]*\s?(?:ns|µs|ms|s|MiB|KiB|GiB|MB|KB|GB|%)(?![\w^])|\d[\d.,]*\s?(?:ms|µs|s|MiB|KiB|MB|KB)\s+of\s+(?:CPU|start|heap|memory|RSS|the first|every|a start|its)|\b(?:median|p50|p9[059])\b|\bmeasured\b|\bNode(?:\.js)?\s+v?\d{2}\b/i;

test('no code comment carries a measurement (src/), an issue number or a commit hash (src/, scripts/, test/, bench/)', () => {
  const code = (p: string) => ['.ts', '.js', '.mjs', '.cjs'].includes(extname(p)) && !p.includes(`${join('csi', 'proto', 'gen')}`);
  const offenders: string[] = [];
  let scanned = 0;
  for (const dir of ['src', 'scripts', 'test', 'bench']) {
    for (const file of walk(join(ROOT, dir), code)) {
      if (file === fileURLToPath(import.meta.url)) continue;
      const path = rel(file);
      const figures = dir === 'src';
      for (const comment of commentsOf(readFileSync(file, 'utf8'))) {
        scanned += 1;
        if (HISTORY.test(comment.text) || (figures && FIGURE.test(comment.text))) offenders.push(`${path}:${comment.line}: ${comment.text}`);
      }
    }
  }
  assert.ok(scanned > 1000, `only ${scanned} comment lines found: the scan is broken`);
  assert.deepEqual(offenders, []);
});

test('the comment patterns catch what they are for, and not the facts beside them', () => {
  const caught = [
    'loading it costs about 5 ms of start-up CPU',
    'node:child_process costs ~6 ms of start-up',
    'the position costs 4 µs of the 8 µs a line costs',
    'which measured 8 ms per second',
    'p99 of the last run',
    'CPU time, Node 20, a shared machine',
  ];
  for (const text of caught) assert.ok(FIGURE.test(text), text);
  for (const text of ['the work of issue 10', 'see #28', 'as of a79b99e', 'see the commit messages']) assert.ok(HISTORY.test(text), text);
  const facts = [
    'Node runs a timer whose delay exceeds 2^31-1 ms after 1 ms',
    "gRPC's default 4 MiB receive limit",
    'client-go: 500 ms',
    'input such as "1234567890123456789e100000000" costs nothing',
    'capped at 2 GiB as upstream does',
  ];
  for (const text of facts) assert.ok(!FIGURE.test(text) && !HISTORY.test(text), text);
});

test('docs/architecture.md names every folder of src/, test/ and bench/', () => {
  const architecture = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const folders = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules')
      .flatMap((e) => [`${dir}/${e.name}`, ...folders(`${dir}/${e.name}`)]);
  // src/ folders are named without the prefix, as the folder table does; a run's own result folders are data.
  const named = (folder: string) => (folder.startsWith('src/') ? folder.slice(4) : folder) + '/';
  const missing = ['src', 'test', 'bench']
    .flatMap(folders)
    .filter((f) => !f.startsWith('bench/results/'))
    .filter((f) => !architecture.includes(`\`${named(f)}\``));
  assert.deepEqual(missing, []);
});

test('docs/flags.md is what scripts/gen-flags-doc.ts renders from the flag definitions', async () => {
  const { FLAGS_PAGE, renderFlagsPage } = await import('../scripts/gen-flags-doc.js');
  assert.equal(readFileSync(FLAGS_PAGE, 'utf8'), renderFlagsPage(), 'run npm run gen:flags');
});

test("the README's benchmark table is what its result file renders", async () => {
  const { README, readmeWithBenchTable } = await import('../scripts/gen-bench-table.js');
  const readme = readFileSync(README, 'utf8');
  const { text, file } = readmeWithBenchTable(readme);
  assert.match(file, /^bench\/results\/[\w.-]+\.json$/);
  assert.equal(readme, text, `run npm run gen:bench-table -- ${file}`);
});

test("docs/performance.md's auto-grow table is what its result file renders", async () => {
  const { PERFORMANCE, performanceWithAutoGrowTable } = await import('../scripts/gen-bench-table.js');
  const doc = readFileSync(PERFORMANCE, 'utf8');
  const { text, file } = performanceWithAutoGrowTable(doc);
  assert.match(file, /^bench\/results\/autogrow-[\w.-]+\.json$/);
  assert.equal(doc, text, `run npm run gen:bench-table -- --autogrow ${file}`);
});

test("the README's version-matrix table is its result file", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /<!-- matrix-table: (bench\/results\/test-matrix-[\w.-]+\.md) -->\n([\s\S]*?)<!-- \/matrix-table -->/.exec(readme);
  assert.ok(block, 'README.md has no matrix-table markers');
  assert.equal(block[2], readFileSync(join(ROOT, block[1]!), 'utf8'), `copy ${block[1]} between the markers`);
});
