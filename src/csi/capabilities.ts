// PV spec to the VolumeCapability sent with ControllerExpandVolume: Block when the PV is a raw
// block volume, otherwise Mount with the PV's fs type and mount options; the access mode follows
// the reference's table (docs/behavior.md §3.8). Pure: the SINGLE_NODE_MULTI_WRITER capability is an input. The result is the CsiClient
// port's own type; client.ts turns it into the csi.v1 message.
import type { AccessModeName, VolumeCapability } from './client.js';

/** The part of a PersistentVolume spec this needs; a V1PersistentVolumeSpec fits. */
export interface PvSpecForCapability {
  volumeMode?: string;
  accessModes?: string[];
  mountOptions?: string[];
  csi?: { fsType?: string };
}

/** The texts are csi-lib-utils' (accessmodes.ToCSIAccessMode), which upstream shows in events. */
export class UnsupportedAccessModeError extends Error {
  constructor(
    readonly accessModes: readonly string[],
    message: string,
  ) {
    super(message);
    this.name = 'UnsupportedAccessModeError';
  }
}

export function accessModeFor(accessModes: readonly string[], supportsSingleNodeMultiWriter: boolean): AccessModeName {
  const modes = new Set(accessModes);
  // ReadWriteOncePod must stand alone: it promises one writer pod, which no other mode can keep.
  if (modes.has('ReadWriteOncePod')) {
    if (modes.size > 1) {
      throw new UnsupportedAccessModeError(
        accessModes,
        'Kubernetes does not support use of ReadWriteOncePod with other access modes on the same PersistentVolume',
      );
    }
    return supportsSingleNodeMultiWriter ? 'SINGLE_NODE_SINGLE_WRITER' : 'SINGLE_NODE_WRITER';
  }
  // ReadWriteMany subsumes every other mode.
  if (modes.has('ReadWriteMany')) return 'MULTI_NODE_MULTI_WRITER';
  if (modes.has('ReadOnlyMany') && modes.has('ReadWriteOnce')) {
    throw new UnsupportedAccessModeError(accessModes, 'CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume');
  }
  if (modes.has('ReadOnlyMany')) return 'MULTI_NODE_READER_ONLY';
  if (modes.has('ReadWriteOnce')) return supportsSingleNodeMultiWriter ? 'SINGLE_NODE_MULTI_WRITER' : 'SINGLE_NODE_WRITER';
  // Go's %+v of the list: [A B].
  throw new UnsupportedAccessModeError(accessModes, `unsupported AccessMode combination: [${accessModes.join(' ')}]`);
}

export function volumeCapabilityFor(spec: PvSpecForCapability, options: { supportsSingleNodeMultiWriter: boolean }): VolumeCapability {
  const accessMode = accessModeFor(spec.accessModes ?? [], options.supportsSingleNodeMultiWriter);
  if (spec.volumeMode === 'Block') return { accessType: 'block', accessMode };
  return { accessType: 'mount', fsType: spec.csi?.fsType ?? '', mountFlags: [...(spec.mountOptions ?? [])], accessMode };
}
