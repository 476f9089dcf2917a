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

/** "1Gi of 10Gi free (threshold 1Gi)", and the inodes when they triggered. */
export function usageText(e: Evaluation, trigger: 'bytes' | 'inodes' = 'bytes'): string {
  const bytes = `${size(e.availableBytes)} of ${size(e.filesystemBytes)} free (threshold ${size(e.thresholdBytes)})`;
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
