// deploy/monitoring/alerts/prometheus-rule.yaml: `promtool check rules` accepts it, `promtool test
// rules` passes the cases in prometheus-rules.cases.yaml (each alert fires when it should and
// stays quiet when it should not), and every expression reads only metrics the resizer exports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { repoRoot } from '../cluster/components.js';
import { exportedMetricNames, metricNamesIn } from './exported-metrics.js';
import { kitTools, runTool } from './tools.js';

const rulePath = join(repoRoot, 'deploy', 'monitoring', 'alerts', 'prometheus-rule.yaml');
const casesPath = join(repoRoot, 'test', 'kit', 'prometheus-rules.cases.yaml');

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
}
interface PrometheusRule {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: { groups: Array<{ name: string; rules: Rule[] }> };
}
interface Cases {
  tests: Array<{ alert_rule_test?: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
}

const prometheusRule = yaml.load(readFileSync(rulePath, 'utf8')) as PrometheusRule;
const rules = prometheusRule.spec.groups.flatMap((g) => g.rules);

test('the PrometheusRule has the six alerts operators page on, each with a severity', () => {
  assert.equal(prometheusRule.apiVersion, 'monitoring.coreos.com/v1');
  assert.equal(prometheusRule.kind, 'PrometheusRule');
  assert.deepEqual(
    rules.map((r) => r.alert),
    [
      'CSIResizerResizeStuck',
      'CSIResizerInfeasibleResize',
      'CSIResizerDriverUnavailable',
      'CSIResizerNoLeader',
      'CSIResizerWorkqueueBacklog',
      'CSIResizerRBACRuleMissing',
    ],
  );
  for (const rule of rules) assert.match(rule.labels?.['severity'] ?? '', /^(warning|critical)$/, rule.alert ?? 'an alert without a name');
});

test('every alert expression reads only metrics the resizer exports', async () => {
  const exported = await exportedMetricNames();
  for (const rule of rules) {
    const names = metricNamesIn(rule.expr);
    assert.ok(names.length > 0, `${rule.alert}: no metric found in ${rule.expr}`);
    for (const name of names) assert.ok(exported.has(name), `${rule.alert} reads ${name}, which /metrics does not export`);
  }
});

test('each alert has a case where it fires and one where it stays quiet', () => {
  const cases = yaml.load(readFileSync(casesPath, 'utf8')) as Cases;
  const evals = cases.tests.flatMap((t) => t.alert_rule_test ?? []);
  for (const rule of rules) {
    assert.ok(
      evals.some((e) => e.alertname === rule.alert && e.exp_alerts.length > 0),
      `${rule.alert} never fires in the cases`,
    );
    assert.ok(
      evals.some((e) => e.alertname === rule.alert && e.exp_alerts.length === 0),
      `${rule.alert} is never expected quiet`,
    );
  }
});

test('promtool check rules and promtool test rules pass', { timeout: 900_000 }, async (t) => {
  const { promtoolBin } = await kitTools();
  const dir = mkdtempSync(join(tmpdir(), 'rz-promtool-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // The PrometheusRule's spec is a Prometheus rule file.
  writeFileSync(join(dir, 'rules.yaml'), yaml.dump({ groups: prometheusRule.spec.groups }));
  copyFileSync(casesPath, join(dir, 'cases.yaml'));
  const check = await runTool(promtoolBin, ['check', 'rules', 'rules.yaml'], dir);
  assert.match(check.stdout, new RegExp(`SUCCESS: ${rules.length} rules found`));
  const run = await runTool(promtoolBin, ['test', 'rules', 'cases.yaml'], dir);
  assert.match(run.stdout, /SUCCESS/);
});
