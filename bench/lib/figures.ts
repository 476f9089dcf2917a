// Samples per implementation, their summary, the ours/upstream ratio, and the table.
import type { Impl } from './resizer.js';

export interface Figure {
  scenario: string;
  name: string;
  unit: string;
  /** Which direction is better, for the reader of the table. */
  better: 'lower' | 'higher';
  /** How the samples are summarised: the median of the runs, or a percentile of all samples. */
  summary: 'median' | 'p90' | 'p99';
  samples: Record<Impl, number[]>;
}

export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  // Nearest rank.
  const rank = Math.min(s.length, Math.max(1, Math.ceil(q * s.length)));
  return s[rank - 1]!;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function summarize(f: Figure, impl: Impl): number {
  switch (f.summary) {
    case 'p90':
      return quantile(f.samples[impl], 0.9);
    case 'p99':
      return quantile(f.samples[impl], 0.99);
    default:
      return median(f.samples[impl]);
  }
}

export function ratio(f: Figure): number {
  const up = summarize(f, 'upstream');
  return up === 0 ? NaN : summarize(f, 'ours') / up;
}

export class Figures {
  readonly list: Figure[] = [];

  add(scenario: string, name: string, unit: string, better: Figure['better'], impl: Impl, value: number, summary: Figure['summary'] = 'median'): void {
    let f = this.list.find((x) => x.scenario === scenario && x.name === name);
    if (!f) {
      f = { scenario, name, unit, better, summary, samples: { ours: [], upstream: [] } };
      this.list.push(f);
    }
    f.samples[impl].push(value);
  }
}

function fmt(v: number): string {
  if (!Number.isFinite(v)) return '-';
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

export function table(figures: readonly Figure[]): string {
  const rows = [['scenario', 'figure', 'unit', 'ours', 'upstream', 'ours/upstream', 'better', 'n']];
  for (const f of figures) {
    rows.push([
      f.scenario,
      f.name,
      f.unit,
      fmt(summarize(f, 'ours')),
      fmt(summarize(f, 'upstream')),
      fmt(ratio(f)),
      f.better,
      `${f.samples.ours.length}/${f.samples.upstream.length}`,
    ]);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) => '| ' + r.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ') + ' |';
  return [line(rows[0]!), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...rows.slice(1).map(line)].join('\n');
}
