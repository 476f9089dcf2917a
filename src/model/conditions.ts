// The two ways conditions are merged on a PVC: the resize controller's (§3.11: it owns four
// condition types and never touches the others) and the modify controller's (§4.6: replace by
// type, keep the transition time when nothing really changed).
import { RESIZE_CONDITION_TYPES } from './names.js';
import type { PvcCondition } from './objects.js';

/**
 * Resize merge: non-resize conditions stay in place; a resize condition whose type is in `updates`
 * is replaced in place; other resize conditions stay only if keepOld; leftovers are appended.
 */
export function mergeResizeConditions(existing: readonly PvcCondition[] | undefined, updates: readonly PvcCondition[], keepOld: boolean): PvcCondition[] {
  const pending = new Map(updates.map((c) => [c.type, c]));
  const merged: PvcCondition[] = [];
  for (const condition of existing ?? []) {
    if (!RESIZE_CONDITION_TYPES.has(condition.type)) {
      merged.push(condition);
      continue;
    }
    const replacement = pending.get(condition.type);
    if (replacement) {
      merged.push(replacement);
      pending.delete(condition.type);
    } else if (keepOld) {
      merged.push(condition);
    }
  }
  return [...merged, ...pending.values()];
}

/** Drops every resize-owned condition and keeps the rest. */
export function withoutResizeConditions(existing: readonly PvcCondition[] | undefined): PvcCondition[] {
  return (existing ?? []).filter((c) => !RESIZE_CONDITION_TYPES.has(c.type));
}

/**
 * Modify merge: unmentioned conditions are kept; a same-type condition is replaced, keeping its
 * old lastTransitionTime unless status or reason changed; new types are appended.
 * `now` stamps lastProbeTime and, where the condition is new or changed, lastTransitionTime.
 */
export function mergeModifyConditions(
  existing: readonly PvcCondition[] | undefined,
  updates: readonly Omit<PvcCondition, 'lastProbeTime' | 'lastTransitionTime'>[],
  now: string,
): PvcCondition[] {
  const pending = new Map(updates.map((c) => [c.type, c]));
  const merged: PvcCondition[] = [];
  for (const condition of existing ?? []) {
    const update = pending.get(condition.type);
    if (!update) {
      merged.push(condition);
      continue;
    }
    pending.delete(condition.type);
    const changed = update.status !== condition.status || (update.reason ?? '') !== (condition.reason ?? '');
    merged.push({
      ...update,
      lastProbeTime: now,
      // Unchanged: the old time as it was, even none (upstream copies the zero time too).
      lastTransitionTime: changed ? now : (condition.lastTransitionTime ?? null),
    });
  }
  for (const update of pending.values()) merged.push({ ...update, lastProbeTime: now, lastTransitionTime: now });
  return merged;
}

export function hasCondition(conditions: readonly PvcCondition[] | undefined, type: string, status = 'True'): boolean {
  return (conditions ?? []).some((c) => c.type === type && c.status === status);
}
