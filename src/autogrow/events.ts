// The events auto-grow records on a claim (docs/auto-grow.md, "Events and metrics"). The reasons
// are a stable interface: alerts and tools match on them, so a reason is never renamed. The
// messages carry the facts an operator needs without `explain`: sizes, free space, the limit.
import { formatBytes } from '../model/quantity.js';
import type { Evaluation } from './decision.js';

export const AutoGrowReason = {
  /** Normal: the request was raised. */
  Grown: 'AutoGrowRequested',
  /** Normal: dry-run, the request would have been raised. */
  DryRun: 'AutoGrowDryRun',
  /** Warning: the claim needs more and is at resize.topolvm.io/storage_limit (once per limit value). */
  LimitReached: 'AutoGrowLimitReached',
  /** Warning: a bad annotation or state; the message lists every bad value. */
  InvalidPolicy: 'AutoGrowInvalidPolicy',
  /** Warning: the API server refused the new request (a ResourceQuota, a LimitRange, an admission plugin, RBAC). */
  Refused: 'AutoGrowRefused',
  /** Warning: the claim's usage could not be read (its kubelet unreachable, forbidden, timed out...). */
  UsageUnavailable: 'AutoGrowUsageUnavailable',
} as const;
export type AutoGrowReason = (typeof AutoGrowReason)[keyof typeof AutoGrowReason];

const size = (bytes: bigint) => formatBytes(bytes, 'BinarySI');

const MiB = 1n << 20n;
const UNITS: readonly (readonly [string, bigint])[] = [
  ['Ei', 1n << 60n],
  ['Pi', 1n << 50n],
  ['Ti', 1n << 40n],
  ['Gi', 1n << 30n],
  ['Mi', MiB],
  ['Ki', 1n << 10n],
];

/**
 * A size for a person reading an event: the exact quantity when it is whole mebibytes (10Gi,
 * 512Mi), else three figures in the largest binary unit (1.53Gi, 745Mi). A filesystem's free
 * space and a percentage threshold are rarely whole units, and "1607300Ki of 1984Mi free
 * (threshold 1664299827)" is hard to read; the exact bytes are in the log line beside the event.
 * Free space is rounded down and a threshold up, so a claim below its threshold never reads as
 * "1.55Gi free (threshold 1.55Gi)".
 */
export function readableSize(bytes: bigint, rounding: 'down' | 'up' | 'nearest' = 'nearest'): string {
  if (bytes % MiB === 0n) return size(bytes);
  const found = UNITS.find(([, scale]) => bytes >= scale);
  if (found === undefined) return `${bytes}`;
  const [unit, scale] = found;
  const whole = bytes / scale;
  const digits = whole >= 100n ? 0 : whole >= 10n ? 1 : 2;
  const factor = 10n ** BigInt(digits);
  const exact = bytes * factor;
  let scaled = exact / scale;
  const rest = exact % scale;
  if (rest !== 0n && (rounding === 'up' || (rounding === 'nearest' && 2n * rest >= scale))) scaled += 1n;
  const fraction = digits === 0 ? '' : `.${(scaled % factor).toString().padStart(digits, '0')}`.replace(/\.?0+$/, '');
  return `${scaled / factor}${fraction}${unit}`;
}

/** "1Gi of 10Gi free (threshold 1Gi)", and the inodes when they triggered. */
export function usageText(e: Evaluation, trigger: 'bytes' | 'inodes' = 'bytes'): string {
  const bytes = `${readableSize(e.availableBytes, 'down')} of ${readableSize(e.filesystemBytes)} free (threshold ${readableSize(e.thresholdBytes, 'up')})`;
  if (trigger === 'inodes' && e.inodesFree !== undefined && e.inodes !== undefined && e.inodesThreshold !== undefined) {
    return `${e.inodesFree} of ${e.inodes} inodes free (threshold ${e.inodesThreshold}); ${bytes}`;
  }
  return bytes;
}

export const AutoGrowMessage = {
  grown: (from: bigint, request: string, e: Evaluation, trigger: 'bytes' | 'inodes') =>
    `Raised the storage request from ${size(from)} to ${request}: ${usageText(e, trigger)}`,
  dryRun: (from: bigint, request: string, e: Evaluation, trigger: 'bytes' | 'inodes') =>
    `Dry run: would raise the storage request from ${size(from)} to ${request}: ${usageText(e, trigger)}`,
  limitReached: (limit: string, e: Evaluation) =>
    `The claim needs more space but is at its limit resize.topolvm.io/storage_limit=${limit}: ${usageText(e)}. Raise the limit to let it grow.`,
  refused: (request: string, message: string) => `The API server refused the storage request ${request}: ${message}`,
} as const;
