// The resize controller's writes, as strategic-merge patch bodies built from the cached PVC and
// the desired change (§3.4–§3.6, §3.12). Building is pure; `ResizeStatusWriter` sends them.
//
// Conditions are a list merged by `type` on the server, so a patch names only the conditions it
// adds or changes and deletes the ones it drops with `$patch: delete`; conditions owned by the
// modify controller are never in our patches, so the two controllers can't undo each other's
// writes even when a patch has no resourceVersion precondition.
import { mergeResizeConditions, withoutResizeConditions } from '../model/conditions.js';
import { Annotation, ConditionType, Message, ResizeStatus } from '../model/names.js';
import type { Pv, Pvc, PvcCondition } from '../model/objects.js';
import { STORAGE } from '../model/pvc.js';

export type Patch = Record<string, unknown>;

/** A patch body and whether it carries the cached object's resourceVersion as a precondition. */
export interface PvcStatusPatch {
  readonly body: Patch;
  readonly checksResourceVersion: boolean;
}

/** The strategic-merge list patch turning `before` into `after` (by condition type). */
export function conditionsPatch(before: readonly PvcCondition[] | undefined, after: readonly PvcCondition[]): Patch {
  const old = new Map((before ?? []).map((c) => [c.type, c]));
  const next = new Set(after.map((c) => c.type));
  const changes: unknown[] = after.filter((c) => JSON.stringify(old.get(c.type)) !== JSON.stringify(c));
  for (const type of old.keys()) if (!next.has(type)) changes.push({ type, $patch: 'delete' });
  if (changes.length === 0) return {};
  return { conditions: changes, '$setElementOrder/conditions': after.map((c) => ({ type: c.type })) };
}

function condition(type: string, now: string, message?: string): PvcCondition {
  return message === undefined
    ? { type, status: 'True', lastProbeTime: null, lastTransitionTime: now }
    : { type, status: 'True', lastProbeTime: null, lastTransitionTime: now, message };
}

function withPrecondition(pvc: Pvc, body: Patch, checksResourceVersion: boolean): PvcStatusPatch {
  if (!checksResourceVersion) return { body, checksResourceVersion };
  const metadata = { ...((body['metadata'] as Patch | undefined) ?? {}), resourceVersion: pvc.metadata.resourceVersion };
  return { body: { ...body, metadata }, checksResourceVersion };
}

function annotationPatch(pvc: Pvc, key: string, value: string | null): Patch | undefined {
  const current = pvc.metadata.annotations?.[key];
  if (value === null ? current === undefined : current === value) return undefined;
  return { annotations: { [key]: value } };
}

/** Deleting the storage entry; the whole map goes when nothing else is left in it. */
function withoutStorageStatus(pvc: Pvc): Patch {
  const statuses = pvc.status?.allocatedResourceStatuses ?? {};
  if (!(STORAGE in statuses)) return {};
  const others = Object.keys(statuses).filter((k) => k !== STORAGE);
  return { allocatedResourceStatuses: others.length === 0 ? null : { [STORAGE]: null } };
}

function assemble(pvc: Pvc, status: Patch, metadata: Patch | undefined, checksResourceVersion: boolean): PvcStatusPatch {
  const body: Patch = { status };
  if (metadata) body['metadata'] = metadata;
  return withPrecondition(pvc, body, checksResourceVersion);
}

/** §3.5 step 5: Resizing=True, allocatedResources = target, and (when rewriting) ControllerResizeInProgress. */
export function markControllerResizeInProgress(pvc: Pvc, targetQuantity: string, rewritesAllocation: boolean, now: string): PvcStatusPatch {
  const conditions = mergeResizeConditions(pvc.status?.conditions, [condition(ConditionType.Resizing, now)], !rewritesAllocation);
  const status: Patch = {
    ...conditionsPatch(pvc.status?.conditions, conditions),
    allocatedResources: { [STORAGE]: targetQuantity },
  };
  if (rewritesAllocation) status['allocatedResourceStatuses'] = { [STORAGE]: ResizeStatus.ControllerResizeInProgress };
  return assemble(pvc, status, annotationPatch(pvc, Annotation.NodeExpansionNotRequired, null), true);
}

/** §3.5 step 8 on a final error: ControllerResizeError, and Infeasible status for infeasible codes. Not RV-checked. */
export function markControllerExpansionFailed(pvc: Pvc, errorText: string, infeasible: boolean, now: string): PvcStatusPatch {
  const conditions = mergeResizeConditions(
    pvc.status?.conditions,
    [condition(ConditionType.ControllerResizeError, now, Message.controllerResizeError(errorText))],
    true,
  );
  const status: Patch = conditionsPatch(pvc.status?.conditions, conditions);
  if (infeasible) status['allocatedResourceStatuses'] = { [STORAGE]: ResizeStatus.ControllerResizeInfeasible };
  return assemble(pvc, status, undefined, false);
}

/** §3.5 step 8 success, node work left: FileSystemResizePending, NodeResizePending. */
export function markNodeExpansionPending(pvc: Pvc, now: string): PvcStatusPatch {
  const conditions = mergeResizeConditions(
    pvc.status?.conditions,
    [condition(ConditionType.FileSystemResizePending, now, Message.fileSystemResizePendingCondition)],
    true,
  );
  const status: Patch = {
    ...conditionsPatch(pvc.status?.conditions, conditions),
    allocatedResourceStatuses: { [STORAGE]: ResizeStatus.NodeResizePending },
  };
  return assemble(pvc, status, annotationPatch(pvc, Annotation.NodeExpansionNotRequired, null), true);
}

/** §3.5 step 8 success, no node work: capacity = new size, resize conditions and status entry gone. */
export function markExpansionFinished(pvc: Pvc, capacityQuantity: string): PvcStatusPatch {
  const status: Patch = {
    ...conditionsPatch(pvc.status?.conditions, withoutResizeConditions(pvc.status?.conditions)),
    ...withoutStorageStatus(pvc),
    capacity: { [STORAGE]: capacityQuantity },
  };
  return assemble(pvc, status, annotationPatch(pvc, Annotation.NodeExpansionNotRequired, 'true'), true);
}

/** Legacy §3.4 step 1: Resizing=True replacing the other resize conditions. */
export function markResizingLegacy(pvc: Pvc, now: string): PvcStatusPatch {
  const conditions = mergeResizeConditions(pvc.status?.conditions, [condition(ConditionType.Resizing, now)], false);
  return assemble(pvc, conditionsPatch(pvc.status?.conditions, conditions), undefined, true);
}

/** Legacy §3.4 step 6, node work left: FileSystemResizePending replacing the other resize conditions. */
export function markFileSystemResizePendingLegacy(pvc: Pvc, now: string): PvcStatusPatch {
  const conditions = mergeResizeConditions(
    pvc.status?.conditions,
    [condition(ConditionType.FileSystemResizePending, now, Message.fileSystemResizePendingCondition)],
    false,
  );
  return assemble(pvc, conditionsPatch(pvc.status?.conditions, conditions), undefined, true);
}

/** Legacy §3.4 step 6, done: capacity = new size, resize conditions gone. */
export function markResizeFinishedLegacy(pvc: Pvc, capacityQuantity: string): PvcStatusPatch {
  const status: Patch = {
    ...conditionsPatch(pvc.status?.conditions, withoutResizeConditions(pvc.status?.conditions)),
    capacity: { [STORAGE]: capacityQuantity },
  };
  return assemble(pvc, status, undefined, true);
}

/** §3.6: the PV capacity, plus the pre-resize annotation when the node still has to grow the file system. */
export function pvCapacityPatch(pv: Pv, capacityQuantity: string, preResizeCapacity: string | undefined): Patch {
  const patch: Patch = { spec: { capacity: { [STORAGE]: capacityQuantity } } };
  if (preResizeCapacity !== undefined && pv.metadata.annotations?.[Annotation.PreResizeCapacity] === undefined) {
    patch['metadata'] = { annotations: { [Annotation.PreResizeCapacity]: preResizeCapacity } };
  }
  return patch;
}

/** §3.3 step 4: node expansion finished, the pre-resize annotation has done its job. */
export function removePreResizeAnnotationPatch(): Patch {
  return { metadata: { annotations: { [Annotation.PreResizeCapacity]: null } } };
}
