// The Modifier port (§4.5): chosen once at startup when the driver reports MODIFY_VOLUME, so the
// modify controller never sees gRPC. `csi-modifier.ts` calls ControllerModifyVolume.
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
