// The e2e results table (e2e/summary-table.ts): JUnit files as ginkgo writes them become rows of
// the specs that ran, the verdict (specs upstream passed and ours did not), and the README block
// between its markers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseJunit, replaceBetweenMarkers, summarize, type SuiteResult } from '../../e2e/summary-table.js';

const DESCRIBE = '[sig-storage] CSI Mock volume expansion';

interface Case {
  leaf: string;
  status: string;
  seconds: number;
  failure?: string;
}

/** A JUnit report shaped as ginkgo's writer shapes it (setup nodes are test cases too). */
function junit(...cases: Case[]): string {
  const testcase = (c: Case) => {
    const name = `[It] ${DESCRIBE} CSI Volume expansion ${c.leaf}`;
    const open = `<testcase name="${name}" classname="Kubernetes e2e suite" status="${c.status}" time="${c.seconds}"`;
    if (!c.failure) return `${open}></testcase>`;
    const body = `[FAILED] ${c.failure}\nIn [It] at: /root/go/pkg/mod/k8s.io/kubernetes@v1.36.3/test/e2e/x.go:7 @ 12/03/26 14:10:00.1\n\n  Spec Goroutine\n  goroutine 1 [select]`;
    // Escaped as Go's encoding/xml escapes text: newlines and quotes as numeric references.
    const escaped = body
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&#34;')
      .replace(/'/g, '&#39;')
      .replace(/\n/g, '&#xA;');
    return `${open}>\n<failure message="" type="failed">${escaped}</failure>\n<system-err>timeline</system-err>\n</testcase>`;
  };
  return `<?xml version="1.0" encoding="UTF-8"?>
  <testsuites tests="${cases.length + 2}" disabled="0" errors="0" failures="0" time="300.5">
    <testsuite name="Kubernetes e2e suite" package="/tmp/x" tests="${cases.length + 2}" time="300.5" timestamp="2026-12-03T14:08:37">
      <properties><property name="SuiteSucceeded" value="true"></property></properties>
      <testcase name="[ReportBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="0.0001"></testcase>
      <testcase name="[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="0.01"></testcase>
      ${cases.map(testcase).join('\n      ')}
    </testsuite>
  </testsuites>`;
}

const parse = (...cases: Case[]): SuiteResult => parseJunit(junit(...cases));

test('parseJunit keeps the [It] test cases, with status, time and the failure description', () => {
  const suite = parse(
    { leaf: 'grows', status: 'passed', seconds: 61.4 },
    { leaf: 'refuses', status: 'failed', seconds: 330, failure: 'Timed out <after> "5m" & the claim\'s status' },
  );
  assert.equal(suite.seconds, 300.5);
  assert.equal(suite.timestamp, '2026-12-03T14:08:37');
  assert.deepEqual(
    suite.specs.map((s) => [s.name, s.status, s.seconds]),
    [
      [`${DESCRIBE} CSI Volume expansion grows`, 'passed', 61.4],
      [`${DESCRIBE} CSI Volume expansion refuses`, 'failed', 330],
    ],
  );
  assert.equal(suite.specs[0]!.failure, undefined);
  assert.match(suite.specs[1]!.failure!, /^\[FAILED\] Timed out <after> "5m" & the claim's status\nIn \[It\] at: /);
});

test('parseJunit refuses a file that is not one ginkgo test suite', () => {
  assert.throws(() => parseJunit('<testsuites></testsuites>', 'x.xml'), /x\.xml: want one <testsuite>, found 0/);
  assert.throws(() => parseJunit('<testsuites><testsuite><testcase name="[It] a"></testcase></testsuite></testsuites>'), /has no status/);
});

test('one row per spec that ran, the shared Describe above the table, one column per image', () => {
  const s = summarize([
    { image: 'upstream', suite: parse({ leaf: 'grows', status: 'passed', seconds: 61 }, { leaf: 'refuses', status: 'passed', seconds: 184 }) },
    { image: 'ours', suite: parse({ leaf: 'grows', status: 'passed', seconds: 58 }, { leaf: 'refuses', status: 'passed', seconds: 180 }) },
  ]);
  assert.equal(
    s.table,
    [
      `Specs of \`${DESCRIBE} CSI Volume expansion\`:`,
      '',
      '| Spec | upstream | ours |',
      '|---|---|---|',
      '| grows | passed (61 s) | passed (58 s) |',
      '| refuses | passed (184 s) | passed (180 s) |',
    ].join('\n'),
  );
  assert.deepEqual(s.totals, [
    'upstream: 2 of 2 passed in 301 s (started 2026-12-03 14:08 UTC)',
    'ours: 2 of 2 passed in 301 s (started 2026-12-03 14:08 UTC)',
  ]);
  assert.deepEqual(s.failures, []);
  assert.deepEqual(s.regressions, []);
});

test('a spec upstream passed and ours failed is a regression, with its failure listed', () => {
  const s = summarize([
    {
      image: 'upstream',
      suite: parse({ leaf: 'grows', status: 'passed', seconds: 61 }, { leaf: 'recovers', status: 'failed', seconds: 300, failure: 'upstream timed out' }),
    },
    { image: 'ours', suite: parse({ leaf: 'grows', status: 'failed', seconds: 330, failure: 'While waiting for PV resize to finish\nmore' }) },
    { image: 'ours-uid1000', suite: parse({ leaf: 'grows', status: 'passed', seconds: 60 }, { leaf: 'recovers', status: 'passed', seconds: 90 }) },
  ]);
  assert.deepEqual(s.regressions, [`${DESCRIBE} CSI Volume expansion grows`]);
  assert.match(s.table, /\| recovers \| failed \(300 s\) \| not run \| passed \(90 s\) \|/);
  assert.deepEqual(s.failures, [
    `- upstream, ${DESCRIBE} CSI Volume expansion recovers: failed at k8s.io/kubernetes@v1.36.3/test/e2e/x.go:7: upstream timed out`,
    `- ours, ${DESCRIBE} CSI Volume expansion grows: failed at k8s.io/kubernetes@v1.36.3/test/e2e/x.go:7: While waiting for PV resize to finish more`,
  ]);
});

test('a spec upstream failed is no regression when ours fails it too', () => {
  const s = summarize([
    { image: 'upstream', suite: parse({ leaf: 'grows', status: 'failed', seconds: 61, failure: 'x' }) },
    { image: 'ours', suite: parse({ leaf: 'grows', status: 'failed', seconds: 61, failure: 'x' }) },
  ]);
  assert.deepEqual(s.regressions, []);
});

test('the README block between the markers is replaced, the rest kept; no markers is an error', () => {
  const s = summarize([
    { image: 'upstream', suite: parse({ leaf: 'grows', status: 'passed', seconds: 61 }, { leaf: 'shrinks', status: 'passed', seconds: 1 }) },
  ]);
  const readme = 'intro\n<!-- e2e-table:begin -->\nold table\n<!-- e2e-table:end -->\noutro\n';
  const out = replaceBetweenMarkers(readme, s, 'npm run e2e');
  assert.ok(out.startsWith('intro\n<!-- e2e-table:begin -->\nSpecs of'));
  assert.ok(out.endsWith('(`npm run e2e`).\n<!-- e2e-table:end -->\noutro\n'));
  assert.ok(!out.includes('old table'));
  assert.throws(() => replaceBetweenMarkers('no markers', s, 'npm run e2e'), /markers/);
});

test('the shared words above the table end where no bracket is open', () => {
  const suite = (...names: string[]): SuiteResult => ({
    seconds: 1,
    timestamp: '',
    specs: names.map((name) => ({ name, status: 'passed', seconds: 1 })),
  });
  const s = summarize([
    {
      image: 'upstream',
      suite: suite(
        '[sig-storage] CSI Volumes [Testpattern: Dynamic PV (default fs)(allowExpansion)] volume-expand grows',
        '[sig-storage] CSI Volumes [Testpattern: Dynamic PV (default fs)] volume-modify modifies',
      ),
    },
  ]);
  assert.ok(s.table.startsWith('Specs of `[sig-storage] CSI Volumes`:'), s.table);
  assert.match(s.table, /\| \[Testpattern: Dynamic PV \(default fs\)\] volume-modify modifies \| passed \(1 s\) \|/);
});
