// deploy/monitoring/dashboard/csi-resizer.json is a Grafana dashboard whose every query reads
// metrics the resizer exports: the ones it shares with upstream's sidecar and its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../cluster/components.js';
import { exportedMetricNames, metricNamesIn } from './exported-metrics.js';

const dashboardPath = join(repoRoot, 'deploy', 'monitoring', 'dashboard', 'csi-resizer.json');

interface Target {
  refId: string;
  expr: string;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  targets?: Target[];
  panels?: Panel[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query?: string | { query: string } }> };
}

function load(): Dashboard {
  const text = readFileSync(dashboardPath, 'utf8');
  try {
    return JSON.parse(text) as Dashboard;
  } catch (err) {
    throw new Error(`${dashboardPath} is not valid JSON`, { cause: err });
  }
}

const allPanels = (panels: Panel[]): Panel[] => panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);

test('the dashboard is JSON with a uid, unique panel ids and a query in every graph', () => {
  const dashboard = load();
  assert.equal(dashboard.uid, 'csi-resizer');
  const panels = allPanels(dashboard.panels);
  assert.equal(new Set(panels.map((p) => p.id)).size, panels.length, 'panel ids are unique');
  for (const panel of panels.filter((p) => p.type !== 'row')) {
    assert.ok((panel.targets ?? []).length > 0, `${panel.title} has no query`);
    for (const t of panel.targets!) assert.ok(t.expr.trim() !== '', `${panel.title} ${t.refId} is empty`);
  }
});

test('every query and variable reads only metrics the resizer exports, and every exported family is shown', async () => {
  const exported = await exportedMetricNames();
  const dashboard = load();
  const exprs = allPanels(dashboard.panels).flatMap((p) => (p.targets ?? []).map((t) => ({ where: `${p.title} ${t.refId}`, expr: t.expr })));
  for (const v of dashboard.templating.list.filter((v) => v.type === 'query')) {
    const query = typeof v.query === 'string' ? v.query : v.query!.query;
    // label_values(<selector>, <label>): the selector is the PromQL part.
    exprs.push({ where: `variable ${v.name}`, expr: query.replace(/^label_values\((.*),\s*\w+\)$/, '$1') });
  }
  const used = new Set<string>();
  for (const { where, expr } of exprs) {
    const names = metricNamesIn(expr);
    assert.ok(names.length > 0, `${where}: no metric in ${expr}`);
    for (const name of names) {
      assert.ok(exported.has(name), `${where} reads ${name}, which /metrics does not export`);
      used.add(name);
    }
  }
  // The resizer's and upstream's own families are all on the dashboard (the runtime's process_*
  // and nodejs_* only in part, the REST client's for its requests, latency and rate limiter).
  const families = [...exported]
    .filter((n) => /^(csi_|workqueue_|leader_election_|rest_client_(requests_total|request_duration_seconds|rate_limiter_duration_seconds))/.test(n))
    .map((n) => n.replace(/_(bucket|sum|count)$/, ''));
  for (const family of new Set(families)) {
    assert.ok(
      [...used].some((n) => n === family || n.startsWith(`${family}_`)),
      `${family} is not on the dashboard`,
    );
  }
});
