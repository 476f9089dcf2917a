// Which volumes this replica acts on. A volume is the driver's when canSupport says so (§3.8): its
// CSI driver is ours or, for drivers that are CSI migration targets, the PVC names us in the
// storage-resizer annotation (an in-tree PV migrated to CSI). A central resizer (the default) acts
// on every volume of its driver; with --node-deployment a replica runs beside a node-local driver
// on each node and acts only on the PVs whose required node affinity selects its own node. A PV of
// the driver with no node affinity belongs to no node, so no node replica touches it, and each
// replica says so once.
import type { Logger } from '../observability/logger.js';
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

export class NodeVolumeScope implements VolumeScope {
  /** PV names already reported as having no node affinity (a PV is reported once per process). */
  private readonly reported = new Set<string>();

  constructor(readonly node: NodeIdentity, private readonly log: Logger) {}

  includes(pv: Pv): boolean {
    const selects = nodeAffinitySelects(pv, this.node);
    if (selects !== 'none') return selects;
    this.reportNoAffinity(pv);
    return false;
  }

  /** Says, once per PV, that a PV of the driver without node affinity is left alone. */
  reportNoAffinity(pv: Pv): void {
    if (this.reported.has(pv.metadata.name)) return;
    this.reported.add(pv.metadata.name);
    this.log.info('PV has no node affinity; node-local resizers leave it alone', { pv: pv.metadata.name, node: this.node.name });
  }
}
