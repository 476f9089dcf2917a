// CanSupport (§3.8): a PV is ours when its CSI driver is ours, or, for drivers that are CSI
// migration targets, when the PVC names us in the storage-resizer annotation.
import { Annotation, MIGRATION_TARGET_DRIVERS } from '../model/names.js';
import type { Pv, Pvc } from '../model/objects.js';

export function canSupport(driverName: string, pv: Pv, pvc: Pvc): boolean {
  if (MIGRATION_TARGET_DRIVERS.has(driverName) && pvc.metadata.annotations?.[Annotation.StorageResizer] === driverName) {
    return true;
  }
  return pv.spec.csi?.driver === driverName;
}
