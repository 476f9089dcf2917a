// Which volumes this replica acts on. A volume is the driver's when canSupport says so (§3.8): its
// CSI driver is ours or, for drivers that are CSI migration targets, the PVC names us in the
// storage-resizer annotation (an in-tree PV migrated to CSI). A central resizer (the default) acts
// on every volume of its driver; with --node-deployment a replica runs beside a node-local driver
// on each node and acts only on the PVs whose required node affinity selects its own node. A PV of
// the driver with no node affinity belongs to no node, so no node replica touches it. Pure: the
// scope that says so once per PV is app/node-volume-scope.ts.
import { Annotation, MIGRATION_TARGET_DRIVERS } from './names.js';
import { nodeAffinitySelects, type NodeIdentity } from './node-affinity.js';
import type { Pv, Pvc } from './objects.js';

/** CanSupport (§3.8): whether the volume of this PV and PVC is served by `driverName`. */
export function canSupport(driverName: string, pv: Pv, pvc: Pvc): boolean {
  if (MIGRATION_TARGET_DRIVERS.has(driverName) && pvc.metadata.annotations?.[Annotation.StorageResizer] === driverName) {
    return true;
  }
  return pv.spec.csi?.driver === driverName;
}

export interface VolumeScope {
  includes(pv: Pv): boolean;
}

export const everyVolume: VolumeScope = { includes: () => true };

/**
 * --node-deployment's decision for one PV: in this node's scope when its required node affinity
 * selects the node; a PV without node affinity is in no node's scope ('noNodeAffinity').
 */
export function nodeScopeDecision(pv: Pv, node: NodeIdentity): 'included' | 'excluded' | 'noNodeAffinity' {
  const selects = nodeAffinitySelects(pv, node);
  if (selects === 'none') return 'noNodeAffinity';
  return selects ? 'included' : 'excluded';
}
