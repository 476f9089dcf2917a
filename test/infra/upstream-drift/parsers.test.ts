// The drift check's readers on texts as the Go binary prints them: Go's flag usage, the gate lines
// of -feature-gates, the logs of gate trials, a scrape; and the documented list's own checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareFlags, compareMetrics, type SidecarFacts } from './compare.js';
import { readGateRun } from './gate-probe.js';
import { parseGoUsage, splitGateHelp } from './go-usage.js';
import { classify, parseKnownDifferences } from './known-differences.js';
import { parseScrape } from './metric-families.js';

const USAGE = [
  'Usage of csi-resizer:',
  '  -automaxprocs',
  '    \tautomatically set GOMAXPROCS to match Linux container CPU quota',
  '  -feature-gates value',
  '    \tA set of key=value paris that describe feature gates.Options are:',
  '    \tAllAlpha=true|false (ALPHA - default=false)',
  '    \tAnnotateFsResize=true|false (BETA - default=true)',
  '  -http-endpoint :8080',
  '    \tThe TCP network address (example: :8080). Only one of `--metrics-address` and `--http-endpoint` can be set.',
  '  -metrics-path /metrics',
  '    \tThe HTTP path. Default is /metrics. (default "/metrics")',
  '  -timeout duration',
  '    \tTimeout for waiting for CSI driver socket. (default 10s)',
  '  -x\tone-letter boolean',
  '',
].join('\n');

test('Go usage: name, type word, help and printed default of each flag; a one-letter flag on one line', () => {
  const flags = parseGoUsage(USAGE);
  assert.deepEqual([...flags.keys()], ['automaxprocs', 'feature-gates', 'http-endpoint', 'metrics-path', 'timeout', 'x']);
  assert.deepEqual(flags.get('automaxprocs'), {
    name: 'automaxprocs',
    typeWord: '',
    help: 'automatically set GOMAXPROCS to match Linux container CPU quota',
    printedDefault: undefined,
  });
  assert.equal(flags.get('http-endpoint')?.typeWord, ':8080');
  assert.equal(flags.get('metrics-path')?.printedDefault, '"/metrics"');
  assert.equal(flags.get('metrics-path')?.help, 'The HTTP path. Default is /metrics.');
  assert.equal(flags.get('timeout')?.printedDefault, '10s');
  assert.deepEqual(flags.get('x'), { name: 'x', typeWord: '', help: 'one-letter boolean', printedDefault: undefined });
  const { prose, gates } = splitGateHelp(flags.get('feature-gates')!.help);
  assert.equal(prose, 'A set of key=value paris that describe feature gates.Options are:');
  assert.deepEqual(
    [...gates.values()],
    [
      { name: 'AllAlpha', stage: 'ALPHA', default: false },
      { name: 'AnnotateFsResize', stage: 'BETA', default: true },
    ],
  );
});

test('Go usage: a line that is no part of a usage text is an error, not a dropped flag', () => {
  assert.throws(() => parseGoUsage('Usage of x:\n  -a string\n    \thelp\nsomething else\n'), /usage line 4 is not part of Go's flag usage/);
  assert.throws(() => parseGoUsage('    \torphan\n'), /continues no flag/);
  assert.throws(() => parseGoUsage('Usage of x:\n'), /no flags/);
});

test('gate trials: refusals of an aggregate, locked gates, our own refusals, and the warnings of an accepted run', () => {
  const aggregate = readGateRun(
    'E1203 20:28:23.975304    7019 main.go:143] "Failed to set feature gates" err="[cannot set feature gate SeparateCacheWatchRPC to true, feature is locked to false, cannot set feature gate AggregatedDiscoveryRemoveBetaType to false, feature is locked to true]"\n',
  );
  assert.equal(aggregate.accepted, false);
  assert.deepEqual(Object.fromEntries(aggregate.refused), {
    SeparateCacheWatchRPC: { kind: 'locked', lockedTo: false },
    AggregatedDiscoveryRemoveBetaType: { kind: 'locked', lockedTo: true },
  });
  const unknown = readGateRun('E1203 main.go:143] "Failed to set feature gates" err="unrecognized feature gate: Bogus"\n');
  assert.deepEqual(Object.fromEntries(unknown.refused), { Bogus: { kind: 'unrecognized' } });
  const ours = readGateRun(
    'E1203 exit.ts:83] "Failed to set feature gates" err="cannot set feature gate Old to false, feature was removed in external-resizer v2.3.0: what it selected is gone"\n',
  );
  assert.deepEqual(Object.fromEntries(ours.refused), {
    Old: { kind: 'refused', message: 'feature was removed in external-resizer v2.3.0: what it selected is gone' },
  });
  const accepted = readGateRun(
    [
      'I1203 feature_gate.go:477] "Warning: setting deprecated feature gate. It will be removed in a future release." featureGate="KMSv1" value=true',
      'I1203 feature_gate.go:477] "Warning: setting GA feature gate. It will be removed in a future release." featureGate="VolumeAttributesClass" value=true',
      'E1203 main.go:155] "Failed to create cluster config" err="unable to load in-cluster configuration"',
    ].join('\n'),
  );
  assert.equal(accepted.accepted, true);
  assert.deepEqual(Object.fromEntries(accepted.warnings), { KMSv1: 'deprecated', VolumeAttributesClass: 'GA' });
  assert.throws(() => readGateRun('I1203 "Version" version="v2.3.0"\nsomething else\n'), /neither refused its gates nor went on/);
});

test('a scrape: every family with its type, help and sample count, also a family without samples', () => {
  const families = parseScrape(
    [
      '# HELP a_total [ALPHA] A counter with a \\\\ backslash',
      '# TYPE a_total counter',
      'a_total{x="1"} 3',
      'a_total{x="2"} 4',
      '# HELP empty [BETA] Nothing yet',
      '# TYPE empty gauge',
      '',
    ].join('\n'),
  );
  assert.deepEqual(families.get('a_total'), { name: 'a_total', type: 'counter', help: '[ALPHA] A counter with a \\ backslash', samples: 2 });
  assert.deepEqual(families.get('empty'), { name: 'empty', type: 'gauge', help: '[BETA] Nothing yet', samples: 0 });
});

function facts(partial: Partial<SidecarFacts>): SidecarFacts {
  return { flags: new Map(), gateFlagProse: '', listedGates: new Map(), gateTrials: new Map(), metrics: new Map(), ...partial };
}

test('comparison: flags by presence, type, default and help; -feature-gates by its prose only', () => {
  const up = facts({
    flags: parseGoUsage(
      '  -a string\n    \thelp (default "x")\n  -feature-gates value\n    \tprose\n    \tA=true|false (ALPHA - default=false)\n  -gone\n    \tonly upstream\n',
    ),
    gateFlagProse: 'prose',
  });
  const ours = facts({
    flags: parseGoUsage('  -a duration\n    \thelp! (default 1s)\n  -feature-gates value\n    \tprose\n    \tB=true|false (BETA - default=true)\n'),
    gateFlagProse: 'prose',
  });
  assert.deepEqual(
    compareFlags(up, ours).map((d) => `${d.name} ${d.aspect}: ${d.upstream} | ${d.ours}`),
    ['a type: string | duration', 'a default: "x" | 1s', 'a help: help | help!', 'gone presence: defined | (absent)'],
  );
});

test("comparison: a family only ours shows without a sample is not compared (Go's client would not show it)", () => {
  const family = (name: string, samples: number, help = 'h') => [name, { name, type: 'counter', help, samples }] as const;
  const up = facts({ metrics: new Map([family('both', 1), family('upstream_only', 0)]) });
  const ours = facts({ metrics: new Map([family('both', 1, 'other'), family('ours_unsampled', 0), family('ours_sampled', 2)]) });
  const { differences, unsampledInOursOnly } = compareMetrics(up, ours);
  assert.deepEqual(unsampledInOursOnly, ['ours_unsampled']);
  assert.deepEqual(
    differences.map((d) => `${d.name} ${d.aspect}: ${d.upstream} | ${d.ours}`),
    ['both help: h | other', 'ours_sampled presence: (absent) | registered, 2 samples', 'upstream_only presence: registered, no sample | (absent)'],
  );
});

test('the documented list: a reason and an existing docs/differences page for every entry; names may end in *, values may be pinned', () => {
  const known = parseKnownDifferences(
    [
      '- {area: metric, name: go_*, aspect: presence, doc: docs/differences/node-deployment.md, reason: runtime}',
      '- {area: flag, name: node-deployment, aspect: presence, doc: docs/differences/node-deployment.md#what-a-replica-caches, reason: ours}',
      '- {area: gate, name: Stale, aspect: listed, doc: docs/differences/node-deployment.md, reason: gone}',
      '- {area: flag, name: pinned, aspect: presence, ours: b, upstream: x, doc: docs/differences/node-deployment.md, reason: these values only}',
    ].join('\n'),
    'inline',
  );
  const d = (area: 'flag' | 'metric', name: string) => ({ area, name, aspect: 'presence', upstream: 'a', ours: 'b' });
  const result = classify([d('metric', 'go_gc_duration_seconds'), d('flag', 'node-deployment'), d('flag', 'other'), d('flag', 'pinned')], known);
  assert.deepEqual(
    result.documented.map((x) => x.difference.name),
    ['go_gc_duration_seconds', 'node-deployment'],
  );
  assert.deepEqual(
    result.undocumented.map((x) => x.name),
    ['other', 'pinned'],
  );
  assert.deepEqual(
    result.stale.map((x) => x.name),
    ['Stale', 'pinned'],
  );
  assert.throws(
    () =>
      parseKnownDifferences(
        [
          '- {area: flag, name: a, aspect: presence, doc: docs/differences/no-such-page.md, reason: r}',
          '- {area: flag, name: b, aspect: colour, doc: docs/differences/node-deployment.md, reason: r}',
          '- {area: flag, name: c, aspect: help, doc: docs/differences/node-deployment.md}',
          '- {area: flag, name: d, aspect: help, doc: README.md, reason: r}',
        ].join('\n'),
        'inline',
      ),
    (err: unknown) =>
      err instanceof Error &&
      /entry 1: docs\/differences\/no-such-page\.md does not exist/.test(err.message) &&
      /entry 2: aspect must be one of/.test(err.message) &&
      /entry 3: no reason/.test(err.message) &&
      /entry 4: doc must be docs\/differences/.test(err.message),
  );
});
