// What the resizer's /metrics can contain (the registry the process builds: createMetrics plus the
// resize-state gauges), and the metric names a PromQL expression reads, so that alerts and
// dashboards are checked against what we export rather than against a hand-written list.
import { createMetrics, registerProcessMetrics } from '../../src/observability/metrics.js';
import { registerResizeStateMetrics } from '../../src/observability/resize-state.js';
import { ResizeStateCensus } from '../../src/resize/state-census.js';

/** Every series name a scrape can show: histograms as _bucket, _sum and _count. */
export async function exportedMetricNames(): Promise<Set<string>> {
  const metrics = createMetrics();
  await registerProcessMetrics(metrics.registry);
  const census = new ResizeStateCensus({ driverName: 'kit.example.com', pvcs: { list: () => [] }, pvs: { get: () => undefined } });
  registerResizeStateMetrics({ registry: metrics.registry, snapshot: () => census.count() });
  const names = new Set<string>();
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    // prom-client's typings say a numeric enum; at run time the type is the exposition word.
    const type = metric.type as unknown as string;
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
    else if (type === 'summary') for (const suffix of ['', '_sum', '_count']) names.add(metric.name + suffix);
    else names.add(metric.name);
  }
  return names;
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression selects. Strings, label matchers, range/subquery brackets
 * and label lists of by/without/on/ignoring/group_* are removed first; what is left that is an
 * identifier not followed by "(" (a function or aggregation) and not a keyword is a metric name.
 * Grafana's $variables and $__interval macros live inside brackets and matchers, so they go too.
 */
export function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = stripped.slice(m.index! + m[0].length).trimStart();
    if (after.startsWith('(')) continue;
    if (KEYWORDS.has(m[0].toLowerCase())) continue;
    // A number's exponent ("1e3") is not a name.
    if (m.index! > 0 && /[0-9.]/.test(stripped[m.index! - 1]!)) continue;
    names.add(m[0]);
  }
  return [...names];
}
