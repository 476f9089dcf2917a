// `--feature-gates` against component-base v0.36.1's rules as the Go sidecar applies them: the
// names it accepts, AllAlpha/AllBeta, locked gates, warnings and the error texts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FeatureGateError, knownFeatures, resolveFeatureGates, type FeatureGates } from './feature-gates.js';
import { MapStringBoolValue } from './go-flags.js';

function resolve(...values: string[]) {
  const flag = new MapStringBoolValue();
  for (const value of values) flag.set(value);
  return resolveFeatureGates(flag.entries);
}

type Ours = Omit<FeatureGates, 'explicit'>;
const DEFAULTS: Ours = { annotateFsResize: true, recoverVolumeExpansionFailure: true, volumeAttributesClass: true, releaseLeaderElectionOnExit: true };

test('accepted settings: our four gates, AllAlpha/AllBeta and the inherited gates', () => {
  const table: Array<{ flag: string[]; gates?: Partial<Ours>; warnings?: string[] }> = [
    { flag: [] },
    {
      flag: ['VolumeAttributesClass=false,AnnotateFsResize=F', 'AnnotateFsResize=1'],
      gates: { volumeAttributesClass: false },
      warnings: ['GA VolumeAttributesClass=false'],
    },
    { flag: ['ReleaseLeaderElectionOnExit=false'], gates: { releaseLeaderElectionOnExit: false } },
    { flag: ['RecoverVolumeExpansionFailure=false'], gates: { recoverVolumeExpansionFailure: false }, warnings: ['GA RecoverVolumeExpansionFailure=false'] },
    // AllAlpha/AllBeta set every alpha/beta gate that is not named explicitly, in either order.
    { flag: ['AllAlpha=false'], gates: { releaseLeaderElectionOnExit: false } },
    { flag: ['AllAlpha=false,ReleaseLeaderElectionOnExit=true'], gates: {} },
    { flag: ['ReleaseLeaderElectionOnExit=true,AllAlpha=false'], gates: {} },
    { flag: ['AllBeta=false'], gates: { annotateFsResize: false } },
    { flag: ['AllBeta=false,AnnotateFsResize=true'], gates: {} },
    { flag: ['AllAlpha=true,AllBeta=true'], gates: {} },
    // GA gates are not touched by AllBeta.
    { flag: ['AllBeta=false,AllAlpha=false'], gates: { annotateFsResize: false, releaseLeaderElectionOnExit: false } },
    // Gates the Go binary inherits from k8s.io/apiserver and component-base: accepted, no effect.
    { flag: ['WatchList=false,NativeHistograms=true,ComponentFlagz=false'], gates: {} },
    // A locked gate may be set to the value it is locked to (with the GA warning).
    { flag: ['APIServerTracing=true'], gates: {}, warnings: ['GA APIServerTracing=true'] },
    { flag: ['KMSv1=false'], gates: {}, warnings: ['deprecated KMSv1=false'] },
  ];
  for (const row of table) {
    const { gates, warnings } = resolve(...row.flag);
    const { explicit, ...ours } = gates;
    assert.deepEqual(ours, { ...DEFAULTS, ...row.gates }, row.flag.join(' '));
    assert.deepEqual(
      warnings.map((w) => `${/GA/.test(w.message) ? 'GA' : 'deprecated'} ${w.featureGate}=${w.value}`),
      row.warnings ?? [],
      row.flag.join(' '),
    );
    for (const name of row.flag
      .join(',')
      .split(',')
      .filter(Boolean)
      .map((p) => p.split('=')[0] ?? ''))
      assert.ok(explicit.has(name), `${name} explicit`);
  }
});

test("the warning texts are component-base's", () => {
  assert.deepEqual(resolve('VolumeAttributesClass=true').warnings, [
    { message: 'Warning: setting GA feature gate. It will be removed in a future release.', featureGate: 'VolumeAttributesClass', value: true },
  ]);
  assert.deepEqual(resolve('DeclarativeValidationTakeover=true').warnings, [
    { message: 'Warning: setting deprecated feature gate. It will be removed in a future release.', featureGate: 'DeclarativeValidationTakeover', value: true },
  ]);
});

test("refused settings carry component-base's error text", () => {
  const table: Array<[string, string]> = [
    ['NoSuchGate=true', 'unrecognized feature gate: NoSuchGate'],
    ['annotatefsresize=true', 'unrecognized feature gate: annotatefsresize'],
    ['LoggingBetaOptions=true', 'unrecognized feature gate: LoggingBetaOptions'], // the logging gates are private in the Go binary
    ['APIServerTracing=false', 'cannot set feature gate APIServerTracing to false, feature is locked to true'],
    ['SeparateCacheWatchRPC=true', 'cannot set feature gate SeparateCacheWatchRPC to true, feature is locked to false'],
    // Errors found before an unknown name are kept; nothing after it is looked at.
    [
      'BtreeWatchCache=false,Nope=true,Later=true',
      '[cannot set feature gate BtreeWatchCache to false, feature is locked to true, unrecognized feature gate: Nope]',
    ],
  ];
  for (const [flag, message] of table) {
    assert.throws(
      () => resolve(flag),
      (err: unknown) => err instanceof FeatureGateError && err.message === message,
      flag,
    );
  }
});

test('KnownFeatures: AllAlpha, AllBeta and the alpha and beta gates, sorted byte-wise, GA and deprecated hidden', () => {
  const known = knownFeatures();
  assert.deepEqual(known.slice(0, 5), [
    'APIResponseCompression=true|false (BETA - default=true)',
    'APIServerIdentity=true|false (BETA - default=true)',
    'APIServingWithRoutine=true|false (ALPHA - default=false)',
    'AllAlpha=true|false (ALPHA - default=false)',
    'AllBeta=true|false (BETA - default=false)',
  ]);
  assert.ok(known.includes('AnnotateFsResize=true|false (BETA - default=true)'));
  assert.ok(known.includes('ReleaseLeaderElectionOnExit=true|false (ALPHA - default=true)'));
  assert.ok(known.includes('NativeHistograms=true|false (ALPHA - default=false)'));
  for (const hidden of ['RecoverVolumeExpansionFailure', 'VolumeAttributesClass', 'APIServerTracing', 'KMSv1', 'MutatingAdmissionPolicy']) {
    assert.ok(!known.some((line) => line.startsWith(`${hidden}=`)), hidden);
  }
  assert.equal(known.length, 33);
});
