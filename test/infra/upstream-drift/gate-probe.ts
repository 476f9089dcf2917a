// What `--feature-gates` does with each gate, found by trying it: component-base's -h lists only
// alpha and beta gates, so a GA or deprecated gate (hidden), a removed one (refused) and a locked
// one (refused for one value) only show when set. Each value is tried for every candidate gate at
// once: the sidecar reads its gates before it looks for a cluster, so with none configured it
// ends right after, either refusing a gate ("Failed to set feature gates", naming it) or going on
// to "Failed to create cluster config" with every gate accepted (and a warning logged for each GA
// or deprecated one). A refused gate is taken out and the rest tried again, so a run costs one
// start per value plus one per refused gate. component-base stops at the first unknown name, in
// map order, which is why the loop rather than one run decides.
import { runToEnd, type Sidecar } from './sidecars.js';

/** What setting one gate to one value did. */
export type GateOutcome =
  /** `warning`: the word of component-base's "Warning: setting GA feature gate." (GA, deprecated) or of one of ours. */
  | { readonly kind: 'accepted'; readonly warning?: string }
  | { readonly kind: 'unrecognized' }
  | { readonly kind: 'locked'; readonly lockedTo: boolean }
  | { readonly kind: 'refused'; readonly message: string };

export interface GateTrial {
  readonly whenTrue: GateOutcome;
  readonly whenFalse: GateOutcome;
}

export function describeOutcome(outcome: GateOutcome): string {
  switch (outcome.kind) {
    case 'accepted':
      return outcome.warning ? `accepted, with the ${outcome.warning} gate warning` : 'accepted';
    case 'unrecognized':
      return 'refused: unrecognized feature gate';
    case 'locked':
      return `refused: locked to ${outcome.lockedTo}`;
    case 'refused':
      return `refused: ${outcome.message}`;
    default: {
      const unknown: never = outcome;
      throw new Error(`unknown gate outcome ${JSON.stringify(unknown)}`);
    }
  }
}

/** The gates one run refused, and whether it went on past the gates. */
export interface GateRunVerdict {
  readonly refused: ReadonlyMap<string, GateOutcome>;
  /** Gates the run warned about (GA, deprecated...), when it accepted them all. */
  readonly warnings: ReadonlyMap<string, string>;
  readonly accepted: boolean;
}

const UNRECOGNIZED = /unrecognized feature gate: ([A-Za-z0-9]+)/g;
/** A refusal of one value, up to the next error of an aggregate or the end of the quoted err field. */
const CANNOT_SET =
  /cannot set feature gate ([A-Za-z0-9]+) to (?:true|false), (.+?)(?=, cannot set feature gate |, unrecognized feature gate|\]?"(?:\s|$)|\]?$)/gm;
const LOCKED = /^feature is locked to (true|false)$/;
const WARNING = /Warning: setting (\S+) feature gate\.[^"]*"? featureGate="([A-Za-z0-9]+)"/g;
const GATES_FAILED = 'Failed to set feature gates';
const PAST_GATES = 'Failed to create cluster config';

/** Reads one run's log (klog text, either implementation). */
export function readGateRun(log: string): GateRunVerdict {
  const refused = new Map<string, GateOutcome>();
  if (log.includes(GATES_FAILED)) {
    for (const m of log.matchAll(UNRECOGNIZED)) refused.set(m[1]!, { kind: 'unrecognized' });
    for (const m of log.matchAll(CANNOT_SET)) {
      const locked = LOCKED.exec(m[2]!);
      refused.set(m[1]!, locked ? { kind: 'locked', lockedTo: locked[1] === 'true' } : { kind: 'refused', message: m[2]! });
    }
    if (refused.size === 0) throw new Error(`"${GATES_FAILED}" without a gate named in it:\n${log}`);
    return { refused, warnings: new Map(), accepted: false };
  }
  if (!log.includes(PAST_GATES)) throw new Error(`the run neither refused its gates nor went on to the cluster config:\n${log}`);
  const warnings = new Map<string, string>();
  for (const m of log.matchAll(WARNING)) warnings.set(m[2]!, m[1]!);
  return { refused, warnings, accepted: true };
}

async function tryValue(sidecar: Sidecar, candidates: readonly string[], value: boolean): Promise<Map<string, GateOutcome>> {
  const outcomes = new Map<string, GateOutcome>();
  let remaining = [...candidates];
  // Every run that does not accept refuses at least one gate, so this ends within candidates + 1 runs.
  for (let runs = 0; runs <= candidates.length; runs++) {
    const args = remaining.length === 0 ? [] : [`--feature-gates=${remaining.map((g) => `${g}=${value}`).join(',')}`];
    const { stderr, stdout } = await runToEnd(sidecar, args);
    const verdict = readGateRun(stderr + stdout);
    if (verdict.accepted) {
      for (const gate of remaining) {
        const warning = verdict.warnings.get(gate);
        outcomes.set(gate, warning ? { kind: 'accepted', warning } : { kind: 'accepted' });
      }
      return outcomes;
    }
    for (const [gate, outcome] of verdict.refused) outcomes.set(gate, outcome);
    const before = remaining.length;
    remaining = remaining.filter((g) => !verdict.refused.has(g));
    if (remaining.length === before) throw new Error(`${sidecar.label} refused gates it was not given: ${[...verdict.refused.keys()].join(', ')}`);
  }
  throw new Error(`${sidecar.label}: the gate trials did not settle`);
}

/** Tries every candidate gate set to true, then to false. */
export async function tryGates(sidecar: Sidecar, candidates: readonly string[]): Promise<Map<string, GateTrial>> {
  const whenTrue = await tryValue(sidecar, candidates, true);
  const whenFalse = await tryValue(sidecar, candidates, false);
  const trials = new Map<string, GateTrial>();
  for (const gate of candidates) trials.set(gate, { whenTrue: whenTrue.get(gate)!, whenFalse: whenFalse.get(gate)! });
  return trials;
}
