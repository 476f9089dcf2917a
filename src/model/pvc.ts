// Typed readers over the plain PVC and PV objects: sizes as bigint bytes, resize status, and the
// claim/driver checks. A malformed quantity in an object is reported, never guessed.
import { parseQuantity } from './quantity.js';
import { hasCondition } from './conditions.js';
import { ConditionType } from './names.js';
import type { Pv, Pvc } from './objects.js';

export const STORAGE = 'storage';

export class ObjectFieldError extends Error {
  constructor(
    readonly field: string,
    readonly objectKey: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`${objectKey}: ${field}: ${message}`, options);
    this.name = 'ObjectFieldError';
  }
}

/**
 * Bytes of the quantity strings read lately: a handful of sizes appear over and over (every
 * update of a PVC is read twice by the handler and again by the reconcile). Bounded; a
 * malformed quantity is never kept, so it is reported on every read.
 */
const bytesByQuantity = new Map<string, bigint>();
const MAX_REMEMBERED_QUANTITIES = 1024;

function bytesOf(value: string | undefined, field: string, objectKey: string): bigint | undefined {
  if (value === undefined || value === '') return undefined;
  const known = bytesByQuantity.get(value);
  if (known !== undefined) return known;
  let bytes: bigint;
  try {
    bytes = parseQuantity(value).toBytes();
  } catch (err) {
    throw new ObjectFieldError(field, objectKey, `invalid quantity ${JSON.stringify(value)}`, { cause: err });
  }
  if (bytesByQuantity.size >= MAX_REMEMBERED_QUANTITIES) bytesByQuantity.clear();
  bytesByQuantity.set(value, bytes);
  return bytes;
}

export function pvcKey(pvc: Pvc): string {
  return `${pvc.metadata.namespace ?? ''}/${pvc.metadata.name}`;
}

/** S: the requested size; a PVC without a storage request asks for 0. */
export function requestedBytes(pvc: Pvc): bigint {
  return bytesOf(pvc.spec.resources?.requests?.[STORAGE], 'spec.resources.requests.storage', pvcKey(pvc)) ?? 0n;
}

/** C: the size kubelet and the resizer last reported as usable. */
export function capacityBytes(pvc: Pvc): bigint {
  return bytesOf(pvc.status?.capacity?.[STORAGE], 'status.capacity.storage', pvcKey(pvc)) ?? 0n;
}

/** A: the size the last expansion was started with, if any. */
export function allocatedBytes(pvc: Pvc): bigint | undefined {
  return bytesOf(pvc.status?.allocatedResources?.[STORAGE], 'status.allocatedResources.storage', pvcKey(pvc));
}

/** R: the storage entry of allocatedResourceStatuses, '' when absent. */
export function resizeStatus(pvc: Pvc): string {
  return pvc.status?.allocatedResourceStatuses?.[STORAGE] ?? '';
}

/** P: the PV's capacity. */
export function pvBytes(pv: Pv): bigint {
  return bytesOf(pv.spec.capacity?.[STORAGE], 'spec.capacity.storage', pv.metadata.name) ?? 0n;
}

export function isFileSystemResizePending(pvc: Pvc): boolean {
  return hasCondition(pvc.status?.conditions, ConditionType.FileSystemResizePending);
}

/** The PV is bound to exactly this PVC: same namespace and UID (the name is not compared, as upstream). */
export function pvClaimedBy(pv: Pv, pvc: Pvc): boolean {
  const ref = pv.spec.claimRef;
  return !!ref && ref.namespace === pvc.metadata.namespace && ref.uid === pvc.metadata.uid;
}
