import { test } from 'node:test';
import assert from 'node:assert/strict';
import { translateInTreePv } from './migration.js';
import type { Pv } from '../model/objects.js';
import { pv } from '../../test/support/builders.js';

const rows: { name: string; driver: string; pv: Pv; handle: string; fsType?: string }[] = [
  {
    name: 'EBS with zone prefix',
    driver: 'ebs.csi.aws.com',
    pv: pv({ inTreeSource: { awsElasticBlockStore: { volumeID: 'aws://us-east-1a/vol-123', fsType: 'ext4' } } }),
    handle: 'vol-123',
    fsType: 'ext4',
  },
  { name: 'EBS plain id', driver: 'ebs.csi.aws.com', pv: pv({ inTreeSource: { awsElasticBlockStore: { volumeID: 'vol-9' } } }), handle: 'vol-9' },
  {
    name: 'GCE zonal',
    driver: 'pd.csi.storage.gke.io',
    pv: pv({ inTreeSource: { gcePersistentDisk: { pdName: 'd1' } }, labels: { 'topology.kubernetes.io/zone': 'europe-west1-b' } }),
    handle: 'projects/UNSPECIFIED/zones/europe-west1-b/disks/d1',
  },
  {
    name: 'GCE regional',
    driver: 'pd.csi.storage.gke.io',
    pv: pv({ inTreeSource: { gcePersistentDisk: { pdName: 'd2' } }, labels: { 'failure-domain.beta.kubernetes.io/zone': 'europe-west1-b__europe-west1-c' } }),
    handle: 'projects/UNSPECIFIED/regions/europe-west1/disks/d2',
  },
  { name: 'Cinder', driver: 'cinder.csi.openstack.org', pv: pv({ inTreeSource: { cinder: { volumeID: 'c-1' } } }), handle: 'c-1' },
  {
    name: 'Azure Disk',
    driver: 'disk.csi.azure.com',
    pv: pv({ inTreeSource: { azureDisk: { diskURI: '/subscriptions/s/disks/x', diskName: 'x' } } }),
    handle: '/subscriptions/s/disks/x',
  },
  { name: 'vSphere', driver: 'csi.vsphere.vmware.com', pv: pv({ inTreeSource: { vsphereVolume: { volumePath: '[ds] vol.vmdk' } } }), handle: '[ds] vol.vmdk' },
  { name: 'Portworx', driver: 'pxd.portworx.com', pv: pv({ inTreeSource: { portworxVolume: { volumeID: 'px-1' } } }), handle: 'px-1' },
];

for (const row of rows) {
  test(`translates ${row.name}`, () => {
    const csi = translateInTreePv(row.pv, row.driver);
    assert.equal(csi.volumeHandle, row.handle);
    assert.equal(csi.driver, row.driver);
    assert.equal(csi.fsType, row.fsType);
  });
}

// One row per message csi-translation-lib gives on this path (TranslateInTreePVToCSI of v0.37.1,
// as external-resizer v2.3.0 wraps it), checked word for word; then our two refusals.
const EBS = 'ebs.csi.aws.com';
const GCE = 'pd.csi.storage.gke.io';
const ebs = (volumeID: string) => pv({ name: 'pv-ebs', inTreeSource: { awsElasticBlockStore: { volumeID } } });
const gceZones = (zones: string) =>
  pv({ name: 'pv-gce', inTreeSource: { gcePersistentDisk: { pdName: 'd' } }, labels: { 'topology.kubernetes.io/zone': zones } });
const ebsError = (detail: string) => `failed to translate persistent volume: failed to translate Kubernetes ID to EBS Volume ID ${detail}`;

export const TRANSLATION_ERRORS: { message: string; driver: string; pv: Pv; error: string }[] = [
  {
    message: 'no in-tree plugin for the source (a hostPath PV)',
    driver: EBS,
    pv: pv({ name: 'pv-host', inTreeSource: { hostPath: { path: '/data' } } }),
    error: 'failed to translate persistent volume: could not find in-tree plugin translation logic for "pv-host"',
  },
  {
    message: 'no source at all, the name quoted as Go quotes it',
    driver: GCE,
    pv: pv({ name: 'pv-\u00e9\t' }),
    error: 'failed to translate persistent volume: could not find in-tree plugin translation logic for "pv-\u00e9\\t"',
  },
  {
    message: 'EBS: an aws:// ID without a vol- volume',
    driver: EBS,
    pv: ebs('aws://us-east-1a/disk-1'),
    error: ebsError('Invalid format for AWS volume (aws://us-east-1a/disk-1)'),
  },
  {
    message: 'EBS: an aws:// ID with more path after the volume',
    driver: EBS,
    pv: ebs('aws://us-east-1a/vol-1/x'),
    error: ebsError('Invalid format for AWS volume (aws://us-east-1a/vol-1/x)'),
  },
  {
    message: 'EBS: a bad escape in the path',
    driver: EBS,
    pv: ebs('aws://us-east-1a/vol-%zz'),
    error: ebsError('Invalid disk name (aws://us-east-1a/vol-%zz): parse "aws://us-east-1a/vol-%zz": invalid URL escape "%zz"'),
  },
  {
    message: 'EBS: a bad escape in the fragment (the whole URL quoted)',
    driver: EBS,
    pv: ebs('aws://us-east-1a/vol-1#%4'),
    error: ebsError('Invalid disk name (aws://us-east-1a/vol-1#%4): parse "aws://us-east-1a/vol-1#%4": invalid URL escape "%4"'),
  },
  {
    message: 'EBS: a control character',
    driver: EBS,
    pv: ebs('aws://us-east-1a/vol-1\n'),
    error: ebsError('Invalid disk name (aws://us-east-1a/vol-1\n): parse "aws://us-east-1a/vol-1\\n": net/url: invalid control character in URL'),
  },
  {
    message: 'EBS: a port that is not a number',
    driver: EBS,
    pv: ebs('aws://us-east-1a:x/vol-1'),
    error: ebsError('Invalid disk name (aws://us-east-1a:x/vol-1): parse "aws://us-east-1a:x/vol-1": invalid port ":x" after host'),
  },
  {
    message: 'EBS: a character a host cannot have',
    driver: EBS,
    pv: ebs('aws://us east/vol-1'),
    error: ebsError('Invalid disk name (aws://us east/vol-1): parse "aws://us east/vol-1": invalid character " " in host name'),
  },
  {
    message: 'EBS: an escaped ASCII byte in the host',
    driver: EBS,
    pv: ebs('aws://us%41/vol-1'),
    error: ebsError('Invalid disk name (aws://us%41/vol-1): parse "aws://us%41/vol-1": invalid URL escape "%41"'),
  },
  {
    message: 'EBS: bad user info',
    driver: EBS,
    pv: ebs('aws://a b@us-east-1a/vol-1'),
    error: ebsError('Invalid disk name (aws://a b@us-east-1a/vol-1): parse "aws://a b@us-east-1a/vol-1": net/url: invalid userinfo'),
  },
  {
    message: "EBS: an IPv6 literal without its ']'",
    driver: EBS,
    pv: ebs('aws://[::1/vol-1'),
    error: ebsError('Invalid disk name (aws://[::1/vol-1): parse "aws://[::1/vol-1": missing \']\' in host'),
  },
  {
    message: "EBS: a '[' inside the host",
    driver: EBS,
    pv: ebs('aws://a[::1]/vol-1'),
    error: ebsError('Invalid disk name (aws://a[::1]/vol-1): parse "aws://a[::1]/vol-1": invalid IP-literal'),
  },
  {
    message: 'GCE: a zone not of the form {locale}-{region}-{zone}',
    driver: GCE,
    pv: gceZones('us-central1-a__uscentral1b'),
    error:
      'failed to translate persistent volume: failed to get region from zones: zone in unexpected format, expected: {locale}-{region}-{zone}, got: uscentral1b',
  },
  {
    message: 'GCE: zones of two regions',
    driver: GCE,
    pv: gceZones('us-east1-b__us-central1-a'),
    error:
      'failed to translate persistent volume: failed to get region from zones: multiple or no regions gotten from zones, got: map[us-central1:{} us-east1:{}]',
  },
  {
    message: 'Azure Disk: a kind other than Managed',
    driver: 'disk.csi.azure.com',
    pv: pv({ name: 'pv-az', inTreeSource: { azureDisk: { diskName: 'x', diskURI: '/s/x', kind: 'Shared' } } }),
    error: 'failed to translate persistent volume: kind(Shared) is not supported in csi migration',
  },
  {
    message: 'Azure File: no secret namespace and no claim',
    driver: 'file.csi.azure.com',
    pv: pv({ name: 'pv-af', inTreeSource: { azureFile: { secretName: 's', shareName: 'share' } } }),
    error: 'failed to translate persistent volume: could not find a secret namespace in PersistentVolumeSource or ClaimRef',
  },
];

for (const row of TRANSLATION_ERRORS) {
  test(`upstream's text: ${row.message}`, () => {
    assert.throws(
      () => translateInTreePv(row.pv, row.driver),
      (err: unknown) => err instanceof Error && err.message === row.error,
    );
  });
}

test('what Go reads as the volume: query, fragment, escapes, user info and ports are no part of it', () => {
  for (const [id, handle] of [
    ['aws://us-east-1a/vol-1?x=/y', 'vol-1'],
    ['aws://us-east-1a/vol-1#frag', 'vol-1'],
    ['aws:///vol-%41b', 'vol-Ab'],
    ['aws://user:p%40ss@us-east-1a:443//vol-2/', 'vol-2'],
    ['aws://[fe80::1]/vol-3', 'vol-3'],
  ] as const) {
    assert.equal(translateInTreePv(ebs(id), EBS).volumeHandle, handle, id);
  }
});

test('GCE: the beta zone label wins over the GA one, as csi-translation-lib reads them', () => {
  const labels = { 'failure-domain.beta.kubernetes.io/zone': 'europe-west1-b', 'topology.kubernetes.io/zone': 'us-east1-b' };
  assert.equal(
    translateInTreePv(pv({ inTreeSource: { gcePersistentDisk: { pdName: 'd' } }, labels }), GCE).volumeHandle,
    'projects/UNSPECIFIED/zones/europe-west1-b/disks/d',
  );
});

test('our refusals: a source migrating to another driver, and Azure File once its secret namespace is known', () => {
  assert.throws(
    () => translateInTreePv(pv({ name: 'pv-c', inTreeSource: { cinder: { volumeID: 'c' } } }), EBS),
    (err: unknown) => err instanceof Error && err.message === 'failed to translate persistent volume: no in-tree source of pv-c migrates to ebs.csi.aws.com',
  );
  assert.throws(
    () => translateInTreePv(pv({ name: 'pv-af', inTreeSource: { azureFile: { shareName: 's', secretNamespace: 'ns' } } }), 'file.csi.azure.com'),
    (err: unknown) =>
      err instanceof Error &&
      err.message === 'failed to translate persistent volume: the volume handle of Azure File volume pv-af is not derived by this resizer',
  );
});
