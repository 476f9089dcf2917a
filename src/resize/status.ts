// The resize controller's writes (§3.4–§3.6, §3.12): each builds the desired status and
// annotations (or PV) from the cached object, and the patch is the two-way strategic merge patch
// between the two (kube/api/patch.ts), as upstream builds it: conditions merge by type, and
// `$setElementOrder/conditions` keeps them in the desired order, so an added condition ends up
// after the existing ones. Building is pure; the reconcile sends the patches.
import { patchFromDraft, type Patch } from '../kube/api/patch.js';
import { mergeResizeConditions, withoutResizeConditions } from '../model/conditions.js';
import { Annotation, ConditionType, Message, ResizeStatus } from '../model/names.js';
import type { Pv, Pvc, PvcCondition } from '../model/objects.js';
import { STORAGE } from '../model/pvc.js';

/** A PVC status patch body (status and annotations), RV-checked unless its builder says otherwise. */
export type PvcStatusPatch = Patch;

type PvcStatus = NonNullable<Pvc['status']>;

interface Draft {
  metadata: { annotations: Record<string, string> };
  status: PvcStatus;
}

function statusPatch(pvc: Pvc, checksResourceVersion: boolean, change: (draft: Draft) => void): PvcStatusPatch {
  const before: Draft = { metadata: { annotations: pvc.metadata.annotations ?? {} }, status: pvc.status ?? {} };
  return patchFromDraft(before, change, checksResourceVersion ? { resourceVersion: pvc.metadata.resourceVersion } : undefined);
}

function condition(type: string, now: string, message?: string): PvcCondition {
  const base: PvcCondition = { type, status: 'True', lastProbeTime: null, lastTransitionTime: now };
  return message === undefined ? base : { ...base, message };
}

function setStorage(map: Record<string, string> | undefined, value: string): Record<string, string> {
  return { ...map, [STORAGE]: value };
}

/** Deletes the storage entry; the whole map goes when nothing else is left in it (as upstream). */
function deleteStorageStatus(status: PvcStatus): void {
  const statuses = status.allocatedResourceStatuses;
  if (!statuses) return;
  delete statuses[STORAGE];
  if (Object.keys(statuses).length === 0) delete status.allocatedResourceStatuses;
}

/** §3.5 step 5: Resizing=True, allocatedResources = target, and (when rewriting) ControllerResizeInProgress. */
export function markControllerResizeInProgress(pvc: Pvc, targetQuantity: string, rewritesAllocation: boolean, now: string): PvcStatusPatch {
  return statusPatch(pvc, true, (d) => {
    d.status.conditions = mergeResizeConditions(d.status.conditions, [condition(ConditionType.Resizing, now)], !rewritesAllocation);
    delete d.metadata.annotations[Annotation.NodeExpansionNotRequired];
    if (rewritesAllocation) {
      d.status.allocatedResourceStatuses = setStorage(d.status.allocatedResourceStatuses, ResizeStatus.ControllerResizeInProgress);
    }
    d.status.allocatedResources = setStorage(d.status.allocatedResources, targetQuantity);
  });
}

/** §3.5 step 8 on a final error: ControllerResizeError, and Infeasible status for infeasible codes. Not RV-checked. */
export function markControllerExpansionFailed(pvc: Pvc, errorText: string, infeasible: boolean, now: string): PvcStatusPatch {
  return statusPatch(pvc, false, (d) => {
    d.status.conditions = mergeResizeConditions(
      d.status.conditions,
      [condition(ConditionType.ControllerResizeError, now, Message.controllerResizeError(errorText))],
      true,
    );
    if (infeasible) {
      d.status.allocatedResourceStatuses = setStorage(d.status.allocatedResourceStatuses, ResizeStatus.ControllerResizeInfeasible);
    }
  });
}

/** §3.5 step 8 success, node work left: FileSystemResizePending, NodeResizePending. */
export function markNodeExpansionPending(pvc: Pvc, now: string): PvcStatusPatch {
  return statusPatch(pvc, true, (d) => {
    d.status.conditions = mergeResizeConditions(
      d.status.conditions,
      [condition(ConditionType.FileSystemResizePending, now, Message.fileSystemResizePendingCondition)],
      true,
    );
    delete d.metadata.annotations[Annotation.NodeExpansionNotRequired];
    d.status.allocatedResourceStatuses = setStorage(d.status.allocatedResourceStatuses, ResizeStatus.NodeResizePending);
  });
}

/** §3.5 step 8 success, no node work: capacity = new size, resize conditions and status entry gone. */
export function markExpansionFinished(pvc: Pvc, capacityQuantity: string): PvcStatusPatch {
  return statusPatch(pvc, true, (d) => {
    d.status.capacity = setStorage(d.status.capacity, capacityQuantity);
    d.status.conditions = withoutResizeConditions(d.status.conditions);
    deleteStorageStatus(d.status);
    // Added when absent; an existing value is left as it is (as upstream).
    d.metadata.annotations[Annotation.NodeExpansionNotRequired] ??= 'true';
  });
}

/**
 * §3.6: the PV capacity, plus the pre-resize annotation (the PVC's capacity before the resize) when
 * the node still has to grow the file system and the PV doesn't carry one yet.
 */
export function pvCapacityPatch(pv: Pv, capacityQuantity: string, preResizeCapacity: string | undefined): Patch {
  return pvPatch(pv, (draft) => {
    draft.spec.capacity = { ...draft.spec.capacity, [STORAGE]: capacityQuantity };
    if (preResizeCapacity !== undefined && draft.metadata.annotations[Annotation.PreResizeCapacity] === undefined) {
      draft.metadata.annotations[Annotation.PreResizeCapacity] = preResizeCapacity;
    }
  });
}

/** §3.3 step 4: node expansion finished, the pre-resize annotation has done its job. */
export function removePreResizeAnnotationPatch(pv: Pv): Patch {
  return pvPatch(pv, (draft) => {
    delete draft.metadata.annotations[Annotation.PreResizeCapacity];
  });
}

interface PvDraft {
  metadata: { annotations: Record<string, string> };
  spec: { capacity?: Record<string, string> };
}

function pvPatch(pv: Pv, change: (draft: PvDraft) => void): Patch {
  return patchFromDraft<PvDraft>({ metadata: { annotations: pv.metadata.annotations ?? {} }, spec: { capacity: pv.spec.capacity } }, change);
}
