// The Resizer over a CSI driver (§3.8): volume handle (translated from the in-tree source for
// migrated volumes), expand secrets from the PV's controllerExpandSecretRef, the volume capability
// built from the PV, one ControllerExpandVolume with the resize timeout as its deadline.
// Unlike upstream, SINGLE_NODE_MULTI_WRITER is taken from the capabilities discovered at startup
// instead of asking the driver again before every expansion. Every failure leaves as a CsiError,
// the port's one error type (resizer.ts).
import { messageOf } from '../base/errors.js';
import { volumeCapabilityFor } from '../csi/capabilities.js';
import { classifyCsiError } from '../csi/errors.js';
import { formatBytes } from '../model/quantity.js';
import type { CsiClient, VolumeCapability, VolumeExpansionMode } from '../csi/client.js';
import { MIGRATION_TARGET_DRIVERS } from '../model/names.js';
import type { CsiPersistentVolumeSource, Pv, Pvc } from '../model/objects.js';
import { translateInTreePv } from './migration.js';
import type { Resizer, ResizeResult, ResizeTarget } from './resizer.js';
import { canSupport } from '../model/volume-scope.js';
import { readSecret, type SecretReader } from '../kube/api/secrets.js';

export interface CsiResizerOptions {
  driverName: string;
  csi: CsiClient;
  secrets: SecretReader;
  supportsSingleNodeMultiWriter: boolean;
  expansionMode: VolumeExpansionMode;
  /** The deadline of each ControllerExpandVolume: --resize-timeout, or --timeout when given (§2.1). */
  timeoutMs: number;
}

export class CsiResizer implements Resizer {
  readonly supportsControlPlaneExpansion = true;
  readonly name: string;
  readonly expansionMode: VolumeExpansionMode;

  constructor(private readonly options: CsiResizerOptions) {
    this.name = options.driverName;
    this.expansionMode = options.expansionMode;
  }

  canSupport(pv: Pv, pvc: Pvc): boolean {
    return canSupport(this.name, pv, pvc);
  }

  async resize(pv: Pv, target: ResizeTarget, signal: AbortSignal): Promise<ResizeResult> {
    try {
      return await this.expand(pv, target, signal);
    } catch (err) {
      throw classifyCsiError(err, 'expand');
    }
  }

  private async expand(pv: Pv, target: ResizeTarget, signal: AbortSignal): Promise<ResizeResult> {
    const source = this.csiSourceOf(pv);
    if (!source.volumeHandle) throw new Error('empty volume handle');

    const ref = source.controllerExpandSecretRef;
    const secrets = ref?.name ? await readSecret(this.options.secrets, ref.namespace ?? '', ref.name, signal) : {};
    let capability: VolumeCapability;
    try {
      capability = volumeCapabilityFor({ ...pv.spec, csi: source }, { supportsSingleNodeMultiWriter: this.options.supportsSingleNodeMultiWriter });
    } catch (err) {
      throw new Error(`failed to get capabilities of volume ${pv.metadata.name} with ${messageOf(err)}`, { cause: err });
    }
    const result = await this.options.csi.expandVolume({ volumeId: source.volumeHandle, requiredBytes: target.bytes, secrets, capability }, signal, {
      timeoutMs: this.options.timeoutMs,
    });
    return { ...result, capacity: formatBytes(result.capacityBytes, 'BinarySI') };
  }

  private csiSourceOf(pv: Pv): CsiPersistentVolumeSource {
    if (pv.spec.csi) return pv.spec.csi;
    if (MIGRATION_TARGET_DRIVERS.has(this.name)) return translateInTreePv(pv, this.name);
    throw new Error(`volume ${pv.metadata.name} is not migrated to CSI`);
  }
}
