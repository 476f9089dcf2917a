import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClaimUsage, toPodClaimUsage } from './in-use.js';
import { pod } from '../../test/support/builders.js';

// Two running pods, ns/pod-u1 and ns/pod-u2; each also mounts a ConfigMap, which is no claim.
const u1 = { name: 'pod-u1', uid: 'u1', resourceVersion: '1', otherVolumes: [{ name: 'cfg', configMap: { name: 'x' } }], phase: 'Running' };
const u2 = { ...u1, name: 'pod-u2', uid: 'u2' };

test('transform keeps only identity, claim names and whether the pod ended', () => {
  assert.deepEqual(toPodClaimUsage(pod({ ...u1, claims: ['a', 'b'] })), {
    metadata: { namespace: 'ns', name: 'pod-u1', uid: 'u1', resourceVersion: '1' },
    claimNames: ['a', 'b'],
    terminated: false,
  });
  assert.equal(toPodClaimUsage(pod({ ...u1, claims: ['a'], phase: 'Succeeded' })).terminated, true);
});

test('a claim is in use while a non-terminated pod mounts it', () => {
  const usage = new ClaimUsage();
  usage.upsert(toPodClaimUsage(pod({ ...u1, claims: ['a'] })));
  usage.upsert(toPodClaimUsage(pod({ ...u2, claims: ['a', 'b'] })));
  assert.equal(usage.isInUse('ns/a'), true);
  usage.remove(toPodClaimUsage(pod({ ...u2, claims: [] })));
  assert.equal(usage.isInUse('ns/b'), false);
  assert.equal(usage.isInUse('ns/a'), true);
  usage.upsert(toPodClaimUsage(pod({ ...u1, claims: ['a'], phase: 'Failed' })));
  assert.equal(usage.isInUse('ns/a'), false);
  assert.equal(usage.isInUse('other/a'), false);
});
