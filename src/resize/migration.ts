// In-tree volumes migrated to CSI (§3.8 step 1): for a driver that is the migration target of an
// in-tree plugin, a PV without `spec.csi` is described by its in-tree source, and the resizer
// derives the CSI volume handle the way csi-translation-lib does. Only the fields expansion needs
// (volume handle, fs type) are derived. Azure File, whose handle csi-translation-lib composes from
// the account secret's name and namespace, is not reproduced and is refused clearly.
import type { CsiPersistentVolumeSource, Pv } from '../model/objects.js';

type InTreeSource = Record<string, unknown>;

const ZONE_LABELS = ['topology.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/zone'];

function source(pv: Pv, field: string): InTreeSource | undefined {
  const value = pv.spec[field];
  return typeof value === 'object' && value !== null ? (value as InTreeSource) : undefined;
}

function str(src: InTreeSource, field: string): string {
  const value = src[field];
  return typeof value === 'string' ? value : '';
}

function gceHandle(pv: Pv, src: InTreeSource): string {
  const disk = str(src, 'pdName');
  const zones =
    ZONE_LABELS.map((l) => pv.metadata.labels?.[l])
      .find((z) => z)
      ?.split('__') ?? [];
  if (zones.length > 1) {
    // A regional disk: its zones share a region (the zone name without its last dash part).
    const region = (zones[0] ?? '').replace(/-[^-]+$/, '');
    return `projects/UNSPECIFIED/regions/${region}/disks/${disk}`;
  }
  return `projects/UNSPECIFIED/zones/${zones[0] ?? 'UNSPECIFIED'}/disks/${disk}`;
}

/** aws://<zone>/<volume-id> and aws:///<volume-id> name the same volume as <volume-id>. */
function ebsHandle(volumeId: string): string {
  return volumeId.startsWith('aws://') ? volumeId.slice(volumeId.lastIndexOf('/') + 1) : volumeId;
}

const TRANSLATIONS: Readonly<Record<string, { field: string; handle: (pv: Pv, src: InTreeSource) => string }>> = {
  'ebs.csi.aws.com': { field: 'awsElasticBlockStore', handle: (_pv, src) => ebsHandle(str(src, 'volumeID')) },
  'pd.csi.storage.gke.io': { field: 'gcePersistentDisk', handle: gceHandle },
  'cinder.csi.openstack.org': { field: 'cinder', handle: (_pv, src) => str(src, 'volumeID') },
  'disk.csi.azure.com': { field: 'azureDisk', handle: (_pv, src) => str(src, 'diskURI') },
  'csi.vsphere.vmware.com': { field: 'vsphereVolume', handle: (_pv, src) => str(src, 'volumePath') },
  'pxd.portworx.com': { field: 'portworxVolume', handle: (_pv, src) => str(src, 'volumeID') },
};

/** The CSI source of a PV migrated to `driverName`; throws "failed to translate persistent volume: ..." otherwise. */
export function translateInTreePv(pv: Pv, driverName: string): CsiPersistentVolumeSource {
  const translation = TRANSLATIONS[driverName];
  const src = translation ? source(pv, translation.field) : undefined;
  if (!translation || !src) {
    throw new Error(`failed to translate persistent volume: no in-tree source of ${pv.metadata.name} migrates to ${driverName}`);
  }
  const fsType = str(src, 'fsType');
  return { driver: driverName, volumeHandle: translation.handle(pv, src), ...(fsType ? { fsType } : {}) };
}
