// `--feature-gates` (§2.4), resolved into a value handed to constructors, never a process global.
//
// The Go sidecar (v2.3.0) applies the flag to k8s.io/apiserver's process-wide gate, so it accepts
// more than its own three names: AllAlpha and AllBeta, every k8s.io/apiserver gate, and the
// component-base gates apiserver registers (zpages, metrics), all at Kubernetes 1.37, the version
// its go.mod pins (client-go, apiserver and component-base v0.37.1). We accept exactly that set,
// with the same rules and error texts: an unknown name is an error, a gate locked to its default
// refuses the other value, setting a GA or deprecated gate is logged as a warning, and
// AllAlpha/AllBeta set every alpha/beta gate not named explicitly. Only our three gates change
// behaviour; the others are accepted and do nothing, as they do in the Go binary.
//
// Two choices are ours. ReleaseLeaderElectionOnExit is on (upstream: alpha, off) so SIGTERM drains
// in-flight work and releases the Lease. RecoverVolumeExpansionFailure, removed upstream in v2.3.0
// with the legacy resize path, is still accepted set to true, the one behaviour left, with a
// warning, so a v2.2 manifest keeps starting; set to false it is refused, because what it selected
// is gone (docs/differences/removed-gate.md).

/** component-base's prerelease words, as KnownFeatures prints them ("" for GA). */
export const GateStage = { Alpha: 'ALPHA', Beta: 'BETA', GA: '', Deprecated: 'DEPRECATED' } as const;
export type GateStage = (typeof GateStage)[keyof typeof GateStage];

export interface GateSpec {
  readonly stage: GateStage;
  readonly default: boolean;
  readonly lockedToDefault?: boolean;
}

const { Alpha, Beta, GA, Deprecated } = GateStage;

/** The gates whose values change what this program does, with our defaults. */
export const RESIZER_GATES = {
  AnnotateFsResize: { stage: Beta, default: true },
  VolumeAttributesClass: { stage: GA, default: true },
  ReleaseLeaderElectionOnExit: { stage: Alpha, default: true },
} as const satisfies Record<string, GateSpec>;

export type GateName = keyof typeof RESIZER_GATES;

/** The two switches component-base adds to every gate set. */
const ALL_ALPHA = 'AllAlpha';
const ALL_BETA = 'AllBeta';

/**
 * Gates the Go binary registers besides its own, each at its state for Kubernetes 1.37 (the
 * last entry of its versioned spec at or below 1.37): k8s.io/apiserver/pkg/features and
 * k8s.io/component-base/{zpages,metrics}/features at v0.37.1. Accepted, without effect here.
 */
const INHERITED_GATES: Readonly<Record<string, GateSpec>> = {
  [ALL_ALPHA]: { stage: Alpha, default: false },
  [ALL_BETA]: { stage: Beta, default: false },
  APIResponseCompression: { stage: Beta, default: true },
  APIServerIdentity: { stage: Beta, default: true },
  APIServerWebhookAuthenticationToken: { stage: Alpha, default: false },
  APIServingWithRoutine: { stage: Alpha, default: false },
  AggregatedDiscoveryRemoveBetaType: { stage: Deprecated, default: true, lockedToDefault: true },
  AllowParsingUserUIDFromCertAuth: { stage: Beta, default: true },
  AllowUnsafeMalformedObjectDeletion: { stage: Beta, default: true },
  CBORServingAndStorage: { stage: Alpha, default: false },
  ComponentFlagz: { stage: Beta, default: true },
  ComponentStatusz: { stage: Beta, default: true },
  ConcurrentWatchObjectDecode: { stage: Beta, default: true },
  ConsistentListFromCacheSkipTimeoutFallback: { stage: Alpha, default: false },
  ConstrainedImpersonation: { stage: Beta, default: true },
  CoordinatedLeaderElection: { stage: Beta, default: false },
  DeclarativeValidation: { stage: GA, default: true, lockedToDefault: true },
  DeclarativeValidationBeta: { stage: Beta, default: true },
  DeclarativeValidationTakeover: { stage: Deprecated, default: false, lockedToDefault: true },
  DetectCacheInconsistency: { stage: Beta, default: true },
  EtcdRangeStream: { stage: Beta, default: true },
  ExcludeAdmissionWebhookVirtualResources: { stage: Beta, default: true },
  KMSv1: { stage: Deprecated, default: false },
  ListFromCacheSnapshot: { stage: Beta, default: true },
  ManifestBasedAdmissionControlConfig: { stage: Beta, default: true },
  MutatingAdmissionPolicy: { stage: GA, default: true },
  NativeHistograms: { stage: Beta, default: true },
  OpenAPIEnums: { stage: Beta, default: true },
  RemoteRequestHeaderUID: { stage: Beta, default: true },
  SeparateCacheWatchRPC: { stage: Deprecated, default: false, lockedToDefault: true },
  ShardedListAndWatch: { stage: Alpha, default: false },
  SizeBasedListCostEstimate: { stage: Beta, default: true },
  StorageVersionAPI: { stage: Alpha, default: false },
  StorageVersionHash: { stage: Beta, default: true },
  StructuredAuthenticationConfigurationEgressSelector: { stage: Beta, default: true },
  StructuredAuthenticationConfigurationJWKSMetrics: { stage: Beta, default: true },
  TokenRequestServiceAccountUIDValidation: { stage: Beta, default: true },
  UnauthenticatedHTTP2DOSMitigation: { stage: Beta, default: true },
  UnknownVersionInteroperabilityProxy: { stage: Beta, default: true },
  WatchCacheInitializationPostStartHook: { stage: GA, default: true, lockedToDefault: true },
  WatchList: { stage: Beta, default: true },
  WatchListCompression: { stage: Beta, default: true },
  WebhookRoundTripLoadBalancing: { stage: Beta, default: true },
};

/** A gate upstream removed: the value whose behaviour is left, and why the other one is refused. */
interface RemovedGate {
  readonly keptValue: boolean;
  readonly removedIn: string;
  readonly refusal: string;
}

/** Gates a manifest for an earlier release may still set; -h does not list them (upstream no longer knows them). */
const REMOVED_GATES: ReadonlyMap<string, RemovedGate> = new Map([
  [
    'RecoverVolumeExpansionFailure',
    {
      keptValue: true,
      removedIn: 'v2.3.0',
      refusal: 'the legacy resize path it selected no longer exists (recovery from expansion failures is always on); remove it from --feature-gates',
    },
  ],
]);

/** The warning for a removed gate set to its kept value. */
function removedGateWarning(gate: RemovedGate): string {
  return `Warning: setting removed feature gate. It has no effect; upstream external-resizer refuses it since ${gate.removedIn}, and a later release will refuse it too.`;
}

/** Every name `--feature-gates` accepts but the removed ones. */
export const KNOWN_GATES: ReadonlyMap<string, GateSpec> = new Map<string, GateSpec>([...Object.entries(INHERITED_GATES), ...Object.entries(RESIZER_GATES)]);

export interface FeatureGates {
  readonly annotateFsResize: boolean;
  readonly volumeAttributesClass: boolean;
  readonly releaseLeaderElectionOnExit: boolean;
  /** Gates the user named on the command line (VolumeAttributesClass auto-detection skips explicit ones). */
  readonly explicit: ReadonlySet<string>;
}

/**
 * A gate set that component-base logs as "Warning: setting GA feature gate. ..." (or deprecated),
 * or a removed gate set to the behaviour that is left.
 */
export interface GateWarning {
  readonly message: string;
  readonly featureGate: string;
  readonly value: boolean;
}

export class FeatureGateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeatureGateError';
  }
}

/** Byte-wise order, as Go's sort.Strings. */
function byBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * component-base's KnownFeatures(): `Name=true|false (STAGE - default=x)` for AllAlpha, AllBeta
 * and every alpha or beta gate (GA and deprecated ones are hidden), sorted.
 */
export function knownFeatures(): string[] {
  const lines: string[] = [];
  for (const [name, spec] of KNOWN_GATES) {
    if (spec.stage === GA || spec.stage === Deprecated) continue;
    lines.push(`${name}=true|false (${spec.stage} - default=${spec.default})`);
  }
  return lines.sort(byBytes);
}

/** utilerrors.NewAggregate's message: one error as is, several as "[a, b]" without repeats. */
function aggregate(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? (unique[0] as string) : `[${unique.join(', ')}]`;
}

/**
 * The gates from `--feature-gates` entries (`Name=bool`, already parsed), with component-base's
 * SetFromMap rules. Throws FeatureGateError with its message; returns the warnings it would log.
 */
export function resolveFeatureGates(entries: ReadonlyMap<string, boolean>): { gates: FeatureGates; warnings: GateWarning[] } {
  const enabled = new Map<string, boolean>();
  const errors: string[] = [];
  const warnings: GateWarning[] = [];
  for (const [name, value] of entries) {
    // Upstream refuses a removed gate as unrecognized (component-base knows no removal); we keep
    // the value whose behaviour is left working for one more release (see the header).
    const removed = REMOVED_GATES.get(name);
    if (removed) {
      if (value === removed.keptValue) warnings.push({ message: removedGateWarning(removed), featureGate: name, value });
      else errors.push(`cannot set feature gate ${name} to ${value}, feature was removed in external-resizer ${removed.removedIn}: ${removed.refusal}`);
      continue;
    }
    const spec = KNOWN_GATES.get(name);
    if (!spec) {
      // component-base stops at the first unknown name, keeping the errors found before it.
      errors.push(`unrecognized feature gate: ${name}`);
      break;
    }
    if (spec.lockedToDefault && spec.default !== value) {
      errors.push(`cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`);
      continue;
    }
    if (name === ALL_ALPHA || name === ALL_BETA) {
      const stage = name === ALL_ALPHA ? Alpha : Beta;
      for (const [other, otherSpec] of KNOWN_GATES) {
        if (other === ALL_ALPHA || other === ALL_BETA || otherSpec.stage !== stage) continue;
        // A gate named explicitly wins whichever comes first on the command line.
        if (!entries.has(other) && !enabled.has(other)) enabled.set(other, value);
      }
      enabled.set(name, value);
      continue;
    }
    enabled.set(name, value);
    if (spec.stage === Deprecated) {
      warnings.push({ message: 'Warning: setting deprecated feature gate. It will be removed in a future release.', featureGate: name, value });
    } else if (spec.stage === GA) {
      warnings.push({ message: 'Warning: setting GA feature gate. It will be removed in a future release.', featureGate: name, value });
    }
  }
  if (errors.length > 0) throw new FeatureGateError(aggregate(errors));

  const get = (name: GateName) => enabled.get(name) ?? RESIZER_GATES[name].default;
  const gates: FeatureGates = Object.freeze({
    annotateFsResize: get('AnnotateFsResize'),
    volumeAttributesClass: get('VolumeAttributesClass'),
    releaseLeaderElectionOnExit: get('ReleaseLeaderElectionOnExit'),
    explicit: new Set(entries.keys()),
  });
  return { gates, warnings };
}

export function withGate(gates: FeatureGates, changes: Partial<Omit<FeatureGates, 'explicit'>>): FeatureGates {
  return Object.freeze({ ...gates, ...changes });
}
