import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StringPool } from './string-pool.js';

test('internValues changes no value: a cached PV reads the same after it', () => {
  const pv = {
    kind: 'PersistentVolume',
    metadata: {
      name: 'pv-1',
      uid: 'u-1',
      resourceVersion: '7',
      creationTimestamp: '2026-12-01T12:00:00Z',
      finalizers: ['kubernetes.io/pv-protection'],
      labels: { app: 'x' },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      capacity: { storage: '1Gi' },
      csi: { driver: 'd.csi.test', volumeHandle: 'h-1', volumeAttributes: { a: 'b' } },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1', 'n2'] }] }] } },
      claimRef: { namespace: 'ns', name: 'c', uid: 'u-2' },
      mountOptions: [],
      persistentVolumeReclaimPolicy: 'Delete',
    },
    status: { phase: 'Bound', lastPhaseTransitionTime: '2026-12-01T12:00:01Z' },
    nullField: null,
    count: 3,
  };
  const before = structuredClone(pv);
  new StringPool().internValues(pv);
  assert.deepEqual(pv, before);
});

test('repeated values are pooled; names, UIDs, resourceVersions, volume handles and times are not', () => {
  const pool = new StringPool();
  pool.internValues({
    metadata: { name: 'pv-1', uid: 'u-1', resourceVersion: '7', generateName: 'g-', creationTimestamp: 't1', namespace: 'ns' },
    spec: { volumeName: 'pv-1', csi: { driver: 'd.csi.test', volumeHandle: 'h-1' }, accessModes: ['ReadWriteOnce'] },
    status: { lastPhaseTransitionTime: 't2', phase: 'Bound' },
  });
  // ns, d.csi.test, ReadWriteOnce, Bound
  assert.equal(pool.size, 4);
  assert.equal(pool.intern('d.csi.test'), 'd.csi.test');
  assert.equal(pool.size, 4, 'a pooled value is not added twice');
});

test('the pool is bounded: when full it starts over', () => {
  const pool = new StringPool(3);
  for (const v of ['a', 'b', 'c']) pool.intern(v);
  assert.equal(pool.size, 3);
  pool.intern('d');
  assert.equal(pool.size, 1);
  assert.equal(pool.intern('d'), 'd');
  assert.equal(pool.size, 1);
});
