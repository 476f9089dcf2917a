// What one sidecar shows of itself (its flags, its gates, its start-up metric families) and the
// differences between two of them, one per thing and aspect, with both sides' values as text.
// Pure: the facts are gathered by drift.ts.
import { describeOutcome, type GateTrial } from './gate-probe.js';
import type { FlagUsage, GateUsage } from './go-usage.js';
import type { MetricFamily } from './metric-families.js';

export const Area = { Flag: 'flag', Gate: 'gate', Metric: 'metric' } as const;
export type Area = (typeof Area)[keyof typeof Area];

export interface Difference {
  readonly area: Area;
  /** The flag (without its dash), gate or metric family. */
  readonly name: string;
  /** presence, type, default, help (flags); listed, set true, set false (gates); presence, type, help (metrics). */
  readonly aspect: string;
  readonly upstream: string;
  readonly ours: string;
}

export interface SidecarFacts {
  readonly flags: ReadonlyMap<string, FlagUsage>;
  /** The -feature-gates help without its list of gates (the gates are compared one by one). */
  readonly gateFlagProse: string;
  /** The gates -h lists (alpha and beta ones). */
  readonly listedGates: ReadonlyMap<string, GateUsage>;
  /** Every candidate gate, tried with each value. */
  readonly gateTrials: ReadonlyMap<string, GateTrial>;
  readonly metrics: ReadonlyMap<string, MetricFamily>;
}

export const ABSENT = '(absent)';
const ZERO_DEFAULT = '(zero value: no default printed)';
const FEATURE_GATES_FLAG = 'feature-gates';

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function names(...maps: ReadonlyMap<string, unknown>[]): string[] {
  return [...new Set(maps.flatMap((m) => [...m.keys()]))].sort(byName);
}

export function compareFlags(upstream: SidecarFacts, ours: SidecarFacts): Difference[] {
  const out: Difference[] = [];
  for (const name of names(upstream.flags, ours.flags)) {
    const u = upstream.flags.get(name);
    const o = ours.flags.get(name);
    if (!u || !o) {
      out.push({ area: Area.Flag, name, aspect: 'presence', upstream: u ? 'defined' : ABSENT, ours: o ? 'defined' : ABSENT });
      continue;
    }
    const aspect = (aspectName: string, a: string, b: string) => {
      if (a !== b) out.push({ area: Area.Flag, name, aspect: aspectName, upstream: a, ours: b });
    };
    aspect('type', u.typeWord || '(none: boolean)', o.typeWord || '(none: boolean)');
    aspect('default', u.printedDefault ?? ZERO_DEFAULT, o.printedDefault ?? ZERO_DEFAULT);
    if (name === FEATURE_GATES_FLAG) aspect('help', upstream.gateFlagProse, ours.gateFlagProse);
    else aspect('help', u.help, o.help);
  }
  return out;
}

function listing(gate: GateUsage | undefined): string {
  return gate ? `${gate.stage}, default=${gate.default}` : 'not listed';
}

export function compareGates(upstream: SidecarFacts, ours: SidecarFacts): Difference[] {
  const out: Difference[] = [];
  for (const name of names(upstream.listedGates, ours.listedGates, upstream.gateTrials, ours.gateTrials)) {
    const push = (aspect: string, a: string, b: string) => {
      if (a !== b) out.push({ area: Area.Gate, name, aspect, upstream: a, ours: b });
    };
    push('listed', listing(upstream.listedGates.get(name)), listing(ours.listedGates.get(name)));
    const u = upstream.gateTrials.get(name);
    const o = ours.gateTrials.get(name);
    const tried = (trial: GateTrial | undefined, value: boolean) => (trial ? describeOutcome(value ? trial.whenTrue : trial.whenFalse) : '(not tried)');
    push('set true', tried(u, true), tried(o, true));
    push('set false', tried(u, false), tried(o, false));
  }
  return out;
}

function presence(family: MetricFamily | undefined): string {
  if (!family) return ABSENT;
  return family.samples === 0 ? 'registered, no sample' : `registered, ${family.samples} sample${family.samples === 1 ? '' : 's'}`;
}

export interface MetricComparison {
  readonly differences: Difference[];
  /** Families ours shows without a sample and upstream does not show: Go's client hides such families, so they are not compared. */
  readonly unsampledInOursOnly: string[];
}

export function compareMetrics(upstream: SidecarFacts, ours: SidecarFacts): MetricComparison {
  const differences: Difference[] = [];
  const unsampledInOursOnly: string[] = [];
  for (const name of names(upstream.metrics, ours.metrics)) {
    const u = upstream.metrics.get(name);
    const o = ours.metrics.get(name);
    if (!u && o && o.samples === 0) {
      unsampledInOursOnly.push(name);
      continue;
    }
    if (!u || !o) {
      differences.push({ area: Area.Metric, name, aspect: 'presence', upstream: presence(u), ours: presence(o) });
      continue;
    }
    if (u.type !== o.type) differences.push({ area: Area.Metric, name, aspect: 'type', upstream: u.type, ours: o.type });
    if (u.help !== o.help) differences.push({ area: Area.Metric, name, aspect: 'help', upstream: u.help, ours: o.help });
  }
  return { differences, unsampledInOursOnly };
}
