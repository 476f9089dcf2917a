// The pure resize decision (§3.5 `expandAndRecover`, with its slow-set gate):
// given what the PVC and PV say and what the controller remembers about the key, which size to
// ask the driver for, whether to rewrite the allocation status, to wait, or to do nothing. No I/O
// here: the reconcile acts on the decision, and the tables in plan.test.ts cover every row of
// the reference.
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
  /** The key is in the slow set (looked at before this decision adds it). */
  inSlowSet: boolean;
}

export type ExpansionPlan =
  | { kind: 'nothing'; why: NothingReason; warnOldApiServer?: boolean }
  /** The driver called this size infeasible and the user has not changed it: wait out the slow set, no write, no driver call. */
  | { kind: 'delay' }
  | {
      kind: 'expand';
      targetBytes: bigint;
      /** False when the target equals A: the status fields are already right, only re-mark Resizing. */
      rewritesAllocation: boolean;
      warnOldApiServer?: boolean;
    };

export type NothingReason = 'node expansion in progress' | 'node expansion pending' | 'waiting for kubelet (FileSystemResizePending)';

export interface ExpansionDecision {
  /** What to do with the key's slow-set entry before acting: park it (an existing entry keeps its time), or leave it. */
  slowSet: 'add' | 'leave';
  plan: ExpansionPlan;
}

/** §3.5 steps 2–4: park an infeasible key, choose the target, and wait when it is the parked one. */
export function planExpansion(facts: ExpansionFacts): ExpansionDecision {
  const slowSet = facts.resizeStatus === ResizeStatus.ControllerResizeInfeasible ? 'add' : 'leave';
  const plan = chooseTarget(facts);
  // A == target: the size the status already asks for. While the key is parked, that is the size
  // the driver called infeasible, and the user has not asked for another one since.
  if (plan.kind === 'expand' && !plan.rewritesAllocation && facts.inSlowSet) return { slowSet, plan: { kind: 'delay' } };
  return { slowSet, plan };
}

/** Chooses the target of the recovery-aware algorithm (§3.5 step 3 and the A == target check of step 4). */
function chooseTarget(facts: ExpansionFacts): ExpansionPlan {
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

/** `pvcNeedResize` (§3.3 step 5): bound, has a volume, and asks for more than it has. */
export function pvcNeedsResize(phase: string | undefined, volumeName: string | undefined, requestedBytes: bigint, capacityBytes: bigint): boolean {
  return phase === 'Bound' && !!volumeName && requestedBytes > capacityBytes;
}
