// The pure modify decision (§4.4 `modify(pvc, pv)`, with the slow-retry gate of §4.7): given what
// the PVC says and what the controller remembers about the key, what to do next. No I/O here: the
// reconcile acts on the decision, and plan.test.ts covers every row.
import { ConditionType, ModifyStatus } from '../model/names.js';
import type { Pvc } from '../model/objects.js';

export interface ModifyFacts {
  /** spec.volumeAttributesClassName; null when the field is absent (a nil pointer upstream). */
  specClass: string | null;
  /** status.currentVolumeAttributesClassName, '' when absent. */
  currentClass: string;
  /** status.modifyVolumeStatus; null when absent. */
  status: { target: string; status: string } | null;
  /** The key is in the slow set (looked at before this decision adds it). */
  inSlowSet: boolean;
  /** The key's last ControllerModifyVolume ended with a non-final error, or it was InProgress at startup. */
  uncertain: boolean;
  /** The PVC has a ModifyingVolume condition (any status). */
  hasModifyingCondition: boolean;
}

export type ModifyPlan =
  /** Infeasible with an unchanged target and still in the slow set: wait, no driver call. */
  | { kind: 'delay' }
  | { kind: 'nothing'; why: NothingReason }
  /** The class was cleared before the first modify succeeded: drop ModifyingVolume, say so. */
  | { kind: 'cancel' }
  /** An InProgress operation whose outcome is unknown (or with no new target): call again with its target. */
  | { kind: 'retryPrevious'; target: string }
  /** A new or changed target (also a retry after a final error): look the class up, mark InProgress, call. */
  | { kind: 'modify'; target: string };

export type NothingReason = 'class already applied' | 'class cleared, nothing to cancel';

export interface ModifyDecision {
  /** What to do with the key's slow-set entry before acting: drop it, park it (keeps an older time), or leave it. */
  slowSet: 'remove' | 'add' | 'leave';
  plan: ModifyPlan;
}

export function modifyFacts(pvc: Pvc, inSlowSet: boolean, uncertain: boolean): ModifyFacts {
  const st = pvc.status?.modifyVolumeStatus;
  const spec = pvc.spec.volumeAttributesClassName;
  return {
    specClass: spec === undefined || spec === null ? null : spec,
    currentClass: pvc.status?.currentVolumeAttributesClassName ?? '',
    status: st ? { target: st.targetVolumeAttributesClassName ?? '', status: st.status } : null,
    inSlowSet,
    uncertain,
    hasModifyingCondition: (pvc.status?.conditions ?? []).some((c) => c.type === ConditionType.ModifyingVolume),
  };
}

export function planModify(facts: ModifyFacts): ModifyDecision {
  const { status: st, specClass } = facts;
  const spec = specClass ?? '';

  // Step 1, the slow-retry gate: it only applies while the user keeps asking for the target that
  // was found infeasible. Any other target (or no status, or no class) leaves the slow set.
  let slowSet: ModifyDecision['slowSet'] = 'remove';
  if (st !== null && specClass !== null && st.target === specClass) {
    slowSet = st.status === ModifyStatus.Infeasible ? 'add' : 'leave';
    if (facts.inSlowSet) return { slowSet, plan: { kind: 'delay' } };
  }
  const decide = (plan: ModifyPlan): ModifyDecision => ({ slowSet, plan });

  // Step 2: nothing asked that isn't already there.
  if (st === null && spec === facts.currentClass) return decide({ kind: 'nothing', why: 'class already applied' });

  const inProgress = st !== null && st.status === ModifyStatus.InProgress;

  // Step 4, rollback by clearing the class: only an operation that is not (possibly) running at
  // the driver can be abandoned. modifyVolumeStatus stays as it is; the API server keeps it.
  if (spec === '' && !inProgress) {
    return decide(facts.hasModifyingCondition ? { kind: 'cancel' } : { kind: 'nothing', why: 'class cleared, nothing to cancel' });
  }

  // Steps 5 and 6: the driver may still be applying the previous target (a non-final error, or
  // an InProgress status found at startup), so a changed class must wait until that target
  // succeeds or fails for good. An InProgress operation with no class left to go to is retried too.
  if (inProgress && (facts.uncertain || spec === '')) return decide({ kind: 'retryPrevious', target: st.target });

  // Step 7: a new or changed target; also pointing back at the current class after an
  // Infeasible error (rollback), and retrying after a final non-infeasible error.
  return decide({ kind: 'modify', target: spec });
}
