// The modify controller's writes (§4.4, §4.6, §3.12), as strategic-merge patch bodies built from
// the cached PVC and the desired change. Building is pure; the reconcile sends them.
//
// Conditions merge by `type` on the server, so a patch names only ModifyingVolume and
// ModifyVolumeError (the conditions this controller owns), adding or changing them, or deleting
// them with `$patch: delete`. Resize conditions are never in these patches, so the two controllers
// cannot undo each other's conditions even where a patch has no resourceVersion precondition.
// In the status, `null` deletes a field (modifyVolumeStatus on completion).
import { mergeModifyConditions } from '../model/conditions.js';
import { ConditionType, Message, ModifyStatus } from '../model/names.js';
import type { Pvc, PvcCondition } from '../model/objects.js';
import { conditionsPatch, type Patch, type PvcStatusPatch } from '../resize/status.js';

export type { Patch, PvcStatusPatch } from '../resize/status.js';

function assemble(pvc: Pvc, status: Patch, checksResourceVersion: boolean): PvcStatusPatch {
  const body: Patch = { status };
  if (checksResourceVersion) body['metadata'] = { resourceVersion: pvc.metadata.resourceVersion };
  return { body, checksResourceVersion };
}

function withModifyConditions(pvc: Pvc, updates: Omit<PvcCondition, 'lastProbeTime' | 'lastTransitionTime'>[], now: string): Patch {
  return conditionsPatch(pvc.status?.conditions, mergeModifyConditions(pvc.status?.conditions, updates, now));
}

function withoutConditions(pvc: Pvc, types: readonly string[]): Patch {
  const before = pvc.status?.conditions;
  return conditionsPatch(before, (before ?? []).filter((c) => !types.includes(c.type)));
}

/** §4.4 step 7: the new target is InProgress, ModifyingVolume=True. RV-checked. */
export function markModifyInProgress(pvc: Pvc, target: string, now: string): PvcStatusPatch {
  const status: Patch = {
    ...withModifyConditions(pvc, [
      { type: ConditionType.ModifyingVolume, status: 'True', message: Message.modifyInProgressCondition(target) },
    ], now),
    modifyVolumeStatus: { targetVolumeAttributesClassName: target, status: ModifyStatus.InProgress },
  };
  return assemble(pvc, status, true);
}

/** §4.4 step 7, the class does not exist (yet): Pending; target and conditions untouched. RV-checked. */
export function markModifyPending(pvc: Pvc): PvcStatusPatch {
  return assemble(pvc, { modifyVolumeStatus: { status: ModifyStatus.Pending } }, true);
}

export interface ModifyFailure {
  target: string;
  /** Infeasible for InvalidArgument; InProgress for every other code. */
  status: typeof ModifyStatus.InProgress | typeof ModifyStatus.Infeasible;
  /** False when the driver may still be working on it (non-final code). */
  final: boolean;
  /** The gRPC code's name: ModifyVolumeError's reason. */
  codeName: string;
  /** The gRPC status message: ModifyVolumeError's message. */
  details: string;
}

/** §4.6, a gRPC error: status (target unchanged), ModifyingVolume and ModifyVolumeError. RV-checked. */
export function markModifyFailed(pvc: Pvc, failure: ModifyFailure, now: string): PvcStatusPatch {
  const modifying = failure.final ? Message.modifyFailedCondition(failure.target) : Message.modifyStillInProgressCondition(failure.target);
  const status: Patch = {
    ...withModifyConditions(pvc, [
      { type: ConditionType.ModifyingVolume, status: 'True', message: modifying },
      { type: ConditionType.ModifyVolumeError, status: 'True', reason: failure.codeName, message: failure.details },
    ], now),
    modifyVolumeStatus: { targetVolumeAttributesClassName: failure.target, status: failure.status },
  };
  return assemble(pvc, status, true);
}

/**
 * §4.6 success, after the PV: the class is current, no modify status, no modify conditions.
 * Not RV-checked (as upstream): the driver has applied the class, so this must land.
 */
export function markModifyCompleted(pvc: Pvc, target: string): PvcStatusPatch {
  const status: Patch = {
    ...withoutConditions(pvc, [ConditionType.ModifyingVolume, ConditionType.ModifyVolumeError]),
    modifyVolumeStatus: null,
    currentVolumeAttributesClassName: target,
  };
  return assemble(pvc, status, false);
}

/** §4.4 step 4, the class was cleared: ModifyingVolume goes, modifyVolumeStatus stays. Not RV-checked. */
export function markModifyCanceled(pvc: Pvc): PvcStatusPatch {
  return assemble(pvc, withoutConditions(pvc, [ConditionType.ModifyingVolume]), false);
}

/** §4.6 success, first write: the PV records the class the volume now has. */
export function pvClassPatch(target: string): Patch {
  return { spec: { volumeAttributesClassName: target } };
}
