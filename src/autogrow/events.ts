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
 * 512Mi), else about three figures in the largest binary unit (1.53Gi, 745Mi). A filesystem's
 * free space and a percentage threshold are rarely whole units, and "1607300Ki of 1984Mi free
 * (threshold 1664299827)" is hard to read. The exact bytes are in the log line beside the event.
 */
export function readableSize(bytes: bigint): string {
  if (bytes % MiB === 0n) return size(bytes);
  for (const [unit, scale] of UNITS) {
    if (bytes < scale) continue;
    const value = Number(bytes) / Number(scale);
    const digits = value >= 100 ? 0 : value >= 10 ? 1 : 2;
    return `${Number(value.toFixed(digits))}${unit}`;
  }
  return `${bytes}`;
}

/** "1Gi of 10Gi free (threshold 1Gi)", and the inodes when they triggered. */
export function usageText(e: Evaluation, trigger: 'bytes' | 'inodes' = 'bytes'): string {
  const bytes = `${readableSize(e.availableBytes)} of ${readableSize(e.filesystemBytes)} free (threshold ${readableSize(e.thresholdBytes)})`;
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
