// Informer callbacks to queue keys (§3.2). Handlers only decide whether a change is worth a
// reconcile; the reconcile reads the store again and decides what to do.
import { Annotation } from '../model/names.js';
import type { Pvc } from '../model/objects.js';
import { capacityBytes, requestedBytes, resizeStatus } from '../model/pvc.js';

/** The PVC update filter: new size request, resizer annotation, resync, capacity growth, status change. */
export function pvcUpdateWorthReconciling(before: Pvc, after: Pvc, recoverVolumeExpansionFailure: boolean): boolean {
  const sizeBefore = orMinusOne(() => requestedBytes(before));
  const sizeAfter = orMinusOne(() => requestedBytes(after));
  const requestChanged = recoverVolumeExpansionFailure ? sizeAfter !== sizeBefore : sizeAfter > sizeBefore;
  const annotationChanged =
    before.metadata.annotations?.[Annotation.StorageResizer] !== after.metadata.annotations?.[Annotation.StorageResizer];
  if (requestChanged || annotationChanged) return true;
  // A periodic resync delivers the same object twice.
  if (before.metadata.resourceVersion === after.metadata.resourceVersion) return true;
  // Capacity grew: kubelet finished node expansion, so the pre-resize annotation can go.
  if (orMinusOne(() => capacityBytes(after)) > orMinusOne(() => capacityBytes(before))) return true;
  return recoverVolumeExpansionFailure && resizeStatus(before) !== resizeStatus(after);
}

/** A bad quantity must not throw inside a handler: the reconcile reports it. */
function orMinusOne(read: () => bigint): bigint {
  try {
    return read();
  } catch {
    return -1n;
  }
}
