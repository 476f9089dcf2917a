// The chaos table: one row per fault and resizer, in markdown.
import type { FaultResult } from './harness.js';

const cell = (s: string) => s.replace(/\|/g, '\\|');

export function chaosTable(results: readonly FaultResult[]): string {
  const rows = [
    '| fault | resizer | N | lost | wrong sizes | driver calls repeated after a success | resizer restarts | time to all final | observed |',
    '|---|---|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of results) {
    rows.push(
      `| ${cell(r.title)} | ${r.impl} | ${r.n} | ${r.lost} | ${r.wrongSizes} | ${r.duplicateCalls} | ${r.restarts} | ` +
        `${r.timeToAllFinalS === undefined ? 'not all' : `${r.timeToAllFinalS.toFixed(1)} s`} | ${cell(r.facts.join('; '))} |`,
    );
  }
  return rows.join('\n');
}
