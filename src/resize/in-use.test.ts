import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClaimUsage, toPodClaimUsage } from './in-use.js';

const pod = (uid: string, claims: string[], phase = 'Running') => ({
  metadata: { namespace: 'ns', name: `pod-${uid}`, uid, resourceVersion: '1' },
  spec: { volumes: [...claims.map((claimName) => ({ name: claimName, persistentVolumeClaim: { claimName } })), { name: 'cfg', configMap: { name: 'x' } }] },
  status: { phase },
});

test('transform keeps only identity, claim names and whether the pod ended', () => {
  assert.deepEqual(toPodClaimUsage(pod('u1', ['a', 'b'])), {
    metadata: { namespace: 'ns', name: 'pod-u1', uid: 'u1', resourceVersion: '1' },
    claimNames: ['a', 'b'],
    terminated: false,
  });
  assert.equal(toPodClaimUsage(pod('u1', ['a'], 'Succeeded')).terminated, true);
});

test('a claim is in use while a non-terminated pod mounts it', () => {
  const usage = new ClaimUsage();
  usage.upsert(toPodClaimUsage(pod('u1', ['a'])));
  usage.upsert(toPodClaimUsage(pod('u2', ['a', 'b'])));
  assert.equal(usage.isInUse('ns/a'), true);
  usage.remove(toPodClaimUsage(pod('u2', [])));
  assert.equal(usage.isInUse('ns/b'), false);
  assert.equal(usage.isInUse('ns/a'), true);
  usage.upsert(toPodClaimUsage(pod('u1', ['a'], 'Failed')));
  assert.equal(usage.isInUse('ns/a'), false);
  assert.equal(usage.podCount, 0);
  assert.equal(usage.isInUse('other/a'), false);
});
