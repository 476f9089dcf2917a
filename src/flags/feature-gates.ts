// `--feature-gates` (§2.4), resolved into a value handed to constructors, never a process global.
//
// The Go sidecar applies the flag to k8s.io/apiserver's process-wide gate, so it accepts more than
// its own four names: AllAlpha and AllBeta, every k8s.io/apiserver gate, and the component-base
// gates apiserver registers (zpages, metrics), all at Kubernetes 1.36, the version its go.mod
// pins (client-go, apiserver and component-base v0.36.1). We accept exactly that set, with the
// same rules and error texts: an unknown name is an error, a gate locked to its default refuses
// the other value, setting a GA or deprecated gate is logged as a warning, and AllAlpha/AllBeta
// set every alpha/beta gate not named explicitly. Only our four gates change behaviour; the
// others are accepted and do nothing, as they do in the Go binary.
//
// Two defaults differ from the v2.2.x tags on purpose: AnnotateFsResize is beta and on (as on
// upstream's main branch; the tags ship it alpha and off), and ReleaseLeaderElectionOnExit is on
// (upstream: alpha, off) so SIGTERM drains in-flight work and releases the Lease.

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
  RecoverVolumeExpansionFailure: { stage: GA, default: true },
  VolumeAttributesClass: { stage: GA, default: true },
  ReleaseLeaderElectionOnExit: { stage: Alpha, default: true },
} as const satisfies Record<string, GateSpec>;

export type GateName = keyof typeof RESIZER_GATES;

/** The two switches component-base adds to every gate set. */
const ALL_ALPHA = 'AllAlpha';
const ALL_BETA = 'AllBeta';

/**
 * Gates the Go binary registers besides its own, each at its state for Kubernetes 1.36 (the
 * last entry of its versioned spec at or below 1.36): k8s.io/apiserver/pkg/features and
 * k8s.io/component-base/{zpages,metrics}/features at v0.36.1. Accepted, without effect here.
 */
const INHERITED_GATES: Readonly<Record<string, GateSpec>> = {
  [ALL_ALPHA]: { stage: Alpha, default: false },
  [ALL_BETA]: { stage: Beta, default: false },
  APIResponseCompression: { stage: Beta, default: true },
  APIServerIdentity: { stage: Beta, default: true },
  APIServerTracing: { stage: GA, default: true, lockedToDefault: true },
  APIServingWithRoutine: { stage: Alpha, default: false },
  AggregatedDiscoveryRemoveBetaType: { stage: Deprecated, default: true, lockedToDefault: true },
  AllowParsingUserUIDFromCertAuth: { stage: Beta, default: true },
  AllowUnsafeMalformedObjectDeletion: { stage: Alpha, default: false },
  AnonymousAuthConfigurableEndpoints: { stage: GA, default: true, lockedToDefault: true },
  AuthorizeWithSelectors: { stage: GA, default: true, lockedToDefault: true },
  BtreeWatchCache: { stage: GA, default: true, lockedToDefault: true },
  CBORServingAndStorage: { stage: Alpha, default: false },
  ComponentFlagz: { stage: Beta, default: true },
  ComponentStatusz: { stage: Beta, default: true },
  ConcurrentWatchObjectDecode: { stage: Beta, default: false },
  ConsistentListFromCache: { stage: GA, default: true, lockedToDefault: true },
  ConstrainedImpersonation: { stage: Beta, default: true },
  CoordinatedLeaderElection: { stage: Beta, default: false },
  DeclarativeValidation: { stage: GA, default: true, lockedToDefault: true },
  DeclarativeValidationBeta: { stage: Beta, default: true },
  DeclarativeValidationTakeover: { stage: Deprecated, default: false },
  DetectCacheInconsistency: { stage: Beta, default: true },
  KMSv1: { stage: Deprecated, default: false },
  ListFromCacheSnapshot: { stage: Beta, default: true },
  ManifestBasedAdmissionControlConfig: { stage: Alpha, default: false },
  MutatingAdmissionPolicy: { stage: GA, default: true },
  NativeHistograms: { stage: Alpha, default: false },
  OpenAPIEnums: { stage: Beta, default: true },
  RemoteRequestHeaderUID: { stage: Beta, default: true },
  ResilientWatchCacheInitialization: { stage: GA, default: true, lockedToDefault: true },
  RetryGenerateName: { stage: GA, default: true, lockedToDefault: true },
  SeparateCacheWatchRPC: { stage: Deprecated, default: false, lockedToDefault: true },
  ShardedListAndWatch: { stage: Alpha, default: false },
  SizeBasedListCostEstimate: { stage: Beta, default: true },
  StorageVersionAPI: { stage: Alpha, default: false },
  StorageVersionHash: { stage: Beta, default: true },
  StreamingCollectionEncodingToJSON: { stage: GA, default: true, lockedToDefault: true },
  StreamingCollectionEncodingToProtobuf: { stage: GA, default: true, lockedToDefault: true },
  StructuredAuthenticationConfiguration: { stage: GA, default: true, lockedToDefault: true },
  StructuredAuthenticationConfigurationEgressSelector: { stage: Beta, default: true },
  StructuredAuthenticationConfigurationJWKSMetrics: { stage: Beta, default: true },
  TokenRequestServiceAccountUIDValidation: { stage: Beta, default: true },
  UnauthenticatedHTTP2DOSMitigation: { stage: Beta, default: true },
  UnknownVersionInteroperabilityProxy: { stage: Beta, default: true },
  WatchCacheInitializationPostStartHook: { stage: Beta, default: true },
  WatchList: { stage: Beta, default: true },
};

/** Every name `--feature-gates` accepts. */
export const KNOWN_GATES: ReadonlyMap<string, GateSpec> = new Map<string, GateSpec>([...Object.entries(INHERITED_GATES), ...Object.entries(RESIZER_GATES)]);

export interface FeatureGates {
  readonly annotateFsResize: boolean;
  readonly recoverVolumeExpansionFailure: boolean;
  readonly volumeAttributesClass: boolean;
  readonly releaseLeaderElectionOnExit: boolean;
  /** Gates the user named on the command line (VolumeAttributesClass auto-detection skips explicit ones). */
  readonly explicit: ReadonlySet<string>;
}

/** A gate set that component-base logs as "Warning: setting GA feature gate. ..." (or deprecated). */
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
    recoverVolumeExpansionFailure: get('RecoverVolumeExpansionFailure'),
    volumeAttributesClass: get('VolumeAttributesClass'),
    releaseLeaderElectionOnExit: get('ReleaseLeaderElectionOnExit'),
    explicit: new Set(entries.keys()),
  });
  return { gates, warnings };
}

export function withGate(gates: FeatureGates, changes: Partial<Omit<FeatureGates, 'explicit'>>): FeatureGates {
  return Object.freeze({ ...gates, ...changes });
}
