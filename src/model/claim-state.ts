// Where a claim stands in its resize or modify, read from the PVC (and, inside a running resizer,
// the queue's failure count for its key). The one classification behind both the
// csi_resizer_pvcs gauge (§5.4) and `csi-resizer doctor`'s table of claims, so the two cannot
// disagree about a PVC. A condition counts only when its status is True, as the controllers read
// them (§3.4, §3.5): one that is False or Unknown says nothing is going on.
import { ConditionType, ModifyStatus, ResizeStatus } from './names.js';
import type { Pvc, PvcCondition } from './objects.js';
import { capacityBytes, requestedBytes, resizeStatus } from './pvc.js';

export const ClaimState = {
  /** A bigger size (or another class) is asked for and the resizer has not started on it yet. */
  Waiting: 'waiting',
  /** The driver call has been started for the current target and has not failed. */
  InProgress: 'in_progress',
  /** The controller part is done; kubelet has to grow the filesystem. */
  NodePending: 'node_pending',
  /** The driver refused the size or class. */
  Infeasible: 'infeasible',
  /** The last attempt failed with a retryable error; the key waits in the queue's backoff. */
  Backoff: 'backoff',
} as const;
export type ClaimState = (typeof ClaimState)[keyof typeof ClaimState];
export const CLAIM_STATES: readonly ClaimState[] = Object.values(ClaimState);

export interface ClaimProgress {
  readonly operation: 'resize' | 'modify';
  readonly state: ClaimState;
  /** The True conditions that show the state, the most telling first (for their times and messages). */
  readonly shownBy: readonly PvcCondition[];
}

/** The condition of this type when its status is True. */
export function trueCondition(pvc: Pvc, type: string): PvcCondition | undefined {
  return pvc.status?.conditions?.find((c) => c.type === type && c.status === 'True');
}

function shown(...conditions: (PvcCondition | undefined)[]): PvcCondition[] {
  return conditions.filter((c): c is PvcCondition => c !== undefined);
}

/**
 * The resize state of a PVC, or undefined when no resize is unfinished. `failures` is the queue's
 * failure count for its key (0 outside a running resizer).
 *
 * `allocatedResourceStatuses` decides first (the recovery-aware path writes it, §3.5); without it
 * (the legacy path, §3.4, or nothing started) the conditions and then the sizes decide. A bigger
 * request counts only on a bound claim with a reported capacity, as the controllers act only then
 * (§3.3 step 5); a malformed quantity is not guessed at.
 */
export function resizeProgress(pvc: Pvc, failures = 0): ClaimProgress | undefined {
  const progress = (state: ClaimState, ...conditions: (PvcCondition | undefined)[]): ClaimProgress => ({
    operation: 'resize',
    state,
    shownBy: shown(...conditions),
  });
  const resizing = trueCondition(pvc, ConditionType.Resizing);
  const controllerError = trueCondition(pvc, ConditionType.ControllerResizeError);
  const nodeError = trueCondition(pvc, ConditionType.NodeResizeError);
  const fsPending = trueCondition(pvc, ConditionType.FileSystemResizePending);
  const failed = controllerError !== undefined || failures > 0;
  const status = resizeStatus(pvc);
  switch (status) {
    case ResizeStatus.ControllerResizeInfeasible:
      return progress(ClaimState.Infeasible, controllerError);
    case ResizeStatus.NodeResizeInfeasible:
      return progress(ClaimState.Infeasible, nodeError);
    case ResizeStatus.NodeResizePending:
    case ResizeStatus.NodeResizeInProgress:
      return progress(ClaimState.NodePending, fsPending, nodeError);
    case ResizeStatus.ControllerResizeInProgress:
      // A final, not infeasible error leaves the status in progress with an error condition; a
      // transient one leaves only the queue's failure count behind.
      return failed ? progress(ClaimState.Backoff, controllerError) : progress(ClaimState.InProgress, resizing);
    case '':
      break;
    default:
      // A status this version does not know: something is going on.
      return progress(failed ? ClaimState.Backoff : ClaimState.InProgress, controllerError ?? resizing);
  }
  if (fsPending) return progress(ClaimState.NodePending, fsPending);
  if (resizing) return failed ? progress(ClaimState.Backoff, controllerError, resizing) : progress(ClaimState.InProgress, resizing);
  let wantsMore: boolean;
  try {
    wantsMore = requestedBytes(pvc) > capacityBytes(pvc);
  } catch {
    return undefined;
  }
  if (!wantsMore || pvc.status?.phase !== 'Bound' || pvc.status?.capacity?.['storage'] === undefined) return undefined;
  return failed ? progress(ClaimState.Backoff, controllerError) : progress(ClaimState.Waiting);
}

/** The modify state of a PVC, or undefined when its class is applied (or none is asked for). */
export function modifyProgress(pvc: Pvc): ClaimProgress | undefined {
  const progress = (state: ClaimState, ...conditions: (PvcCondition | undefined)[]): ClaimProgress => ({
    operation: 'modify',
    state,
    shownBy: shown(...conditions),
  });
  const modifying = trueCondition(pvc, ConditionType.ModifyingVolume);
  const failed = trueCondition(pvc, ConditionType.ModifyVolumeError);
  const status = pvc.status?.modifyVolumeStatus;
  if (status) {
    if (status.status === ModifyStatus.Infeasible) return progress(ClaimState.Infeasible, failed, modifying);
    if (failed) return progress(ClaimState.Backoff, failed, modifying);
    return progress(status.status === ModifyStatus.Pending ? ClaimState.Waiting : ClaimState.InProgress, modifying);
  }
  const wanted = pvc.spec.volumeAttributesClassName ?? '';
  if (wanted !== '' && wanted !== (pvc.status?.currentVolumeAttributesClassName ?? '')) return progress(ClaimState.Waiting, modifying);
  return undefined;
}
