// Informer callbacks to keys (§4.2). Handlers only decide whether a change is worth a reconcile;
// the reconcile reads the stores again and decides what to do.
import type { Pvc, VolumeAttributesClass } from '../model/objects.js';
import { pvcKey } from '../model/pvc.js';

/**
 * The PVC update filter: the class changed or the modify status is gone, the PVC is bound, and
 * the PV named by the old PVC is in the cache. A PVC with a modify status (Pending, InProgress,
 * Infeasible) is not re-enqueued by resync; it comes back through the queue's backoff, a class
 * change, a restart, or (ours) the creation of the class it waits for.
 */
export function pvcUpdateWorthModifying(before: Pvc, after: Pvc, pvExists: (name: string) => boolean): boolean {
  const classChanged = (before.spec.volumeAttributesClassName ?? null) !== (after.spec.volumeAttributesClassName ?? null);
  if (!classChanged && after.status?.modifyVolumeStatus) return false;
  if (after.status?.phase !== 'Bound') return false;
  const pvName = before.spec.volumeName;
  return !!pvName && pvExists(pvName);
}

/**
 * Better than upstream: the keys of PVCs a newly created class unblocks. Upstream registers no
 * VolumeAttributesClass handler, so a PVC that asked for a class before it existed stays Pending
 * until the user edits it again. Only PVCs that name the class and are not already settled on it
 * (some modify status, or a current class that differs) are returned, so the add calls of the
 * initial list don't enqueue every PVC that already has its class.
 */
export function pvcsWaitingForClass(vac: VolumeAttributesClass, pvcs: Iterable<Pvc>): string[] {
  const name = vac.metadata.name;
  const keys: string[] = [];
  for (const pvc of pvcs) {
    if (pvc.spec.volumeAttributesClassName !== name) continue;
    const settled = !pvc.status?.modifyVolumeStatus && (pvc.status?.currentVolumeAttributesClassName ?? '') === name;
    if (!settled) keys.push(pvcKey(pvc));
  }
  return keys;
}
