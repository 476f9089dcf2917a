// The pure resize decision (§3.5 `expandAndRecover` and §3.4 legacy): given what the PVC and PV
// say, which size to ask the driver for, whether to rewrite the allocation status, or to do
// nothing. No I/O here: the reconcile acts on the plan, and the tables in plan.test.ts cover
// every row of the reference.
import { ResizeStatus } from '../model/names.js';

export interface ExpansionFacts {
  /** S: spec.resources.requests.storage */
  requestedBytes: bigint;
  /** P: the PV's spec.capacity.storage */
  pvBytes: bigint;
  /** A: status.allocatedResources.storage, when present */
  allocatedBytes: bigint | undefined;
  /** R: status.allocatedResourceStatuses.storage ('' when absent) */
  resizeStatus: string;
  /** The last controller expansion of this PVC ended with a final error. */
  hasFinalError: boolean;
  /** The PVC has FileSystemResizePending=True. */
  fileSystemResizePending: boolean;
  /** False for the trivial resizer of node-only drivers. */
  supportsControlPlaneExpansion: boolean;
}

export type ExpansionPlan =
  | { kind: 'nothing'; why: NothingReason; warnOldApiServer?: boolean }
  | {
      kind: 'expand';
      targetBytes: bigint;
      /** False when the target equals A: the status fields are already right, only re-mark Resizing. */
      rewritesAllocation: boolean;
      warnOldApiServer?: boolean;
    };

export type NothingReason =
  | 'node expansion in progress'
  | 'node expansion pending'
  | 'waiting for kubelet (FileSystemResizePending)';

/** Chooses the target of the recovery-aware algorithm (§3.5 step 3 and the A == target check of step 4). */
export function planExpansion(facts: ExpansionFacts): ExpansionPlan {
  const { requestedBytes: S, pvBytes: P, allocatedBytes: A, resizeStatus: R } = facts;
  const allocatedOrRequested = A ?? S;
  const expandTo = (targetBytes: bigint): Extract<ExpansionPlan, { kind: 'expand' }> => ({
    kind: 'expand',
    targetBytes,
    rewritesAllocation: A === undefined || A !== targetBytes,
  });

  if (P < S) {
    // The controller side still has to grow.
    switch (R) {
      case ResizeStatus.NodeResizeInfeasible:
        return expandTo(allocatedOrRequested);
      case ResizeStatus.NodeResizePending:
      case ResizeStatus.NodeResizeInProgress: {
        const target = allocatedOrRequested;
        // The volume already reached the allocated size: let the node finish.
        if (P >= target) return { kind: 'nothing', why: R === ResizeStatus.NodeResizePending ? 'node expansion pending' : 'node expansion in progress' };
        return expandTo(target);
      }
      case ResizeStatus.ControllerResizeInProgress:
        // A previous attempt that ended in a final error may be replaced by a new (smaller)
        // request; one whose outcome is unknown must be retried at the same size.
        return expandTo(facts.hasFinalError ? S : allocatedOrRequested);
      default:
        return expandTo(S);
    }
  }

  // P >= S: the controller side is already big enough.
  switch (R) {
    case ResizeStatus.NodeResizeInProgress:
      return { kind: 'nothing', why: 'node expansion in progress' };
    case ResizeStatus.NodeResizePending:
      return { kind: 'nothing', why: 'node expansion pending' };
    case ResizeStatus.NodeResizeInfeasible:
      // Re-arm node expansion; the trivial resizer always goes back to the request.
      return expandTo(facts.supportsControlPlaneExpansion && A !== undefined ? A : S);
    case ResizeStatus.ControllerResizeInProgress:
    case ResizeStatus.ControllerResizeInfeasible:
      // Expanded but not recorded, or the user shrank the request after the expansion.
      return expandTo(allocatedOrRequested);
    default:
      if (A !== undefined) return expandTo(A);
      if (facts.fileSystemResizePending) {
        return { kind: 'nothing', why: 'waiting for kubelet (FileSystemResizePending)', warnOldApiServer: true };
      }
      return { ...expandTo(S), warnOldApiServer: true };
  }
}

/** The legacy path's `pvNeedResize` size check (§3.4), after CanSupport and claimRef checks. */
export function legacyNeedsResize(facts: Pick<ExpansionFacts, 'requestedBytes' | 'pvBytes' | 'fileSystemResizePending'>): boolean {
  if (facts.pvBytes >= facts.requestedBytes) return !facts.fileSystemResizePending;
  return true;
}

/** `pvcNeedResize` (§3.3 step 5): bound, has a volume, and asks for more than it has. */
export function pvcNeedsResize(phase: string | undefined, volumeName: string | undefined, requestedBytes: bigint, capacityBytes: bigint): boolean {
  return phase === 'Bound' && !!volumeName && requestedBytes > capacityBytes;
}
