// Where a PVC stands in its resize or modify, for `csi-resizer doctor`'s table of claims that are
// not done: the state from model/claim-state.ts (the classification the csi_resizer_pvcs gauge
// counts), in the table's words, since when and why, and the table itself over the driver's
// volumes. Pure: the command reads the objects.
import * as claimState from '../model/claim-state.js';
import { ClaimState } from '../model/claim-state.js';
import type { Pv, Pvc, PvcCondition } from '../model/objects.js';
import { pvcKey } from '../model/pvc.js';
import { canSupport } from '../model/volume-scope.js';

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

/** A row of doctor's table: one unfinished operation of one claim. */
export interface ClaimRow extends ClaimProgress {
  claim: string;
  pv: string;
  /** Milliseconds in this state, when known. */
  forMs: number | undefined;
}

export interface ClaimTable {
  /** How many bound volumes of the driver there are (their claim found). */
  volumes: number;
  /** Volumes whose claimRef UID is not their claim's, described: never resized, so not in the table. */
  mismatched: string[];
  /** The driver's volumes whose claimRef matches their claim. */
  matched: Pv[];
  /** Every unfinished operation of those claims, the longest-standing first. */
  rows: ClaimRow[];
}

/** Doctor's table: each volume of the driver (canSupport, §3.8) with its claim, classified as the gauge does. */
export function claimTable(driver: string, pvs: readonly Pv[], pvcs: readonly Pvc[], now: Date): ClaimTable {
  const byKey = new Map(pvcs.map((pvc) => [pvcKey(pvc), pvc]));
  const table: ClaimTable = { volumes: 0, mismatched: [], matched: [], rows: [] };
  for (const pv of pvs) {
    const ref = pv.spec.claimRef;
    if (!ref?.name) continue;
    const pvc = byKey.get(`${ref.namespace ?? ''}/${ref.name}`);
    if (!pvc || !canSupport(driver, pv, pvc)) continue;
    table.volumes += 1;
    if (pvc.spec.volumeName === pv.metadata.name && ref.uid !== pvc.metadata.uid) {
      table.mismatched.push(`PV ${pv.metadata.name} claimRef uid ${ref.uid ?? 'none'} != PVC ${pvcKey(pvc)} uid ${pvc.metadata.uid ?? 'none'}`);
      continue;
    }
    table.matched.push(pv);
    for (const progress of [resizeProgress(pvc), modifyProgress(pvc)]) {
      if (!progress) continue;
      table.rows.push({ ...progress, claim: pvcKey(pvc), pv: pv.metadata.name, forMs: progress.since ? now.getTime() - progress.since.getTime() : undefined });
    }
  }
  table.rows.sort((a, b) => (b.forMs ?? -1) - (a.forMs ?? -1));
  return table;
}
