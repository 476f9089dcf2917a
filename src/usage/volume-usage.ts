// The volume usage port: how full the filesystems of mounted claims are, as kubelet reads
// them (docs/auto-grow.md, "Where usage comes from"). Auto-grow asks for the claims it cares
// about, grouped by the node that mounts them; an adapter answers for every claim it was asked
// about, with a sample or with why there is none, so one node that cannot be read never hides
// the others. Adapters: kubelet's summary API on each node (kubelet-source.ts) and Prometheus's
// kubelet_volume_stats_* series (prometheus-source.ts).
import type { Node } from '../model/objects.js';

/** A claim, by namespace and name, as kubelet's pvcRef names it. */
export interface ClaimRef {
  readonly namespace: string;
  readonly name: string;
}

/** The claims a node mounts that usage is wanted for. */
export interface NodeClaims {
  readonly node: Node;
  readonly claims: readonly ClaimRef[];
}

/** One measurement of a claim's filesystem. */
export interface VolumeUsage {
  readonly capacityBytes: bigint;
  readonly availableBytes: bigint;
  /** Absent where the filesystem reports no inodes. */
  readonly inodes?: bigint;
  readonly inodesFree?: bigint;
  /** When the measurement was taken (kubelet's `time`; Prometheus's sample timestamp), ms since the epoch. */
  readonly sampledAtMs: number;
}

export const UsageUnavailable = {
  /** The Node reports no address of the types asked for. */
  NoAddress: 'noAddress',
  /** The connection failed (refused, unreachable, reset). */
  Unreachable: 'unreachable',
  /** No whole answer within the per-node (or per-query) timeout. */
  Timeout: 'timeout',
  /** The server's certificate was not trusted. */
  Tls: 'tls',
  /** 401: our credentials were not accepted. */
  Unauthorized: 'unauthorized',
  /** 403: accepted, but not allowed (the nodes/stats rule is missing). */
  Forbidden: 'forbidden',
  /** An error status, or a body that is not what the API returns. */
  BadResponse: 'badResponse',
  /** The answer has no entry for the claim (not mounted there, or not read yet). */
  NotReported: 'notReported',
} as const;
export type UsageUnavailable = (typeof UsageUnavailable)[keyof typeof UsageUnavailable];

export type ClaimUsage =
  { readonly kind: 'sampled'; readonly usage: VolumeUsage } | { readonly kind: 'unavailable'; readonly reason: UsageUnavailable; readonly message: string };

export interface UsageReport {
  /** One entry per claim asked for, keyed `namespace/name`. */
  readonly claims: ReadonlyMap<string, ClaimUsage>;
  /** Each source that failed (a node, a query), once, for the log. */
  readonly failures: readonly { readonly source: string; readonly reason: UsageUnavailable; readonly message: string }[];
}

export interface VolumeUsageSource {
  /** Usage of the claims on each node; never rejects for a failed node, only for the caller's abort. */
  readUsage(nodes: readonly NodeClaims[], signal: AbortSignal): Promise<UsageReport>;
}

export function claimKey(claim: ClaimRef): string {
  return `${claim.namespace}/${claim.name}`;
}

/** The newer of two samples of one claim (a claim several nodes mount is reported by each). */
export function newerUsage(a: ClaimUsage | undefined, b: ClaimUsage): ClaimUsage {
  if (a === undefined) return b;
  if (a.kind !== 'sampled') return b.kind === 'sampled' ? b : a;
  if (b.kind !== 'sampled') return a;
  return b.usage.sampledAtMs > a.usage.sampledAtMs ? b : a;
}
