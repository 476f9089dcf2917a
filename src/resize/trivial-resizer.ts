// For drivers that expand only on the node (§3.8, end): no RPC, report the requested size (in the
// PVC's own spelling, as upstream hands the quantity back) and ask kubelet to do the work.
import type { Pv, Pvc } from '../model/objects.js';
import type { Resizer, ResizeResult, ResizeTarget } from './resizer.js';
import { canSupport } from '../model/volume-scope.js';

export class TrivialResizer implements Resizer {
  readonly supportsControlPlaneExpansion = false;
  readonly expansionMode = 'unknown' as const;
  constructor(readonly name: string) {}

  canSupport(pv: Pv, pvc: Pvc): boolean {
    return canSupport(this.name, pv, pvc);
  }

  async resize(_pv: Pv, target: ResizeTarget): Promise<ResizeResult> {
    return { capacityBytes: target.bytes, capacity: target.quantity, nodeExpansionRequired: true };
  }
}
