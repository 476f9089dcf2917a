// The Modifier port (§4.5): chosen once at startup when the driver reports MODIFY_VOLUME, so the
// modify controller never sees gRPC. `csi-modifier.ts` calls ControllerModifyVolume.
import { grpcCodeName, grpcCodeOf } from '../csi/errors.js';
import type { Pv, Pvc, VolumeAttributesClass } from '../model/objects.js';

export interface Modifier {
  /** The driver name: only PVs whose spec.csi.driver equals it are modified. */
  readonly name: string;
  /**
   * Asks the driver to apply `vac`'s parameters to the volume behind `pv`. A failure of the call
   * itself is a CsiError with a gRPC code; anything that fails before the call (no CSI source,
   * empty handle, a secret that can't be read) is a plain Error.
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
