// PV spec to the VolumeCapability sent with ControllerExpandVolume: Block when the PV is a raw
// block volume, otherwise Mount with the PV's fs type and mount options; the access mode follows
// the reference's table (docs/behavior.md §3.8). Pure: the SINGLE_NODE_MULTI_WRITER capability is an input.
import type { AccessModeName, VolumeCapability } from './proto/types.js';

/** The part of a PersistentVolume spec this needs; a V1PersistentVolumeSpec fits. */
export interface PvSpecForCapability {
  volumeMode?: string;
  accessModes?: string[];
  mountOptions?: string[];
  csi?: { fsType?: string };
}

export class UnsupportedAccessModeError extends Error {
  constructor(readonly accessModes: readonly string[], reason: string) {
    super(`${reason}: [${accessModes.join(', ')}]`);
    this.name = 'UnsupportedAccessModeError';
  }
}

export function accessModeFor(accessModes: readonly string[], supportsSingleNodeMultiWriter: boolean): AccessModeName {
  const has = (mode: string) => accessModes.includes(mode);
  // ReadWriteOncePod must stand alone: it promises one writer pod, which no other mode can keep.
  if (has('ReadWriteOncePod')) {
    if (accessModes.length !== 1) {
      throw new UnsupportedAccessModeError(accessModes, 'ReadWriteOncePod may not be combined with other access modes');
    }
    return supportsSingleNodeMultiWriter ? 'SINGLE_NODE_SINGLE_WRITER' : 'SINGLE_NODE_WRITER';
  }
  // ReadWriteMany subsumes every other mode.
  if (has('ReadWriteMany')) return 'MULTI_NODE_MULTI_WRITER';
  if (has('ReadOnlyMany') && has('ReadWriteOnce')) {
    throw new UnsupportedAccessModeError(accessModes, 'CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume');
  }
  if (has('ReadOnlyMany')) return 'MULTI_NODE_READER_ONLY';
  if (has('ReadWriteOnce')) return supportsSingleNodeMultiWriter ? 'SINGLE_NODE_MULTI_WRITER' : 'SINGLE_NODE_WRITER';
  throw new UnsupportedAccessModeError(accessModes, 'unsupported AccessMode combination');
}

export function volumeCapabilityFor(
  spec: PvSpecForCapability,
  options: { supportsSingleNodeMultiWriter: boolean },
): VolumeCapability {
  const access_mode = { mode: accessModeFor(spec.accessModes ?? [], options.supportsSingleNodeMultiWriter) };
  if (spec.volumeMode === 'Block') return { block: {}, access_mode };
  return {
    mount: { fs_type: spec.csi?.fsType ?? '', mount_flags: [...(spec.mountOptions ?? [])] },
    access_mode,
  };
}
