// Patch bodies. Upstream builds every PVC and PV patch the same way: it marshals the cached object
// and the desired one to JSON and sends the two-way strategic merge patch between them
// (apimachinery's CreateTwoWayMergePatch); when a write must not apply to a stale copy it injects
// metadata.resourceVersion, and the API server answers 409 Conflict if the object moved on. We build
// the same bodies, directive for directive, so the stored objects end up identical (a list that
// merges by key ends in the order the desired object has, thanks to `$setElementOrder`). The
// content type travels with the patch type, so no request falls back to a default (the 1.x
// generated client's default is JSON Patch, which rejects these bodies).
import { ContentType } from './content-type.js';

export const PatchType = { StrategicMerge: 'strategic', Merge: 'merge' } as const;
export type PatchType = (typeof PatchType)[keyof typeof PatchType];

export function patchContentType(type: PatchType): ContentType {
  switch (type) {
    case PatchType.StrategicMerge:
      return ContentType.StrategicMergePatch;
    case PatchType.Merge:
      return ContentType.MergePatch;
    default: {
      const unknown: never = type;
      throw new Error(`unknown patch type ${String(unknown)}`);
    }
  }
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/**
 * Returns a copy of patch with metadata.resourceVersion set: the API server answers 409 if it
 * differs. Keys stay in sorted order, as upstream re-marshals the patch after adding it.
 */
export function withResourceVersion<T extends object>(patch: T, resourceVersion: string | undefined): T {
  if (resourceVersion === undefined || resourceVersion === '') return patch;
  const p = patch as { metadata?: Record<string, unknown> };
  return sortedKeys({ ...patch, metadata: sortedKeys({ ...(p.metadata ?? {}), resourceVersion }) }) as T;
}

/** A patch body, ready to send. */
export type Patch = JsonObject;

/**
 * A write built from a cached object, as upstream builds its PVC and PV writes: `before` holds
 * the cached object's fields the write may change, `change` edits a copy of them into the desired
 * state, and the patch is the two-way strategic merge patch between the two, with
 * `resourceVersion` as a precondition when the write must not apply to a stale copy.
 */
export function patchFromDraft<T extends object>(before: T, change: (draft: T) => void, precondition?: { resourceVersion: string | undefined }): Patch {
  const draft = cloneJson(before);
  change(draft);
  const patch = twoWayMergePatch(before, draft);
  return precondition ? withResourceVersion(patch, precondition.resourceVersion) : patch;
}

/**
 * A deep copy of JSON data (what the API sent us, or drafts of it): objects and arrays copied,
 * everything else shared. A fraction of structuredClone's cost, which serialises and rebuilds.
 */
function cloneJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item: unknown) => cloneJson(item)) as T;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(out, key, cloneJson((value as Record<string, unknown>)[key]));
  return out as T;
}

/**
 * Sets an own, enumerable key. The maps we copy and diff hold any keys the API allows (a driver's
 * volumeAttributes, labels such as "constructor"): JSON.parse makes "__proto__" an own key, and
 * plain assignment of it would set the object's prototype instead.
 */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/**
 * Lists that strategic merge patch merges by a key (`patchStrategy:"merge"` in k8s.io/api), by
 * field name, for the objects we patch: PersistentVolumeClaimStatus.conditions and
 * ObjectMeta.ownerReferences. Every other list is atomic: replaced whole when it changed.
 */
const MERGE_KEYS: ReadonlyMap<string, string> = new Map([
  ['conditions', 'type'],
  ['ownerReferences', 'uid'],
]);

/**
 * Fields Go leaves out of the JSON when empty or nil (`omitempty` maps, lists, strings and
 * pointers of the PersistentVolume(Claim) types). Upstream diffs marshalled objects, so an emptied map or list is
 * absent, not empty: its patch entry is `null` (e.g. `conditions: null` once the last condition
 * goes), and an empty string never appears.
 */
const OMITTED_WHEN_EMPTY: ReadonlySet<string> = new Set([
  'annotations',
  'labels',
  'finalizers',
  'ownerReferences',
  'conditions',
  'capacity',
  'allocatedResources',
  'allocatedResourceStatuses',
  'accessModes',
  'mountOptions',
  'reason',
  'message',
  'targetVolumeAttributesClassName',
  'currentVolumeAttributesClassName',
  'volumeAttributesClassName',
]);

const SET_ELEMENT_ORDER = '$setElementOrder';

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Go maps (not structs) among those fields: their entries are data, kept whatever their name or
 * value (an annotation whose value is "" stays).
 */
const STRING_MAPS: ReadonlySet<string> = new Set(['annotations', 'labels', 'capacity', 'allocatedResources', 'allocatedResourceStatuses']);

/** Whether a struct field with this name and value appears in Go's JSON of the object. */
function present(key: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (!OMITTED_WHEN_EMPTY.has(key)) return true;
  if (value === '' || value === null) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isObject(value)) return Object.keys(value).some((k) => (STRING_MAPS.has(key) ? value[k] !== undefined : present(k, value[k])));
  return true;
}

/** The value as Go would marshal it: absent fields dropped, object keys sorted. */
function marshalled(value: unknown, isMap = false): Json {
  if (Array.isArray(value)) return value.map((item) => marshalled(item));
  if (!isObject(value)) return value as Json;
  const out: JsonObject = {};
  for (const key of Object.keys(value).sort()) {
    const v = value[key];
    if (isMap ? v !== undefined : present(key, v)) setOwn(out, key, marshalled(v, !isMap && STRING_MAPS.has(key)));
  }
  return out;
}

function sortedKeys<T extends object>(obj: T): T {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(obj).sort()) setOwn(out, key, (obj as Record<string, unknown>)[key]);
  return out as T;
}

function kindOf(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function jsonEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i] as Json));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k] as Json, b[k] as Json));
  }
  return false;
}

/**
 * The two-way strategic merge patch that turns `before` into `after`, as CreateTwoWayMergePatch
 * builds it from the two objects' JSON: added and changed fields, removed fields as `null`, lists
 * in MERGE_KEYS as their added elements, the changed fields of changed elements (with the merge
 * key), `{ $patch: delete }` entries for removed ones and a `$setElementOrder/<field>` list of
 * every element's key in the new order; other lists whole. `{}` when nothing changed (upstream
 * sends that too). Keys come out sorted, so the JSON text is the one Go's encoder writes (bar
 * Go's escaping of `<`, `>` and `&`).
 */
export function twoWayMergePatch(before: object, after: object): JsonObject {
  if (!isObject(before) || !isObject(after)) throw new Error('twoWayMergePatch needs two objects');
  return diffMaps(marshalled(before) as JsonObject, marshalled(after) as JsonObject);
}

function diffMaps(original: JsonObject, modified: JsonObject): JsonObject {
  const patch: JsonObject = {};
  for (const [key, value] of Object.entries(modified)) {
    if (!Object.hasOwn(original, key)) {
      setOwn(patch, key, value);
      continue;
    }
    const old = original[key] as Json;
    if (kindOf(old) !== kindOf(value)) {
      setOwn(patch, key, value);
    } else if (isObject(old) && isObject(value)) {
      const nested = diffMaps(old, value);
      if (Object.keys(nested).length > 0) setOwn(patch, key, nested);
    } else if (Array.isArray(old) && Array.isArray(value) && MERGE_KEYS.has(key)) {
      const { changes, order } = diffMergeList(old, value, MERGE_KEYS.get(key)!, key);
      if (changes.length > 0) setOwn(patch, key, changes);
      if (order.length > 0) patch[`${SET_ELEMENT_ORDER}/${key}`] = order;
    } else if (!jsonEqual(old, value)) {
      setOwn(patch, key, value);
    }
  }
  for (const key of Object.keys(original)) {
    if (!Object.hasOwn(modified, key)) setOwn(patch, key, null);
  }
  return sortedKeys(patch);
}

/** diffLists for a list of objects merged by `mergeKey`: changes (deletions last) and the order list. */
function diffMergeList(original: Json[], modified: Json[], mergeKey: string, field: string): { changes: Json[]; order: Json[] } {
  if (original.length === 0) return { changes: modified, order: [] };
  const keyOf = (item: Json): string => {
    if (!isObject(item) || !Object.hasOwn(item, mergeKey)) throw new Error(`every element of ${field} needs the merge key ${mergeKey}`);
    return String(item[mergeKey]);
  };
  const byKey = (a: Json, b: Json) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0);
  const oldSorted = [...original].sort(byKey);
  const newSorted = [...modified].sort(byKey);

  const changes: Json[] = [];
  const deletions: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < oldSorted.length || j < newSorted.length) {
    const o = oldSorted[i] as JsonObject | undefined;
    const m = newSorted[j] as JsonObject | undefined;
    const ok = o === undefined ? undefined : keyOf(o);
    const mk = m === undefined ? undefined : keyOf(m);
    if (o !== undefined && m !== undefined && ok === mk) {
      const nested = diffMaps(o, m);
      if (Object.keys(nested).length > 0) changes.push(sortedKeys({ ...nested, [mergeKey]: m[mergeKey] as Json }));
      i++;
      j++;
    } else if (m !== undefined && (o === undefined || (ok as string) > (mk as string))) {
      changes.push(m);
      j++;
    } else {
      deletions.push(sortedKeys({ $patch: 'delete', [mergeKey]: (o as JsonObject)[mergeKey] as Json }));
      i++;
    }
  }
  // Changed and added elements in their new order, then the deletions.
  const position = new Map(modified.map((item, index) => [keyOf(item), index]));
  changes.sort((a, b) => (position.get(keyOf(a)) ?? 0) - (position.get(keyOf(b)) ?? 0));
  const all = [...changes, ...deletions];
  const orderSame = original.length === modified.length && modified.every((item, index) => keyOf(item) === keyOf(original[index] as Json));
  const order = all.length > 0 || !orderSame ? modified.map((item) => ({ [mergeKey]: (item as JsonObject)[mergeKey] as Json })) : [];
  return { changes: all, order };
}
