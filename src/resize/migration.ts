// In-tree volumes migrated to CSI (§3.8 step 1): for a driver that is the migration target of an
// in-tree plugin, a PV without `spec.csi` is described by its in-tree source, and the resizer
// derives the CSI volume handle the way csi-translation-lib does. As there, the plugin is chosen
// by the PV's source, and every error it can give on this path is given with its words, since
// they reach the VolumeResizeFailed event. Only the fields expansion needs (volume handle, fs
// type) are derived. Two refusals are ours (docs/differences/migrated-volumes.md): Azure File,
// whose handle is composed from the account secret and is not reproduced, and a source that
// migrates to another driver (upstream would send that driver's handle to ours).
import { messageOf } from '../base/errors.js';
import { goQuote } from '../base/go-quote.js';
import { goUrlPath } from '../base/go-url.js';
import type { CsiPersistentVolumeSource, Pv } from '../model/objects.js';

type InTreeSource = Record<string, unknown>;

function source(pv: Pv, field: string): InTreeSource | undefined {
  const value = pv.spec[field];
  return typeof value === 'object' && value !== null ? (value as InTreeSource) : undefined;
}

function str(src: InTreeSource, field: string): string {
  const value = src[field];
  return typeof value === 'string' ? value : '';
}

/** csi-translation-lib's multi-zone label separator. */
const ZONE_SEPARATOR = '__';

/** A region shared by every zone (`{locale}-{region}-{zone}`), or csi-translation-lib's error. */
function gceRegion(zones: string[]): string {
  const regions = new Set<string>();
  for (const zone of zones) {
    const parts = zone.split('-');
    if (parts.length !== 3) throw new Error(`zone in unexpected format, expected: {locale}-{region}-{zone}, got: ${zone}`);
    regions.add(`${parts[0]}-${parts[1]}`);
  }
  if (regions.size !== 1) {
    // fmt's %v of the set (a Go map): its keys sorted, each with its empty value.
    throw new Error(
      `multiple or no regions gotten from zones, got: map[${[...regions]
        .sort()
        .map((r) => `${r}:{}`)
        .join(' ')}]`,
    );
  }
  return [...regions][0] as string;
}

function gceHandle(pv: Pv, src: InTreeSource): string {
  const disk = str(src, 'pdName');
  // The beta label first, as csi-translation-lib reads them.
  const labels = pv.metadata.labels ?? {};
  const zones = (labels['failure-domain.beta.kubernetes.io/zone'] || labels['topology.kubernetes.io/zone'] || '').split(ZONE_SEPARATOR);
  if (zones.length === 1 && zones[0] !== '') return `projects/UNSPECIFIED/zones/${zones[0]}/disks/${disk}`;
  if (zones.length > 1) {
    let region: string;
    try {
      region = gceRegion(zones);
    } catch (err) {
      throw new Error(`failed to get region from zones: ${messageOf(err)}`, { cause: err });
    }
    return `projects/UNSPECIFIED/regions/${region}/disks/${disk}`;
  }
  return `projects/UNSPECIFIED/zones/UNSPECIFIED/disks/${disk}`;
}

/** aws://<zone>/<volume-id> and aws:///<volume-id> name the volume <volume-id>, read as Go's url.Parse reads them. */
function ebsVolumeId(kubernetesId: string): string {
  if (!kubernetesId.startsWith('aws://')) return kubernetesId;
  let path: Uint8Array;
  try {
    path = goUrlPath(kubernetesId);
  } catch (err) {
    throw new Error(`Invalid disk name (${kubernetesId}): ${messageOf(err)}`, { cause: err });
  }
  const awsId = Buffer.from(path)
    .toString('utf8')
    .replace(/^\/+|\/+$/g, '');
  if (!/^vol-[^/]*$/.test(awsId)) throw new Error(`Invalid format for AWS volume (${kubernetesId})`);
  return awsId;
}

function ebsHandle(_pv: Pv, src: InTreeSource): string {
  try {
    return ebsVolumeId(str(src, 'volumeID'));
  } catch (err) {
    throw new Error(`failed to translate Kubernetes ID to EBS Volume ID ${messageOf(err)}`, { cause: err });
  }
}

function azureDiskHandle(_pv: Pv, src: InTreeSource): string {
  const kind = src['kind'];
  if (typeof kind === 'string' && kind.toLowerCase() !== 'managed') throw new Error(`kind(${kind}) is not supported in csi migration`);
  return str(src, 'diskURI');
}

/** Azure File: csi-translation-lib's one check on this path, then our refusal (no handle derived). */
function azureFileHandle(pv: Pv, src: InTreeSource): undefined {
  const secretNamespace = src['secretNamespace'];
  const namespace = typeof secretNamespace === 'string' ? secretNamespace : (pv.spec.claimRef?.namespace ?? '');
  if (namespace === '') throw new Error('could not find a secret namespace in PersistentVolumeSource or ClaimRef');
  return undefined;
}

interface InTreePlugin {
  /** The in-tree source's field in the PV spec. */
  readonly field: string;
  /** The CSI driver it migrates to. */
  readonly driver: string;
  /** The volume handle; undefined where we do not derive one (Azure File). Throws csi-translation-lib's errors. */
  readonly handle: (pv: Pv, src: InTreeSource) => string | undefined;
}

const PLUGINS: readonly InTreePlugin[] = [
  { field: 'awsElasticBlockStore', driver: 'ebs.csi.aws.com', handle: ebsHandle },
  { field: 'gcePersistentDisk', driver: 'pd.csi.storage.gke.io', handle: gceHandle },
  { field: 'cinder', driver: 'cinder.csi.openstack.org', handle: (_pv, src) => str(src, 'volumeID') },
  { field: 'azureDisk', driver: 'disk.csi.azure.com', handle: azureDiskHandle },
  { field: 'azureFile', driver: 'file.csi.azure.com', handle: azureFileHandle },
  { field: 'vsphereVolume', driver: 'csi.vsphere.vmware.com', handle: (_pv, src) => str(src, 'volumePath') },
  { field: 'portworxVolume', driver: 'pxd.portworx.com', handle: (_pv, src) => str(src, 'volumeID') },
];

const PREFIX = 'failed to translate persistent volume';

/** The CSI source of a PV migrated to `driverName`; throws "failed to translate persistent volume: ..." otherwise. */
export function translateInTreePv(pv: Pv, driverName: string): CsiPersistentVolumeSource {
  const name = pv.metadata.name;
  const plugin = PLUGINS.find((p) => source(pv, p.field) !== undefined);
  const src = plugin && source(pv, plugin.field);
  if (!plugin || !src) throw new Error(`${PREFIX}: could not find in-tree plugin translation logic for ${goQuote(name)}`);
  let volumeHandle: string | undefined;
  try {
    volumeHandle = plugin.handle(pv, src);
  } catch (err) {
    throw new Error(`${PREFIX}: ${messageOf(err)}`, { cause: err });
  }
  if (volumeHandle === undefined) throw new Error(`${PREFIX}: the volume handle of Azure File volume ${name} is not derived by this resizer`);
  if (plugin.driver !== driverName) throw new Error(`${PREFIX}: no in-tree source of ${name} migrates to ${driverName}`);
  const fsType = str(src, 'fsType');
  return { driver: driverName, volumeHandle, ...(fsType ? { fsType } : {}) };
}
