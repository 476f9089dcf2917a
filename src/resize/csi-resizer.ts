// The Resizer over a CSI driver (§3.8): volume handle, expand secrets from the PV's
// controllerExpandSecretRef, the volume capability built from the PV, one ControllerExpandVolume.
// Unlike upstream, SINGLE_NODE_MULTI_WRITER is taken from the capabilities discovered at startup
// instead of asking the driver again before every expansion.
import { volumeCapabilityFor } from '../csi/capabilities.js';
import type { CsiClient, VolumeExpansionMode } from '../csi/client.js';
import type { Pv, Pvc } from '../model/objects.js';
import type { Resizer, ResizeResult } from './resizer.js';
import { canSupport } from './support.js';
import { readSecret, type SecretReader } from './secrets.js';

export interface CsiResizerOptions {
  driverName: string;
  csi: CsiClient;
  secrets: SecretReader;
  supportsSingleNodeMultiWriter: boolean;
  expansionMode: VolumeExpansionMode;
}

export class CsiResizer implements Resizer {
  readonly supportsControlPlaneExpansion = true;
  readonly name: string;
  readonly expansionMode: VolumeExpansionMode;

  constructor(private readonly o: CsiResizerOptions) {
    this.name = o.driverName;
    this.expansionMode = o.expansionMode;
  }

  canSupport(pv: Pv, pvc: Pvc): boolean {
    return canSupport(this.name, pv, pvc);
  }

  async resize(pv: Pv, requestedBytes: bigint, signal: AbortSignal): Promise<ResizeResult> {
    const source = pv.spec.csi;
    // In-tree volumes migrated to this driver would need csi-translation-lib's translation,
    // which we don't carry (see README, differences from upstream).
    if (!source) throw new Error(`volume ${pv.metadata.name} is not migrated to CSI`);
    if (!source.volumeHandle) throw new Error('empty volume handle');

    const ref = source.controllerExpandSecretRef;
    const secrets = ref?.name ? await readSecret(this.o.secrets, ref.namespace ?? '', ref.name, signal) : {};
    const capability = volumeCapabilityFor(pv.spec, { supportsSingleNodeMultiWriter: this.o.supportsSingleNodeMultiWriter });
    return this.o.csi.expandVolume({ volumeId: source.volumeHandle, requiredBytes: requestedBytes, secrets, capability }, signal);
  }
}
