// For drivers that expand only on the node (§3.8, end): no RPC, report the requested size and
// ask kubelet to do the work.
import type { Pv, Pvc } from '../model/objects.js';
import type { Resizer, ResizeResult } from './resizer.js';
import { canSupport } from './support.js';

export class TrivialResizer implements Resizer {
  readonly supportsControlPlaneExpansion = false;
  readonly expansionMode = 'unknown' as const;
  constructor(readonly name: string) {}

  canSupport(pv: Pv, pvc: Pvc): boolean {
    return canSupport(this.name, pv, pvc);
  }

  async resize(_pv: Pv, requestedBytes: bigint): Promise<ResizeResult> {
    return { capacityBytes: requestedBytes, nodeExpansionRequired: true };
  }
}
