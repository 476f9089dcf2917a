// The four feature gates (§2.4) as a value handed to constructors, never a process global.
// `--feature-gates=Name=true,Other=false`; unknown names and non-boolean values are errors, as in
// component-base. ReleaseLeaderElectionOnExit defaults to true here (upstream: false, alpha):
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

/** Parses one or more `--feature-gates` values (later ones win, as with repeated Go flags). */
export function parseFeatureGates(values: readonly string[]): FeatureGates {
  const set = new Map<GateName, boolean>();
  for (const value of values) {
    for (const item of value.split(',')) {
      const trimmed = item.trim();
      if (trimmed === '') continue;
      const eq = trimmed.indexOf('=');
      if (eq < 0) throw new FeatureGateError(`missing bool value for ${trimmed}`);
      const name = trimmed.slice(0, eq).trim();
      const raw = trimmed.slice(eq + 1).trim();
      if (!isGateName(name)) {
        throw new FeatureGateError(`unrecognized feature gate: ${name} (known: ${Object.keys(GATE_DEFAULTS).join(', ')})`);
      }
      const parsed = parseGoBool(raw);
      if (parsed === undefined) throw new FeatureGateError(`invalid value of ${name}=${raw}, err: strconv.ParseBool: parsing "${raw}": invalid syntax`);
      set.set(name, parsed);
    }
  }
  const get = (name: GateName) => set.get(name) ?? GATE_DEFAULTS[name];
  return Object.freeze({
    annotateFsResize: get('AnnotateFsResize'),
    recoverVolumeExpansionFailure: get('RecoverVolumeExpansionFailure'),
    volumeAttributesClass: get('VolumeAttributesClass'),
    releaseLeaderElectionOnExit: get('ReleaseLeaderElectionOnExit'),
    explicit: new Set(set.keys()),
  });
}

/** Go's strconv.ParseBool. */
export function parseGoBool(raw: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(raw)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(raw)) return false;
  return undefined;
}

export function withGate(gates: FeatureGates, changes: Partial<Omit<FeatureGates, 'explicit'>>): FeatureGates {
  return Object.freeze({ ...gates, ...changes });
}
