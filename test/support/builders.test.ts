// The builders' defaults are what tests silently rely on: pinned here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pod, pv, pvc, storageClass, volumeAttributesClass } from './builders.js';

test('pvc: ns/data bound to pv-1 by default, only the fields asked for, null leaves a default out', () => {
  assert.deepEqual(pvc(), { metadata: { name: 'data', namespace: 'ns' }, spec: { volumeName: 'pv-1' }, status: { phase: 'Bound' } });
  assert.deepEqual(pvc({ volumeName: null, phase: null, request: '2Gi', capacity: '1Gi', resizeStatus: 'NodeResizePending', attributesClass: null }), {
    metadata: { name: 'data', namespace: 'ns' },
    spec: { volumeAttributesClassName: null, resources: { requests: { storage: '2Gi' } } },
    status: { capacity: { storage: '1Gi' }, allocatedResourceStatuses: { storage: 'NodeResizePending' } },
  });
  // Raw status fields win over the shorthand ones.
  assert.deepEqual(pvc({ capacity: '1Gi', status: { capacity: { storage: '3Gi' } } }).status?.capacity, { storage: '3Gi' });
});

test('pv: a CSI source only when a driver (or csi fields) is given; in-tree sources and node affinity as asked', () => {
  assert.deepEqual(pv(), { metadata: { name: 'pv-1' }, spec: {} });
  assert.deepEqual(pv({ driver: 'd', capacity: '1Gi', claim: { namespace: 'ns', name: 'data', uid: 'u' } }).spec, {
    capacity: { storage: '1Gi' },
    claimRef: { namespace: 'ns', name: 'data', uid: 'u' },
    csi: { driver: 'd', volumeHandle: 'vol-1' },
  });
  assert.deepEqual(pv({ inTreeSource: { cinder: { volumeID: 'c' } }, nodeAffinity: [] }).spec, {
    cinder: { volumeID: 'c' },
    nodeAffinity: { required: { nodeSelectorTerms: [] } },
  });
});

test('pod, StorageClass, VolumeAttributesClass', () => {
  assert.deepEqual(pod({ claims: ['a'], phase: 'Running' }), {
    metadata: { name: 'pod', namespace: 'ns' },
    spec: { containers: [{ name: 'c', image: 'registry.invalid/none' }], volumes: [{ name: 'a', persistentVolumeClaim: { claimName: 'a' } }] },
    status: { phase: 'Running' },
  });
  assert.deepEqual(storageClass({ provisioner: 'd', allowVolumeExpansion: true }), {
    metadata: { name: 'fast' },
    provisioner: 'd',
    allowVolumeExpansion: true,
    reclaimPolicy: 'Retain',
    volumeBindingMode: 'Immediate',
  });
  assert.deepEqual(volumeAttributesClass({ driverName: 'd' }), { metadata: { name: 'gold' }, driverName: 'd' });
});
