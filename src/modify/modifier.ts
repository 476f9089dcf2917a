// The Modifier port (§4.5): chosen once at startup when the driver reports MODIFY_VOLUME, so the
// modify controller never sees gRPC. `csi-modifier.ts` calls ControllerModifyVolume. A failure is
// always a CsiError (§4.6), so the reconcile reads it and classifies nothing itself.
import { grpcCodeName, grpcCodeOf } from '../csi/errors.js';
import type { Pv, Pvc, VolumeAttributesClass } from '../model/objects.js';

export interface Modifier {
  /** The driver name: only PVs whose spec.csi.driver equals it are modified. */
  readonly name: string;
  /**
   * Asks the driver to apply `vac`'s parameters to the volume behind `pv`. Rejects with a CsiError
   * (csi/errors.ts) and nothing else: a failure of the call itself carries its gRPC code; one
   * before the call (no CSI source, empty handle, a secret that can't be read) has no code (null).
   */
  modify(pv: Pv, pvc: Pvc, vac: VolumeAttributesClass, signal: AbortSignal): Promise<void>;
}

/**
 * The same modifier, reporting the gRPC code name of each failed modify to `onError`
 * (unknown-non-grpc for a failure before the driver call), then failing as before.
 */
export function errorCountingModifier(modifier: Modifier, onError: (grpcStatusCode: string) => void): Modifier {
  return {
    name: modifier.name,
    async modify(pv, pvc, vac, signal) {
      try {
        await modifier.modify(pv, pvc, vac, signal);
      } catch (err) {
        onError(grpcCodeName(grpcCodeOf(err)));
        throw err;
      }
    },
  };
}
