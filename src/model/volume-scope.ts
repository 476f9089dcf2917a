// Which volumes this replica acts on. A central resizer (the default) acts on every volume of its
// driver; with --node-deployment a replica runs beside a node-local driver on each node and acts
// only on the PVs whose required node affinity selects its own node. A PV of the driver with no
// node affinity belongs to no node, so no node replica touches it, and each replica says so once.
import type { Logger } from '../observability/logger.js';
import { nodeAffinitySelects, type NodeIdentity } from './node-affinity.js';
import type { Pv } from './objects.js';

export interface VolumeScope {
  includes(pv: Pv): boolean;
}

export const everyVolume: VolumeScope = { includes: () => true };

export class NodeVolumeScope implements VolumeScope {
  /** PV names already reported as having no node affinity (a PV is reported once per process). */
  private readonly reported = new Set<string>();

  constructor(private readonly node: NodeIdentity, private readonly log: Logger) {}

  includes(pv: Pv): boolean {
    const selects = nodeAffinitySelects(pv, this.node);
    if (selects !== 'none') return selects;
    if (!this.reported.has(pv.metadata.name)) {
      this.reported.add(pv.metadata.name);
      this.log.info('PV has no node affinity; node-local resizers leave it alone', { pv: pv.metadata.name, node: this.node.name });
    }
    return false;
  }
}
