// The node chaos table: one row per fault and resizer image, in markdown.
import type { NodeChaosResult } from './run.js';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const time = (s: number | undefined) => (s === undefined ? '—' : `${s.toFixed(1)} s`);
const counts = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');

/** Whether a run shows something the resizer must not do (or could not finish). */
export function failed(r: NodeChaosResult): boolean {
  return r.error !== undefined || !r.teardownClean || r.lost + r.wrongSizes + r.dataDamaged + r.badConditions + r.grownTwice + r.neverGrown > 0;
}

export function nodeChaosTable(results: readonly NodeChaosResult[]): string {
  const rows = [
    '| fault | resizer | N | lost (of which on the node) | wrong sizes | data damaged | bad conditions | grown twice | ControllerExpandVolume after a success | resizer restarts | fault at | all PVs grown | all final | observed |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of results) {
    const observed = [
      ...(r.error === undefined ? [] : [`RUN FAILED: ${r.error}`]),
      ...r.facts.filter((f) => !f.startsWith('no default route') && !f.startsWith('resizer ')),
      r.leaders.length > 0 ? `lease holders: ${r.leaders.join(' → ')}` : '',
      Object.keys(r.interrupted).length > 0 ? `calls cut mid-way: ${counts(r.interrupted)}` : '',
      Object.keys(r.failedCalls).length > 0 ? `failed driver calls: ${counts(r.failedCalls)}` : '',
      r.teardownClean ? '' : 'TEARDOWN LEFT SOMETHING BEHIND',
    ].filter((s) => s !== '');
    rows.push(
      `| ${cell(r.title)} | ${r.image} | ${r.n} | ${r.lost}${r.lostOnNode > 0 ? ` (${r.lostOnNode})` : ''} | ${r.wrongSizes} | ${r.dataDamaged} | ${r.badConditions} | ${r.grownTwice} | ` +
        `${r.controllerCallsAfterSuccess} | ${r.resizerRestarts} | ${time(r.faultAtS)} | ${time(r.controllerDoneS)} | ${time(r.allFinalS)} | ${cell(observed.join('; '))} |`,
    );
  }
  return rows.join('\n');
}
