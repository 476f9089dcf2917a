// The modify controller's writes (§4.4, §4.6, §3.12): each builds the desired status (or PV) from
// the cached object, and the patch is the two-way strategic merge patch between the two
// (kube/api/patch.ts), as upstream builds it.
//
// Conditions merge by `type` on the server: a patch carries ModifyingVolume and ModifyVolumeError
// (the conditions this controller owns) where they are added or changed, `$patch: delete` for the
// ones it drops, and `$setElementOrder/conditions` with every condition's type in the desired
// order. Resize conditions are never added, changed or deleted by these patches. A field the
// desired status drops is sent as `null`, which deletes it (modifyVolumeStatus on completion).
import { patchFromDraft, type Patch } from '../kube/api/patch.js';
import { mergeModifyConditions } from '../model/conditions.js';
import { ConditionType, Message, ModifyStatus } from '../model/names.js';
import type { Pv, Pvc, PvcCondition } from '../model/objects.js';

type PvcStatus = NonNullable<Pvc['status']>;

/** A PVC status patch body, RV-checked unless its builder says otherwise. */
export type PvcStatusPatch = Patch;

function statusPatch(pvc: Pvc, checksResourceVersion: boolean, change: (status: PvcStatus) => void): PvcStatusPatch {
  return patchFromDraft(
    { status: pvc.status ?? {} },
    (draft) => change(draft.status),
    checksResourceVersion ? { resourceVersion: pvc.metadata.resourceVersion } : undefined,
  );
}

function mergeConditions(status: PvcStatus, updates: Omit<PvcCondition, 'lastProbeTime' | 'lastTransitionTime'>[], now: string): void {
  status.conditions = mergeModifyConditions(status.conditions, updates, now);
}

function dropConditions(status: PvcStatus, types: readonly string[]): void {
  if (status.conditions) status.conditions = status.conditions.filter((c) => !types.includes(c.type));
}

/** §4.4 step 7: the new target is InProgress, ModifyingVolume=True. RV-checked. */
export function markModifyInProgress(pvc: Pvc, target: string, now: string): PvcStatusPatch {
  return statusPatch(pvc, true, (status) => {
    mergeConditions(status, [{ type: ConditionType.ModifyingVolume, status: 'True', message: Message.modifyInProgressCondition(target) }], now);
    status.modifyVolumeStatus = { targetVolumeAttributesClassName: target, status: ModifyStatus.InProgress };
  });
}

/** §4.4 step 7, the class does not exist (yet): Pending; target and conditions untouched. RV-checked. */
export function markModifyPending(pvc: Pvc): PvcStatusPatch {
  return statusPatch(pvc, true, (status) => {
    status.modifyVolumeStatus = { ...status.modifyVolumeStatus, status: ModifyStatus.Pending };
  });
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
  return statusPatch(pvc, true, (status) => {
    mergeConditions(
      status,
      [
        { type: ConditionType.ModifyingVolume, status: 'True', message: modifying },
        { type: ConditionType.ModifyVolumeError, status: 'True', reason: failure.codeName, message: failure.details },
      ],
      now,
    );
    status.modifyVolumeStatus = { targetVolumeAttributesClassName: failure.target, status: failure.status };
  });
}

/**
 * §4.6 success, after the PV: the class is current, no modify status, no modify conditions.
 * Not RV-checked (as upstream): the driver has applied the class, so this must land.
 */
export function markModifyCompleted(pvc: Pvc, target: string): PvcStatusPatch {
  return statusPatch(pvc, false, (status) => {
    dropConditions(status, [ConditionType.ModifyingVolume, ConditionType.ModifyVolumeError]);
    delete status.modifyVolumeStatus;
    status.currentVolumeAttributesClassName = target;
  });
}

/** §4.4 step 4, the class was cleared: ModifyingVolume goes, modifyVolumeStatus stays. Not RV-checked. */
export function markModifyCanceled(pvc: Pvc): PvcStatusPatch {
  return statusPatch(pvc, false, (status) => dropConditions(status, [ConditionType.ModifyingVolume]));
}

/** §4.6 success, first write: the PV records the class the volume now has. */
export function pvClassPatch(pv: Pv, target: string): Patch {
  return patchFromDraft({ spec: { volumeAttributesClassName: pv.spec.volumeAttributesClassName } }, (draft) => {
    draft.spec.volumeAttributesClassName = target;
  });
}
