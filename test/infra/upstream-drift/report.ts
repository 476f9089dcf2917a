// The drift check's result as text for a reader: a summary line per area, then each difference
// with both sides' values, marked with its documented reason or as not documented, then the
// entries of the list that no longer name a difference and the families that could not be compared.
import type { Difference } from './compare.js';
import type { DriftResult } from './drift.js';
import type { Classified } from './known-differences.js';

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line) => prefix + line)
    .join('\n');
}

function describe(d: Difference): string {
  const single = !d.upstream.includes('\n') && !d.ours.includes('\n') && d.upstream.length + d.ours.length < 120;
  const title = `${d.area} ${d.name}: ${d.aspect}`;
  if (single) return `${title}\n    upstream: ${d.upstream}\n    ours:     ${d.ours}`;
  return `${title}\n    upstream:\n${indent(d.upstream, '      | ')}\n    ours:\n${indent(d.ours, '      | ')}`;
}

export function formatReport(result: DriftResult, classified: Classified): string {
  const lines: string[] = [];
  const { counts } = result;
  lines.push(`upstream csi-resizer ${result.version} against ours`);
  lines.push(`  flags: ${counts.flags.upstream} upstream, ${counts.flags.ours} ours`);
  lines.push(`  feature gates tried: ${counts.gatesTried} (each set to true and to false on both)`);
  lines.push(`  metric families at start: ${counts.metrics.upstream} upstream, ${counts.metrics.ours} ours`);
  lines.push('');
  if (classified.undocumented.length > 0) {
    lines.push(`Not documented (${classified.undocumented.length}):`);
    for (const d of classified.undocumented) lines.push(indent(describe(d), '  '));
    lines.push('');
  }
  if (classified.documented.length > 0) {
    lines.push(`Documented (${classified.documented.length}):`);
    for (const { difference, entry } of classified.documented) {
      lines.push(indent(describe(difference), '  '));
      lines.push(`    why: ${entry.reason} (${entry.doc})`);
    }
    lines.push('');
  }
  if (classified.stale.length > 0) {
    lines.push(`Documented entries that match no difference (${classified.stale.length}):`);
    for (const e of classified.stale) lines.push(`  ${e.area} ${e.name}: ${e.aspect} (${e.doc})`);
    lines.push('');
  }
  if (result.unsampledInOursOnly.length > 0) {
    lines.push(`Not compared: registered in ours without a sample, not shown by upstream (Go's client shows a family only once it has one):`);
    for (const name of result.unsampledInOursOnly) lines.push(`  ${name}`);
    lines.push('');
  }
  const total = result.differences.length;
  lines.push(
    `${total} difference${total === 1 ? '' : 's'}: ${classified.documented.length} documented, ${classified.undocumented.length} not documented; ${classified.stale.length} stale entr${classified.stale.length === 1 ? 'y' : 'ies'}`,
  );
  return lines.join('\n');
}
