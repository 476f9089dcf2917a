// Where a PVC stands in its resize or modify, read from the PVC alone, for `csi-resizer doctor`'s
// table of claims that are not done. Pure: the command reads the objects, this names the state and
// since when (the newest transition time of the condition that shows it).
import { hasCondition } from '../model/conditions.js';
import { ConditionType, ModifyStatus, ResizeStatus } from '../model/names.js';
import type { Pvc, PvcCondition } from '../model/objects.js';
import { capacityBytes, requestedBytes, resizeStatus } from '../model/pvc.js';

export const ClaimState = {
  /** Asks for more than it has, and no resizer has touched it yet. */
  Waiting: 'waiting',
  InProgress: 'in progress',
  Infeasible: 'infeasible',
  /** The last attempt failed; the resizer retries with exponential backoff. */
  Backoff: 'in backoff',
  /** The controller side is done; kubelet must grow the file system. */
  WaitingForKubelet: 'waiting for kubelet',
} as const;
export type ClaimState = (typeof ClaimState)[keyof typeof ClaimState];

export interface ClaimProgress {
  operation: 'resize' | 'modify';
  state: ClaimState;
  /** When the state began, if the PVC says (a condition's lastTransitionTime). */
  since: Date | undefined;
  /** The message of the condition that shows the state, if any. */
  detail: string;
}

function condition(pvc: Pvc, type: string): PvcCondition | undefined {
  return pvc.status?.conditions?.find((c) => c.type === type);
}

function sinceOf(...conditions: (PvcCondition | undefined)[]): Date | undefined {
  const times = conditions
    .map((c) => (c?.lastTransitionTime ? Date.parse(c.lastTransitionTime) : NaN))
    .filter((t) => Number.isFinite(t));
  return times.length === 0 ? undefined : new Date(Math.max(...times));
}

/** The resize state of a bound PVC, or undefined when it has nothing pending. */
export function resizeProgress(pvc: Pvc): ClaimProgress | undefined {
  const status = resizeStatus(pvc);
  const resizing = condition(pvc, ConditionType.Resizing);
  const controllerError = condition(pvc, ConditionType.ControllerResizeError);
  const nodeError = condition(pvc, ConditionType.NodeResizeError);
  const fsPending = condition(pvc, ConditionType.FileSystemResizePending);
  const progress = (state: ClaimState, ...shown: (PvcCondition | undefined)[]): ClaimProgress => ({
    operation: 'resize',
    state,
    since: sinceOf(...shown),
    detail: shown.find((c) => c?.message)?.message ?? '',
  });

  switch (status) {
    case ResizeStatus.ControllerResizeInfeasible:
      return progress(ClaimState.Infeasible, controllerError);
    case ResizeStatus.NodeResizeInfeasible:
      return progress(ClaimState.Infeasible, nodeError);
    case ResizeStatus.NodeResizePending:
    case ResizeStatus.NodeResizeInProgress:
      return progress(ClaimState.WaitingForKubelet, fsPending, nodeError);
    case ResizeStatus.ControllerResizeInProgress:
      return controllerError ? progress(ClaimState.Backoff, controllerError) : progress(ClaimState.InProgress, resizing);
    default:
      break;
  }
  if (hasCondition(pvc.status?.conditions, ConditionType.FileSystemResizePending)) return progress(ClaimState.WaitingForKubelet, fsPending);
  if (controllerError) return progress(ClaimState.Backoff, controllerError);
  if (resizing) return progress(ClaimState.InProgress, resizing);
  let wantsMore = false;
  try {
    wantsMore = requestedBytes(pvc) > capacityBytes(pvc);
  } catch {
    // A malformed quantity is shown by `explain`; the table only lists what it can read.
  }
  return wantsMore ? progress(ClaimState.Waiting) : undefined;
}

/** The modify state of a PVC, or undefined when its class is applied (or none is asked for). */
export function modifyProgress(pvc: Pvc): ClaimProgress | undefined {
  const wanted = pvc.spec.volumeAttributesClassName ?? '';
  const current = pvc.status?.currentVolumeAttributesClassName ?? '';
  const st = pvc.status?.modifyVolumeStatus;
  const modifying = condition(pvc, ConditionType.ModifyingVolume);
  const failed = condition(pvc, ConditionType.ModifyVolumeError);
  const progress = (state: ClaimState, ...shown: (PvcCondition | undefined)[]): ClaimProgress => ({
    operation: 'modify',
    state,
    since: sinceOf(...shown),
    detail: shown.find((c) => c?.message)?.message ?? '',
  });
  if (st) {
    if (st.status === ModifyStatus.Infeasible) return progress(ClaimState.Infeasible, failed, modifying);
    if (failed) return progress(ClaimState.Backoff, failed);
    return st.status === ModifyStatus.Pending ? progress(ClaimState.Waiting, modifying) : progress(ClaimState.InProgress, modifying);
  }
  if (wanted !== '' && wanted !== current) return progress(ClaimState.Waiting, modifying);
  return undefined;
}

/** "3m12s"-style age, as kubectl prints it (coarser as it grows). */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${m % 60 === 0 ? '' : `${m % 60}m`}`;
  return `${Math.floor(h / 24)}d`;
}
