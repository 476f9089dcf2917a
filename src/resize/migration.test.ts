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

test("a source of another plugin, or Azure File, is refused with upstream's prefix", () => {
  assert.throws(
    () => translateInTreePv(pv({ inTreeSource: { cinder: { volumeID: 'c' } } }), 'ebs.csi.aws.com'),
    /^Error: failed to translate persistent volume/,
  );
  assert.throws(
    () => translateInTreePv(pv({ inTreeSource: { azureFile: { shareName: 's' } } }), 'file.csi.azure.com'),
    /failed to translate persistent volume/,
  );
});
