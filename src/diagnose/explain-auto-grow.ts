// `csi-resizer explain`, the auto-grow part (docs/auto-grow.md, "Explain and doctor"): the
// claim's usage, its thresholds and limit, what auto-grow decides now and when the next grow is
// allowed. Pure, and decided by the controller's own decision.ts, so the explanation cannot drift
// from what the controller does. One fact lives only in a running controller's memory: when it
// first saw the claim's current capacity. The explanation takes any sample as new enough and says so.
import { decideAutoGrow, type AutoGrowDecision } from '../autogrow/decision.js';
import { NotOptedIn, readPolicy, type AutoGrowDefaults, type StorageClassView } from '../autogrow/policy.js';
import { readLastGrow } from '../autogrow/state.js';
import type { Pvc } from '../model/objects.js';
import { formatBytes } from '../model/quantity.js';
import type { ClaimUsage } from '../usage/volume-usage.js';
import { formatAge } from './age.js';

export interface AutoGrowFacts {
  /** --auto-grow is on in the configuration explained. */
  readonly enabled: boolean;
  readonly storageClass: StorageClassView | undefined;
  /** The claim's usage as the configured source reads it; undefined when no pod mounts it or it was not read. */
  readonly usage: ClaimUsage | undefined;
  /** Why the usage was not read, when it was not (the flag is off, no pod mounts the claim...). */
  readonly usageNotRead?: string;
  readonly defaults: AutoGrowDefaults;
}

export interface AutoGrowExplanation {
  /** The decision's kind (grow, cooldown, belowThreshold, limitReached...). */
  readonly decision: AutoGrowDecision['kind'] | 'off';
  /** One line: what auto-grow does with the claim now. */
  readonly summary: string;
  readonly usage?: {
    readonly filesystem: string;
    readonly available: string;
    readonly threshold: string;
    readonly inodes?: string;
    readonly inodesThreshold?: string;
    readonly sampledAt: string;
  };
  readonly limit?: string;
  /** The new request a grow writes. */
  readonly growTo?: string;
  /** When the cooldown of the last grow ends (RFC 3339), when there was one. */
  readonly nextGrowAllowedAt?: string;
  readonly notes: string[];
}

const size = (bytes: bigint) => formatBytes(bytes, 'BinarySI');

const NOT_OPTED_IN: Record<NotOptedIn, string> = {
  noStorageClass: 'the claim names no StorageClass that exists',
  storageClassNotEnabled: 'its StorageClass does not have resize.topolvm.io/enabled: "true"',
  noLimit: 'the claim has no resize.topolvm.io/storage_limit',
  zeroLimit: 'its resize.topolvm.io/storage_limit is 0',
  blockVolume: 'it is a raw block volume (no filesystem to measure)',
};

/** Undefined when there is nothing to say: auto-grow is off and the claim does not opt in. */
export function explainAutoGrow(pvc: Pvc, facts: AutoGrowFacts, now: Date): AutoGrowExplanation | undefined {
  const reading = readPolicy(pvc, facts.storageClass, facts.defaults);
  const optedIn = reading.kind !== 'notOptedIn';
  if (!facts.enabled) {
    if (!optedIn) return undefined;
    return { decision: 'off', summary: 'the claim opts in, but this configuration has no --auto-grow: nothing grows it', notes: [] };
  }
  const d = decideAutoGrow({
    pvc,
    storageClass: facts.storageClass,
    usage: facts.usage,
    // The controller's memory (when it first saw this capacity) is not here: any sample counts.
    capacitySeenSinceMs: 0,
    resizeFailures: 0,
    nowMs: now.getTime(),
    defaults: facts.defaults,
  });
  const notes: string[] = [];
  const policy = reading.kind === 'policy' ? reading.policy : undefined;
  const state = readLastGrow(pvc);
  const lastGrow = state.kind === 'ok' ? state.lastGrow : undefined;
  if (lastGrow) notes.push(`last grow ${formatAge(now.getTime() - lastGrow.atMs)} ago, from ${size(lastGrow.fromBytes)} to ${size(lastGrow.toBytes)}`);
  const nextMs = lastGrow && policy ? lastGrow.atMs + policy.cooldownMs : undefined;
  if (facts.usageNotRead) notes.push(facts.usageNotRead);
  if (policy?.dryRun) notes.push('dry-run: auto-grow only says what it would do');
  const evaluation = 'evaluation' in d ? d.evaluation : undefined;
  const sample = facts.usage?.kind === 'sampled' ? facts.usage.usage : undefined;
  return {
    decision: d.kind,
    summary: summaryOf(d, now),
    ...(evaluation && sample
      ? {
          usage: {
            filesystem: size(evaluation.filesystemBytes),
            available: size(evaluation.availableBytes),
            threshold: size(evaluation.thresholdBytes),
            ...(evaluation.inodes !== undefined ? { inodes: `${evaluation.inodesFree ?? 0} of ${evaluation.inodes} free` } : {}),
            ...(evaluation.inodesThreshold !== undefined ? { inodesThreshold: String(evaluation.inodesThreshold) } : {}),
            sampledAt: new Date(sample.sampledAtMs).toISOString(),
          },
        }
      : {}),
    ...(policy ? { limit: policy.limit } : {}),
    ...(d.kind === 'grow' ? { growTo: d.request } : {}),
    ...(nextMs !== undefined ? { nextGrowAllowedAt: new Date(nextMs).toISOString() } : {}),
    notes,
  };
}

function summaryOf(d: AutoGrowDecision, now: Date): string {
  switch (d.kind) {
    case 'notOptedIn':
      return `not opted in: ${NOT_OPTED_IN[d.reason]}`;
    case 'invalidPolicy':
      return `no action: ${d.message}`;
    case 'notIdle':
      return `waits: ${d.reason === 'modifying' ? 'a VolumeAttributesClass change' : 'a resize'} is unfinished${d.state ? ` (${d.state})` : ` (${d.reason})`}`;
    case 'usageUnavailable':
      return `no usage: ${d.message}`;
    case 'unusableSample':
      return `waits for a newer sample: ${d.message}`;
    case 'belowThreshold':
      return `nothing to do: ${size(d.evaluation.availableBytes)} of ${size(d.evaluation.filesystemBytes)} free, threshold ${size(d.evaluation.thresholdBytes)}`;
    case 'limitReached':
      return `needs more, but is at its limit ${d.limit}${d.notify ? '' : ' (already reported)'}: raise resize.topolvm.io/storage_limit to let it grow`;
    case 'cooldown':
      return `needs more; waits for the cooldown until ${new Date(d.nextGrowAllowedAtMs).toISOString()} (in ${formatAge(d.nextGrowAllowedAtMs - now.getTime())})`;
    case 'grow':
      return `${d.dryRun ? 'would raise (dry-run)' : 'raises'} the request from ${size(d.fromBytes)} to ${d.request}: free ${d.trigger === 'inodes' ? 'inodes are' : 'space is'} below the threshold${d.reachesLimit ? ' (the limit)' : ''}`;
    default: {
      const unknown: never = d;
      throw new Error(`unhandled auto-grow decision ${String((unknown as { kind?: unknown }).kind)}`);
    }
  }
}
