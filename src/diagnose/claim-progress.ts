// Where a PVC stands in its resize or modify, for `csi-resizer doctor`'s table of claims that are
// not done: the state from model/claim-state.ts (the classification the csi_resizer_pvcs gauge
// counts), in the table's words, since when and why. Pure: the command reads the objects.
import * as claimState from '../model/claim-state.js';
import { ClaimState } from '../model/claim-state.js';
import type { Pvc, PvcCondition } from '../model/objects.js';

/** How doctor's table words each state of model/claim-state.ts. */
export const CLAIM_STATE_TEXT: Readonly<Record<ClaimState, string>> = {
  [ClaimState.Waiting]: 'waiting',
  [ClaimState.InProgress]: 'in progress',
  [ClaimState.NodePending]: 'waiting for kubelet',
  [ClaimState.Infeasible]: 'infeasible',
  [ClaimState.Backoff]: 'in backoff',
};

export interface ClaimProgress {
  operation: 'resize' | 'modify';
  /** The state as the table words it (CLAIM_STATE_TEXT). */
  state: string;
  /** When the state began, if the PVC says (the newest transition time of the conditions that show it). */
  since: Date | undefined;
  /** The message of the condition that shows the state, if any. */
  detail: string;
}

function sinceOf(conditions: readonly PvcCondition[]): Date | undefined {
  const times = conditions.map((c) => (c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : NaN)).filter((t) => Number.isFinite(t));
  return times.length === 0 ? undefined : new Date(Math.max(...times));
}

function described(progress: claimState.ClaimProgress | undefined): ClaimProgress | undefined {
  if (!progress) return undefined;
  return {
    operation: progress.operation,
    state: CLAIM_STATE_TEXT[progress.state],
    since: sinceOf(progress.shownBy),
    detail: progress.shownBy.find((c) => c.message)?.message ?? '',
  };
}

/** The resize state of a PVC, as the gauge classifies it (outside a resizer: no queue failures), or undefined when it has nothing pending. */
export function resizeProgress(pvc: Pvc): ClaimProgress | undefined {
  return described(claimState.resizeProgress(pvc));
}

/** The modify state of a PVC, or undefined when its class is applied (or none is asked for). */
export function modifyProgress(pvc: Pvc): ClaimProgress | undefined {
  return described(claimState.modifyProgress(pvc));
}
