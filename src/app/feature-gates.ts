// The four feature gates (§2.4) as a value handed to constructors, never a process global.
// `--feature-gates=Name=true,Other=false`; unknown names are errors, as in component-base. ReleaseLeaderElectionOnExit defaults to true here (upstream: false, alpha):
// a SIGTERM drains in-flight work and releases the Lease instead of dying mid-operation.

export const GATE_DEFAULTS = {
  AnnotateFsResize: true,
  RecoverVolumeExpansionFailure: true,
  VolumeAttributesClass: true,
  ReleaseLeaderElectionOnExit: true,
} as const;

export type GateName = keyof typeof GATE_DEFAULTS;

export interface FeatureGates {
  readonly annotateFsResize: boolean;
  readonly recoverVolumeExpansionFailure: boolean;
  readonly volumeAttributesClass: boolean;
  readonly releaseLeaderElectionOnExit: boolean;
  /** Gates the user set on the command line (VolumeAttributesClass auto-detection skips explicit ones). */
  readonly explicit: ReadonlySet<GateName>;
}

export class FeatureGateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeatureGateError';
  }
}

function isGateName(name: string): name is GateName {
  return Object.hasOwn(GATE_DEFAULTS, name);
}

/**
 * The gates from `--feature-gates` entries (parsed by MapStringBoolValue: `Name=bool,...`).
 * An unknown name is an error, as in component-base.
 */
export function featureGatesFrom(entries: ReadonlyMap<string, boolean>): FeatureGates {
  for (const name of entries.keys()) {
    if (!isGateName(name)) {
      throw new FeatureGateError(`unrecognized feature gate: ${name} (known: ${Object.keys(GATE_DEFAULTS).join(', ')})`);
    }
  }
  const get = (name: GateName) => entries.get(name) ?? GATE_DEFAULTS[name];
  return Object.freeze({
    annotateFsResize: get('AnnotateFsResize'),
    recoverVolumeExpansionFailure: get('RecoverVolumeExpansionFailure'),
    volumeAttributesClass: get('VolumeAttributesClass'),
    releaseLeaderElectionOnExit: get('ReleaseLeaderElectionOnExit'),
    explicit: new Set([...entries.keys()].filter(isGateName)),
  });
}

export function withGate(gates: FeatureGates, changes: Partial<Omit<FeatureGates, 'explicit'>>): FeatureGates {
  return Object.freeze({ ...gates, ...changes });
}
