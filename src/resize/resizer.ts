// The Resizer port (§3.8): chosen once at startup from the driver's capabilities, so the
// controller never sees gRPC. `csi-resizer.ts` calls ControllerExpandVolume; `trivial-resizer.ts`
// serves drivers that can only expand on the node. A failure is always a CsiError (§3.7), so the
// reconcile reads how final it was and classifies nothing itself.
import { grpcCodeName, grpcCodeOf } from '../csi/errors.js';
import type { Pv, Pvc } from '../model/objects.js';
import type { VolumeScope } from '../model/volume-scope.js';

/** The size to expand to, in bytes and as the quantity the PVC spells it (spec or allocatedResources). */
export interface ResizeTarget {
  bytes: bigint;
  quantity: string;
}

export interface ResizeResult {
  capacityBytes: bigint;
  /**
   * The new size as written to the PV (and to the PVC when no node work is left): the driver's
   * bytes in BinarySI form, or the target's own spelling for the trivial resizer (as upstream).
   */
  capacity: string;
  nodeExpansionRequired: boolean;
}

export interface Resizer {
  /** The driver name. */
  readonly name: string;
  /** False for the trivial resizer: it never grows anything itself (affects the NodeResizeInfeasible row). */
  readonly supportsControlPlaneExpansion: boolean;
  /** Whether the driver may expand a volume while a pod uses it ('unknown' when it doesn't say). */
  readonly expansionMode: 'online' | 'offline' | 'unknown';
  canSupport(pv: Pv, pvc: Pvc): boolean;
  /**
   * Grows the volume behind `pv` to at least `target`. Rejects with a CsiError (csi/errors.ts) and
   * nothing else: a failure before the driver call (no volume handle, a secret that can't be read,
   * an unsupported access mode) is one without a gRPC code, whose `failure` is `inProgress`.
   */
  resize(pv: Pv, target: ResizeTarget, signal: AbortSignal): Promise<ResizeResult>;
}

/** The same resizer, supporting only the volumes in `scope` (--node-deployment). */
export function scopedResizer(resizer: Resizer, scope: VolumeScope): Resizer {
  return {
    name: resizer.name,
    supportsControlPlaneExpansion: resizer.supportsControlPlaneExpansion,
    expansionMode: resizer.expansionMode,
    canSupport: (pv, pvc) => resizer.canSupport(pv, pvc) && scope.includes(pv),
    resize: (pv, requestedBytes, signal) => resizer.resize(pv, requestedBytes, signal),
  };
}

/**
 * The same resizer, reporting the gRPC code name of each failed resize to `onError` (the label
 * csi_sidecar_operations_seconds gives the same call, or unknown-non-grpc for a failure before
 * the driver call: translation, volume handle, secret, capability), then failing as before.
 */
export function errorCountingResizer(resizer: Resizer, onError: (grpcStatusCode: string) => void): Resizer {
  return {
    name: resizer.name,
    supportsControlPlaneExpansion: resizer.supportsControlPlaneExpansion,
    expansionMode: resizer.expansionMode,
    canSupport: (pv, pvc) => resizer.canSupport(pv, pvc),
    async resize(pv, target, signal) {
      try {
        return await resizer.resize(pv, target, signal);
      } catch (err) {
        onError(grpcCodeName(grpcCodeOf(err)));
        throw err;
      }
    },
  };
}
