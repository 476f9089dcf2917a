// The rules each configuration uses, what stops without each, and how a rule is named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRule, listWatchRule, requiredPermissions, requiredRules, ruleKey, type PermissionNeeds } from './required-permissions.js';
import { Resources } from './resources.js';

const stops = (needs: PermissionNeeds) => Object.fromEntries(requiredRules(needs).map((r) => [describeRule(r), r.stops]));

test('every controller on: the VolumeAttributesClass rule stops modify only; the shared caches and writes stop both', () => {
  assert.deepEqual(stops({ pods: true, volumeAttributesClasses: true, leaseNamespace: 'kube-system' }), {
    'persistentvolumeclaims list,watch': 'resizesAndModify',
    'persistentvolumes list,watch': 'resizesAndModify',
    'pods list,watch': 'resizes',
    'volumeattributesclasses.storage.k8s.io list,watch': 'modify',
    'persistentvolumeclaims/status patch': 'resizesAndModify',
    'persistentvolumes patch': 'resizesAndModify',
    'events create,patch': 'events',
    'leases.coordination.k8s.io get,create,update in namespace kube-system': 'leading',
  });
});

test('only the controllers that run are said to stop', () => {
  const resizeOnly = stops({ pods: false, volumeAttributesClasses: false, leaseNamespace: undefined, node: true });
  assert.equal(resizeOnly['persistentvolumeclaims list,watch'], 'resizes');
  assert.equal(resizeOnly['nodes get'], 'nodeStart');
  assert.equal(resizeOnly['volumeattributesclasses.storage.k8s.io list,watch'], undefined);
  const modifyOnly = stops({ resizes: false, pods: false, volumeAttributesClasses: true, leaseNamespace: undefined });
  assert.equal(modifyOnly['persistentvolumeclaims list,watch'], 'modify');
  assert.equal(modifyOnly['persistentvolumes patch'], 'modify');
});

test('the flat permission list is every verb of every rule, as the reviews ask them', () => {
  const needs: PermissionNeeds = { pods: true, volumeAttributesClasses: true, leaseNamespace: 'default' };
  const verbs = requiredRules(needs).reduce((n, r) => n + r.verbs.length, 0);
  assert.equal(requiredPermissions(needs).length, verbs);
  assert.deepEqual(
    requiredPermissions(needs).find((a) => a.resource === 'leases'),
    { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: 'default' },
  );
  assert.deepEqual(
    requiredPermissions(needs).find((a) => a.subresource === 'status'),
    { verb: 'patch', group: '', resource: 'persistentvolumeclaims', subresource: 'status' },
  );
});

test("an informer's rule is its resource's list/watch rule, not the patch rule of the same resource", () => {
  const rules = requiredRules({ pods: false, volumeAttributesClasses: true, leaseNamespace: undefined });
  assert.equal(describeRule(listWatchRule(rules, Resources.persistentVolumes)!), 'persistentvolumes list,watch');
  assert.equal(describeRule(listWatchRule(rules, Resources.volumeAttributesClasses)!), 'volumeattributesclasses.storage.k8s.io list,watch');
  assert.equal(listWatchRule(rules, Resources.pods), undefined);
});

test('a rule is named as an operator adds it, narrowed to the verbs found missing; its key ignores which', () => {
  const [vac] = requiredRules({ pods: false, volumeAttributesClasses: true, leaseNamespace: undefined }).filter(
    (r) => r.resource === 'volumeattributesclasses',
  );
  assert.equal(describeRule(vac!, ['watch']), 'volumeattributesclasses.storage.k8s.io watch');
  const pvRules = requiredRules({ pods: false, volumeAttributesClasses: false, leaseNamespace: undefined }).filter((r) => r.resource === 'persistentvolumes');
  assert.equal(new Set(pvRules.map(ruleKey)).size, 2, 'list,watch and patch of PVs are two rules');
});
