// `--feature-gates` against component-base v0.37.1's rules as the Go sidecar (v2.3.0) applies
// them: the names it accepts, AllAlpha/AllBeta, locked gates, warnings and the error texts; and
// our handling of the gate v2.3.0 removed.
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
const DEFAULTS: Ours = { annotateFsResize: true, volumeAttributesClass: true, releaseLeaderElectionOnExit: true };

test('accepted settings: our three gates, AllAlpha/AllBeta and the inherited gates', () => {
  const table: Array<{ flag: string[]; gates?: Partial<Ours>; warnings?: string[] }> = [
    { flag: [] },
    {
      flag: ['VolumeAttributesClass=false,AnnotateFsResize=F', 'AnnotateFsResize=1'],
      gates: { volumeAttributesClass: false },
      warnings: ['GA VolumeAttributesClass=false'],
    },
    { flag: ['ReleaseLeaderElectionOnExit=false'], gates: { releaseLeaderElectionOnExit: false } },
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
    { flag: ['DeclarativeValidation=true'], gates: {}, warnings: ['GA DeclarativeValidation=true'] },
    { flag: ['SeparateCacheWatchRPC=false'], gates: {}, warnings: ['deprecated SeparateCacheWatchRPC=false'] },
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
  assert.deepEqual(resolve('KMSv1=true').warnings, [
    { message: 'Warning: setting deprecated feature gate. It will be removed in a future release.', featureGate: 'KMSv1', value: true },
  ]);
});

test("refused settings carry component-base's error text", () => {
  const table: Array<[string, string]> = [
    ['NoSuchGate=true', 'unrecognized feature gate: NoSuchGate'],
    ['annotatefsresize=true', 'unrecognized feature gate: annotatefsresize'],
    ['LoggingBetaOptions=true', 'unrecognized feature gate: LoggingBetaOptions'], // the logging gates are private in the Go binary
    ['DeclarativeValidation=false', 'cannot set feature gate DeclarativeValidation to false, feature is locked to true'],
    ['SeparateCacheWatchRPC=true', 'cannot set feature gate SeparateCacheWatchRPC to true, feature is locked to false'],
    // Locked at 1.37, settable at 1.36.
    ['DeclarativeValidationTakeover=true', 'cannot set feature gate DeclarativeValidationTakeover to true, feature is locked to false'],
    ['WatchCacheInitializationPostStartHook=false', 'cannot set feature gate WatchCacheInitializationPostStartHook to false, feature is locked to true'],
    // Gone from k8s.io/apiserver at 1.37.
    ['APIServerTracing=true', 'unrecognized feature gate: APIServerTracing'],
    ['BtreeWatchCache=true', 'unrecognized feature gate: BtreeWatchCache'],
    // Errors found before an unknown name are kept; nothing after it is looked at.
    [
      'DeclarativeValidation=false,Nope=true,Later=true',
      '[cannot set feature gate DeclarativeValidation to false, feature is locked to true, unrecognized feature gate: Nope]',
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
  assert.deepEqual(known.slice(0, 6), [
    'APIResponseCompression=true|false (BETA - default=true)',
    'APIServerIdentity=true|false (BETA - default=true)',
    'APIServerWebhookAuthenticationToken=true|false (ALPHA - default=false)',
    'APIServingWithRoutine=true|false (ALPHA - default=false)',
    'AllAlpha=true|false (ALPHA - default=false)',
    'AllBeta=true|false (BETA - default=false)',
  ]);
  assert.ok(known.includes('AnnotateFsResize=true|false (BETA - default=true)'));
  assert.ok(known.includes('ReleaseLeaderElectionOnExit=true|false (ALPHA - default=true)'));
  assert.ok(known.includes('NativeHistograms=true|false (BETA - default=true)'));
  for (const hidden of ['RecoverVolumeExpansionFailure', 'VolumeAttributesClass', 'DeclarativeValidation', 'KMSv1', 'MutatingAdmissionPolicy']) {
    assert.ok(!known.some((line) => line.startsWith(`${hidden}=`)), hidden);
  }
  assert.equal(known.length, 38);
});

test('RecoverVolumeExpansionFailure, removed upstream in v2.3.0: =true is accepted with one warning and changes nothing', () => {
  const { gates, warnings } = resolve('RecoverVolumeExpansionFailure=true');
  const { explicit, ...ours } = gates;
  assert.deepEqual(ours, DEFAULTS);
  assert.deepEqual(warnings, [
    {
      message:
        'Warning: setting removed feature gate. It has no effect; upstream external-resizer refuses it since v2.3.0, and a later release will refuse it too.',
      featureGate: 'RecoverVolumeExpansionFailure',
      value: true,
    },
  ]);
  assert.ok(explicit.has('RecoverVolumeExpansionFailure'));
  // AllAlpha/AllBeta never touch it, and it is not listed among the known gates.
  assert.equal(resolve('AllBeta=false,AllAlpha=false').warnings.length, 0);
  assert.ok(!knownFeatures().some((line) => line.startsWith('RecoverVolumeExpansionFailure=')));
});

test('RecoverVolumeExpansionFailure=false is refused: the legacy resize path no longer exists', () => {
  const refusal =
    'cannot set feature gate RecoverVolumeExpansionFailure to false, feature was removed in external-resizer v2.3.0: ' +
    'the legacy resize path it selected no longer exists (recovery from expansion failures is always on); remove it from --feature-gates';
  for (const [flag, message] of [
    ['RecoverVolumeExpansionFailure=false', refusal],
    ['RecoverVolumeExpansionFailure=0,AnnotateFsResize=false', refusal],
    // Collected with the other errors, as component-base aggregates them.
    [
      'RecoverVolumeExpansionFailure=false,DeclarativeValidation=false',
      `[${refusal}, cannot set feature gate DeclarativeValidation to false, feature is locked to true]`,
    ],
  ] as const) {
    assert.throws(
      () => resolve(flag),
      (err: unknown) => err instanceof FeatureGateError && err.message === message,
      flag,
    );
  }
});
