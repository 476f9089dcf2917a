// `e2e/summary.ts --results DIR [--suffix=-NAME] [--readme README.md]`: reads the JUnit files
// e2e/suite.sh wrote (junit-<image><suffix>.xml), writes summary<suffix>.md beside them
// (e2e/summary-table.ts makes it), prints it, and exits 1 when our image did not pass a spec that
// upstream's passed. With --readme it also replaces the README's table between its e2e-table
// markers. The JUnit files are committed, so the table can be made again from the repository.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseJunit, replaceBetweenMarkers, summarize, type ImageResult } from './summary-table.js';

const IMAGES = ['upstream', 'ours', 'ours-uid1000'] as const;

function readResult(results: string, image: string, suffix: string): ImageResult | undefined {
  const path = join(results, `junit-${image}${suffix}.xml`);
  if (!existsSync(path)) return undefined;
  return { image, suite: parseJunit(readFileSync(path, 'utf8'), path) };
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
  const results = values.results;
  const suffix = values.suffix ?? '';
  const reports = IMAGES.map((image) => readResult(results, image, suffix)).filter((r): r is ImageResult => r !== undefined);
  if (reports.length === 0) throw new Error(`no junit-<image>${suffix}.xml in ${results}`);

  const summary = summarize(reports);
  const text = [summary.table, '', summary.totals.join('; '), ...(summary.failures.length ? ['', 'Not passed:', ...summary.failures] : []), ''].join('\n');
  writeFileSync(join(results, `summary${suffix}.md`), text);
  process.stdout.write(text);
  if (values.readme !== undefined) {
    writeFileSync(values.readme, replaceBetweenMarkers(readFileSync(values.readme, 'utf8'), summary, values.command ?? 'npm run e2e'));
  }
  if (summary.regressions.length > 0) {
    process.stderr.write(`our image did not pass ${summary.regressions.length} spec(s) upstream's passed:\n${summary.regressions.map((n) => `  ${n}`).join('\n')}\n`);
    process.exitCode = 1;
  }
}

main();
