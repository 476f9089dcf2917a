// The pure auto-grow decision (docs/auto-grow.md, "The decision"): given a claim, its
// StorageClass, a usage sample and the time, whether to raise the request and to what. Built so
// that it cannot overshoot or fight anyone:
//  - only an idle claim grows: bound, with a capacity, no resize or modify unfinished (the one
//    classifier of model/claim-state.ts, so the resize-state gauge, doctor and auto-grow agree),
//    and a request no larger than the capacity;
//  - only a sample taken after the claim's capacity last changed counts, and after a grow only
//    one whose filesystem has grown since: a stale sample cannot grow a claim twice;
//  - the new request is above the capacity (so above the request) and never above the limit;
//  - the cooldown counts from the last grow recorded on the claim, so it holds across restarts.
// The sizes follow pvc-autoresizer: thresholds of the filesystem's capacity, the increase of
// status.capacity, at least the minimum step, rounded up to a whole GiB, clamped to the limit.
import { modifyProgress, resizeProgress, type ClaimState } from '../model/claim-state.js';
import type { Pvc } from '../model/objects.js';
import { capacityBytes, requestedBytes } from '../model/pvc.js';
import { formatBytes } from '../model/quantity.js';
import { messageOf } from '../base/errors.js';
import type { ClaimUsage, UsageUnavailable } from '../usage/volume-usage.js';
import { amountOf, readPolicy, type AutoGrowDefaults, type AutoGrowPolicy, type NotOptedIn, type StorageClassView } from './policy.js';
import { lastGrowAnnotation, limitAlreadyReported, readLastGrow, type LastGrow } from './state.js';

const GiB = 1n << 30n;

export interface DecisionInput {
  readonly pvc: Pvc;
  readonly storageClass: StorageClassView | undefined;
  /** The claim's usage; undefined when it was not asked for (no pod mounts it). */
  readonly usage: ClaimUsage | undefined;
  /**
   * The earliest time the claim is known to have had its current status.capacity: when the
   * caller first saw it at this value (after a restart, when it first saw the claim at all).
   */
  readonly capacitySeenSinceMs: number;
  /** The resize queue's failure count for the claim's key (its backoff). */
  readonly resizeFailures: number;
  readonly nowMs: number;
  readonly defaults: AutoGrowDefaults;
}

/** What a decision compared, for logs, events and `explain`. */
export interface Evaluation {
  readonly capacityBytes: bigint;
  readonly filesystemBytes: bigint;
  readonly availableBytes: bigint;
  readonly thresholdBytes: bigint;
  readonly inodes: bigint | undefined;
  readonly inodesFree: bigint | undefined;
  readonly inodesThreshold: bigint | undefined;
  readonly limitBytes: bigint;
  /** When the cooldown of the last grow ends (undefined: no grow recorded). */
  readonly nextGrowAllowedAtMs: number | undefined;
}

export const NotIdle = {
  Deleting: 'deleting',
  NotBound: 'notBound',
  NoCapacity: 'noCapacity',
  /** A resize is unfinished: its state says which part. */
  Resizing: 'resizing',
  /** A VolumeAttributesClass change is unfinished (a driver may allow one change at a time). */
  Modifying: 'modifying',
} as const;
export type NotIdle = (typeof NotIdle)[keyof typeof NotIdle];

export const UnusableSample = {
  /** Taken before the claim's capacity last changed (or before the last grow). */
  OlderThanCapacity: 'olderThanCapacity',
  /** Reports a filesystem of no size (a volume still being set up). */
  NoCapacity: 'noCapacity',
  /** The filesystem is the size it was at the last grow, although the claim has grown since. */
  FilesystemNotGrown: 'filesystemNotGrown',
} as const;
export type UnusableSample = (typeof UnusableSample)[keyof typeof UnusableSample];

export type AutoGrowDecision =
  | { readonly kind: 'notOptedIn'; readonly reason: NotOptedIn }
  /** A bad annotation: one Warning event with the message, no action. */
  | { readonly kind: 'invalidPolicy'; readonly message: string }
  | { readonly kind: 'notIdle'; readonly reason: NotIdle; readonly state?: ClaimState }
  | { readonly kind: 'usageUnavailable'; readonly reason: UsageUnavailable | 'notMounted'; readonly message: string }
  | { readonly kind: 'unusableSample'; readonly reason: UnusableSample; readonly message: string }
  | { readonly kind: 'belowThreshold'; readonly evaluation: Evaluation }
  /**
   * The claim needs more but is at its limit; `notify` is false once the claim records the report.
   * `limit` is the limit in canonical form, the value the limit-reached record holds.
   */
  | { readonly kind: 'limitReached'; readonly evaluation: Evaluation; readonly notify: boolean; readonly limit: string }
  | { readonly kind: 'cooldown'; readonly evaluation: Evaluation; readonly nextGrowAllowedAtMs: number }
  | {
      readonly kind: 'grow';
      readonly evaluation: Evaluation;
      readonly trigger: 'bytes' | 'inodes';
      readonly fromBytes: bigint;
      readonly toBytes: bigint;
      /** spec.resources.requests.storage to write. */
      readonly request: string;
      /** The new request is the limit. */
      readonly reachesLimit: boolean;
      /** Say what would be done; write nothing. */
      readonly dryRun: boolean;
      /** The state annotations to write in the same patch as the request. */
      readonly annotations: Readonly<Record<string, string>>;
    };

export function decideAutoGrow(input: DecisionInput): AutoGrowDecision {
  const { pvc } = input;
  const reading = readPolicy(pvc, input.storageClass, input.defaults);
  if (reading.kind === 'notOptedIn') return { kind: 'notOptedIn', reason: reading.reason };
  const state = readLastGrow(pvc);
  if (reading.kind === 'invalid' || state.kind === 'invalid') {
    const messages = [
      reading.kind === 'invalid' ? reading.message : undefined,
      state.kind === 'invalid' ? `invalid auto-grow state: ${state.message}` : undefined,
    ];
    return { kind: 'invalidPolicy', message: messages.filter((m) => m !== undefined).join('; ') };
  }
  const { policy } = reading;
  const { lastGrow } = state;

  let requested: bigint;
  let capacity: bigint;
  try {
    requested = requestedBytes(pvc);
    capacity = capacityBytes(pvc);
  } catch (err) {
    return { kind: 'invalidPolicy', message: messageOf(err) };
  }
  const idle = idleness(pvc, input.resizeFailures, requested, capacity);
  if (idle !== undefined) return idle;
  if (policy.limitBytes < capacity) {
    return {
      kind: 'invalidPolicy',
      message: `invalid auto-grow policy: resize.topolvm.io/storage_limit ${policy.limit} is below the claim's capacity ${formatBytes(capacity, 'BinarySI')}`,
    };
  }

  const usage = input.usage;
  if (usage === undefined) return { kind: 'usageUnavailable', reason: 'notMounted', message: 'no pod mounts the claim: kubelet measures only mounted volumes' };
  if (usage.kind === 'unavailable') return { kind: 'usageUnavailable', reason: usage.reason, message: usage.message };
  const sample = usage.usage;
  const unusable = unusableSample(sample.sampledAtMs, sample.capacityBytes, capacity, lastGrow, input.capacitySeenSinceMs);
  if (unusable !== undefined) return unusable;

  const nextGrowAllowedAtMs = lastGrow === undefined ? undefined : lastGrow.atMs + policy.cooldownMs;
  const inodesKnown = sample.inodes !== undefined && sample.inodesFree !== undefined && sample.inodes > 0n;
  const evaluation: Evaluation = {
    capacityBytes: capacity,
    filesystemBytes: sample.capacityBytes,
    availableBytes: sample.availableBytes,
    thresholdBytes: amountOf(policy.threshold, sample.capacityBytes),
    inodes: sample.inodes,
    inodesFree: sample.inodesFree,
    inodesThreshold: inodesKnown ? amountOf(policy.inodesThreshold, sample.inodes!) : undefined,
    limitBytes: policy.limitBytes,
    nextGrowAllowedAtMs,
  };
  // As pvc-autoresizer compares: grow when free space is strictly below the threshold.
  const bytesLow = sample.availableBytes < evaluation.thresholdBytes;
  const inodesLow = evaluation.inodesThreshold !== undefined && sample.inodesFree! < evaluation.inodesThreshold;
  if (!bytesLow && !inodesLow) return { kind: 'belowThreshold', evaluation };
  if (capacity >= policy.limitBytes) return { kind: 'limitReached', evaluation, notify: !limitAlreadyReported(pvc, policy.limit), limit: policy.limit };
  if (nextGrowAllowedAtMs !== undefined && input.nowMs < nextGrowAllowedAtMs) return { kind: 'cooldown', evaluation, nextGrowAllowedAtMs };

  const toBytes = grownSize(policy, capacity);
  const reachesLimit = toBytes === policy.limitBytes;
  return {
    kind: 'grow',
    evaluation,
    trigger: bytesLow ? 'bytes' : 'inodes',
    fromBytes: capacity,
    toBytes,
    request: reachesLimit ? policy.limit : formatBytes(toBytes, 'BinarySI'),
    reachesLimit,
    dryRun: policy.dryRun,
    annotations: lastGrowAnnotation({ atMs: input.nowMs, fromBytes: capacity, toBytes, filesystemBytes: sample.capacityBytes }),
  };
}

/**
 * The new request: the capacity plus the increase (at least the minimum step), rounded up to a
 * whole GiB, no more than the limit. Above the capacity, since the capacity is below the limit.
 */
export function grownSize(policy: AutoGrowPolicy, capacity: bigint): bigint {
  const increase = amountOf(policy.increase, capacity);
  const step = increase > policy.minStepBytes ? increase : policy.minStepBytes;
  const rounded = ceilDiv(capacity + step, GiB) * GiB;
  // A zero step on a whole-GiB claim would ask for what it has: one more GiB then.
  const grown = rounded > capacity ? rounded : capacity + GiB;
  return grown < policy.limitBytes ? grown : policy.limitBytes;
}

function idleness(pvc: Pvc, resizeFailures: number, requested: bigint, capacity: bigint): AutoGrowDecision | undefined {
  if (pvc.metadata.deletionTimestamp) return { kind: 'notIdle', reason: NotIdle.Deleting };
  if (pvc.status?.phase !== 'Bound') return { kind: 'notIdle', reason: NotIdle.NotBound };
  // A claim still being set up reads as size 0: never "grow from 0".
  if (capacity <= 0n) return { kind: 'notIdle', reason: NotIdle.NoCapacity };
  const resize = resizeProgress(pvc, resizeFailures);
  if (resize !== undefined) return { kind: 'notIdle', reason: NotIdle.Resizing, state: resize.state };
  const modify = modifyProgress(pvc);
  if (modify !== undefined) return { kind: 'notIdle', reason: NotIdle.Modifying, state: modify.state };
  // The classifier calls a larger request "waiting"; this guards the invariant the new size relies on.
  if (requested > capacity) return { kind: 'notIdle', reason: NotIdle.Resizing };
  return undefined;
}

function unusableSample(
  sampledAtMs: number,
  filesystemBytes: bigint,
  capacity: bigint,
  lastGrow: LastGrow | undefined,
  capacitySeenSinceMs: number,
): AutoGrowDecision | undefined {
  const notBeforeMs = Math.max(capacitySeenSinceMs, lastGrow?.atMs ?? -Infinity);
  if (!(sampledAtMs > notBeforeMs)) {
    return {
      kind: 'unusableSample',
      reason: UnusableSample.OlderThanCapacity,
      message: `the usage sample (${new Date(sampledAtMs).toISOString()}) is not newer than the claim's capacity (${new Date(notBeforeMs).toISOString()})`,
    };
  }
  if (filesystemBytes <= 0n) return { kind: 'unusableSample', reason: UnusableSample.NoCapacity, message: 'the volume reports a filesystem of no size' };
  // The last grow took effect (the capacity moved) but the filesystem is the size it was then:
  // kubelet has not grown it. Growing again would only raise the request further.
  if (lastGrow !== undefined && capacity !== lastGrow.fromBytes && filesystemBytes === lastGrow.filesystemBytes) {
    return {
      kind: 'unusableSample',
      reason: UnusableSample.FilesystemNotGrown,
      message: `the filesystem is still ${filesystemBytes} bytes, as at the last grow to ${formatBytes(lastGrow.toBytes, 'BinarySI')}: waiting for it to grow`,
    };
  }
  return undefined;
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}
