// The Modifier over a CSI driver (§4.5): mutable parameters from the VolumeAttributesClass (with
// --extra-modify-metadata, the PVC and PV names added), secrets from the PV's modify-secret
// annotations with a fallback to controllerExpandSecretRef, one ControllerModifyVolume with the
// modify timeout as its deadline. Every failure leaves as a CsiError, the port's one error type
// (modifier.ts).
import type { CsiClient } from '../csi/client.js';
import { classifyCsiError } from '../csi/errors.js';
import { Annotation } from '../model/names.js';
import type { Pv, Pvc, VolumeAttributesClass } from '../model/objects.js';
import { readSecret, type SecretReader } from '../kube/api/secrets.js';
import type { Modifier } from './modifier.js';

/** Keys --extra-modify-metadata adds to the mutable parameters (the provisioner's spelling). */
export const ExtraModifyMetadataKey = {
  PvcName: 'csi.storage.k8s.io/pvc/name',
  PvcNamespace: 'csi.storage.k8s.io/pvc/namespace',
  PvName: 'csi.storage.k8s.io/pv/name',
} as const;

export interface CsiModifierOptions {
  driverName: string;
  csi: CsiClient;
  secrets: SecretReader;
  /** --extra-modify-metadata */
  extraModifyMetadata: boolean;
  /** The deadline of each ControllerModifyVolume: --modify-timeout, or --timeout when given (§2.1). */
  timeoutMs: number;
}

/** The class's parameters as sent to the driver; never the class's own map (it lives in the cache). */
export function mutableParameters(vac: VolumeAttributesClass, pv: Pv, pvc: Pvc, extraModifyMetadata: boolean): Record<string, string> {
  const parameters: Record<string, string> = { ...(vac.parameters ?? {}) };
  if (extraModifyMetadata) {
    parameters[ExtraModifyMetadataKey.PvcName] = pvc.metadata.name;
    parameters[ExtraModifyMetadataKey.PvcNamespace] = pvc.metadata.namespace ?? '';
    parameters[ExtraModifyMetadataKey.PvName] = pv.metadata.name;
  }
  return parameters;
}

/** Where the modify secrets are: the PV's modify-secret annotations (both set), else the expand secret ref. */
export function modifySecretRef(pv: Pv): { namespace: string; name: string } | undefined {
  const name = pv.metadata.annotations?.[Annotation.ControllerModifySecretName];
  const namespace = pv.metadata.annotations?.[Annotation.ControllerModifySecretNamespace];
  if (name && namespace) return { namespace, name };
  const ref = pv.spec.csi?.controllerExpandSecretRef;
  if (ref?.name) return { namespace: ref.namespace ?? '', name: ref.name };
  return undefined;
}

export class CsiModifier implements Modifier {
  readonly name: string;

  constructor(private readonly options: CsiModifierOptions) {
    this.name = options.driverName;
  }

  async modify(pv: Pv, pvc: Pvc, vac: VolumeAttributesClass, signal: AbortSignal): Promise<void> {
    try {
      await this.modifyOnce(pv, pvc, vac, signal);
    } catch (err) {
      throw classifyCsiError(err, 'modify');
    }
  }

  private async modifyOnce(pv: Pv, pvc: Pvc, vac: VolumeAttributesClass, signal: AbortSignal): Promise<void> {
    const source = pv.spec.csi;
    if (!source) throw new Error(`volume ${pv.metadata.name} is not a CSI volumes, modify volume feature only supports CSI volumes`);
    if (!source.volumeHandle) throw new Error('empty volume handle');
    const ref = modifySecretRef(pv);
    const secrets = ref ? await readSecret(this.options.secrets, ref.namespace, ref.name, signal) : {};
    await this.options.csi.modifyVolume(
      { volumeId: source.volumeHandle, secrets, mutableParameters: mutableParameters(vac, pv, pvc, this.options.extraModifyMetadata) },
      signal,
      { timeoutMs: this.options.timeoutMs },
    );
  }
}
