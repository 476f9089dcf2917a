// Patch bodies. Upstream computes a two-way strategic merge patch from the cached object and the
// desired one and sends only the difference; when a write must not apply to a stale copy it injects
// metadata.resourceVersion, and the API server answers 409 Conflict if the object moved on. We do the
// same. The content type travels with the patch type, so no request falls back to a default (the
// 1.x generated client's default is JSON Patch, which rejects these bodies).
import { ContentType } from './http.js';

export const PatchType = { StrategicMerge: 'strategic', Merge: 'merge' } as const;
export type PatchType = (typeof PatchType)[keyof typeof PatchType];

export function patchContentType(type: PatchType): ContentType {
  switch (type) {
    case PatchType.StrategicMerge: return ContentType.StrategicMergePatch;
    case PatchType.Merge: return ContentType.MergePatch;
    default: {
      const unknown: never = type;
      throw new Error(`unknown patch type ${String(unknown)}`);
    }
  }
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Returns a copy of patch with metadata.resourceVersion set: the API server answers 409 if it differs. */
export function withResourceVersion<T extends object>(patch: T, resourceVersion: string | undefined): T {
  if (resourceVersion === undefined || resourceVersion === '') return patch;
  const p = patch as { metadata?: Record<string, unknown> };
  return { ...patch, metadata: { ...(p.metadata ?? {}), resourceVersion } } as T;
}

/**
 * Lists merged by a key under strategic merge patch, by field name, for the objects we patch
 * (PersistentVolumeClaimStatus.conditions, ObjectMeta.ownerReferences...). Other lists are atomic.
 */
const MERGE_KEYS: Readonly<Record<string, string>> = { conditions: 'type', ownerReferences: 'uid' };

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => jsonEqual(a[k], b[k]));
  }
  return false;
}

/**
 * A patch that turns `before` into `after`, with only the changed fields; undefined if nothing
 * changed. With type 'merge' the result is an RFC 7386 merge patch (lists replaced whole, removed
 * fields set to null). With 'strategic', lists keyed by MERGE_KEYS (conditions by type) are sent as
 * the added elements, the changed fields of changed elements (with their key), and
 * `{ <key>: k, $patch: 'delete' }` for removed ones; other lists are replaced whole. Primitive lists
 * that strategic merge treats as sets (finalizers) are not supported: the resizer never writes them.
 */
export function diffPatch(before: unknown, after: unknown, type: PatchType = PatchType.StrategicMerge): JsonObject | undefined {
  if (!isObject(before) || !isObject(after)) throw new Error('diffPatch needs two objects');
  return diffObjects(before, after, type);
}

function diffObjects(before: JsonObject, after: JsonObject, type: PatchType): JsonObject | undefined {
  const patch: JsonObject = {};
  for (const key of Object.keys(before)) {
    if (before[key] !== undefined && after[key] === undefined) patch[key] = null;
  }
  for (const [key, value] of Object.entries(after)) {
    if (value === undefined) continue;
    const old = before[key];
    if (jsonEqual(old, value)) continue;
    if (isObject(old) && isObject(value)) {
      const nested = diffObjects(old, value, type);
      if (nested) patch[key] = nested;
      continue;
    }
    const mergeKey = MERGE_KEYS[key];
    if (type === PatchType.StrategicMerge && mergeKey && Array.isArray(old) && Array.isArray(value)) {
      patch[key] = diffKeyedList(old, value, mergeKey);
      continue;
    }
    patch[key] = structuredClone(value) as Json;
  }
  return Object.keys(patch).length === 0 ? undefined : patch;
}

function diffKeyedList(before: Json[], after: Json[], mergeKey: string): Json[] {
  const keyOf = (item: Json) => (isObject(item) ? item[mergeKey] : undefined);
  const out: Json[] = [];
  const afterKeys = new Set(after.map(keyOf));
  for (const item of after) {
    const old = before.find((b) => keyOf(b) === keyOf(item) && keyOf(item) !== undefined);
    if (old === undefined || !isObject(old) || !isObject(item)) {
      if (!jsonEqual(old, item)) out.push(structuredClone(item));
      continue;
    }
    const changed = diffObjects(old, item, PatchType.StrategicMerge);
    if (changed) out.push({ [mergeKey]: keyOf(item) as Json, ...changed });
  }
  for (const item of before) {
    const k = keyOf(item);
    if (k !== undefined && !afterKeys.has(k)) out.push({ [mergeKey]: k, $patch: 'delete' });
  }
  return out;
}
