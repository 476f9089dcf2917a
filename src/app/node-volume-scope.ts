// The --node-deployment volume scope of a running replica: model/volume-scope.ts decides whether
// a PV is this node's, and this says once per PV (per process) when one of the driver's PVs has no
// node affinity, so that no node replica will ever act on it.
import type { Pv } from '../model/objects.js';
import type { NodeIdentity } from '../model/node-affinity.js';
import { nodeScopeDecision, type VolumeScope } from '../model/volume-scope.js';
import type { Logger } from '../observability/log/logger.js';

export class NodeVolumeScope implements VolumeScope {
  /** PV names already reported as having no node affinity (a PV is reported once per process). */
  private readonly reported = new Set<string>();

  constructor(
    readonly node: NodeIdentity,
    private readonly log: Logger,
  ) {}

  includes(pv: Pv): boolean {
    const decision = nodeScopeDecision(pv, this.node);
    if (decision === 'noNodeAffinity') this.reportNoAffinity(pv);
    return decision === 'included';
  }

  /** Says, once per PV, that a PV of the driver without node affinity is left alone. */
  reportNoAffinity(pv: Pv): void {
    if (this.reported.has(pv.metadata.name)) return;
    this.reported.add(pv.metadata.name);
    this.log.info('PV has no node affinity; node-local resizers leave it alone', { pv: pv.metadata.name, node: this.node.name });
  }
}
