// deploy/kubernetes/rbac.yaml grants exactly what the resizer asks the API server for: the list the
// startup RBAC check verifies (src/kube/api/required-permissions.ts, the calls of src/kube/api/client.ts) with
// every controller on, no more (a rule nothing uses fails here) and no less. Secrets come only
// from the opt-in manifest, and only `get`, the one call src/kube/api/secrets.ts makes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as k8s from '@kubernetes/client-node';
import { requiredPermissions, type PermissionNeeds } from '../../src/kube/api/required-permissions.js';
import { join } from 'node:path';
import { rbacManifestPath, secretsAccessManifestPath } from '../cluster/rbac.js';
import { repoRoot } from '../cluster/components.js';

const load = (path: string) => k8s.loadAllYaml(readFileSync(path, 'utf8')).filter(Boolean) as k8s.KubernetesObject[];

/** "verb group resource[/sub] @scope" for every verb a ClusterRole (scope *) or Role (its namespace) grants. */
function granted(docs: k8s.KubernetesObject[]): string[] {
  const out: string[] = [];
  for (const doc of docs) {
    if (doc.kind !== 'ClusterRole' && doc.kind !== 'Role') continue;
    const scope = doc.kind === 'Role' ? doc.metadata!.namespace! : '*';
    for (const rule of (doc as k8s.V1ClusterRole).rules ?? []) {
      for (const group of rule.apiGroups ?? [])
        for (const resource of rule.resources ?? [])
          for (const verb of rule.verbs) {
            out.push(`${verb} ${group} ${resource} @${scope}`);
          }
    }
  }
  return out.sort();
}

function needed(needs: PermissionNeeds): string[] {
  return requiredPermissions(needs)
    .map((a) => `${a.verb} ${a.group} ${a.resource}${a.subresource ? `/${a.subresource}` : ''} @${a.namespace ?? '*'}`)
    .sort();
}

test('rbac.yaml grants exactly the permissions the resizer uses with every controller on', () => {
  const everything: PermissionNeeds = { pods: true, volumeAttributesClasses: true, leaseNamespace: 'default' };
  assert.deepEqual(granted(load(rbacManifestPath)), needed(everything));
});

test('each optional controller needs a subset of rbac.yaml', () => {
  const all = new Set(granted(load(rbacManifestPath)));
  for (const needs of [
    { pods: false, volumeAttributesClasses: false, leaseNamespace: undefined },
    { pods: true, volumeAttributesClasses: false, leaseNamespace: 'default' },
    { pods: false, volumeAttributesClasses: true, leaseNamespace: undefined },
  ] satisfies PermissionNeeds[]) {
    for (const permission of needed(needs)) assert.ok(all.has(permission), `${permission} (${JSON.stringify(needs)})`);
  }
});

test('secrets: none in rbac.yaml; the opt-in grants get, cluster-wide, to the same ServiceAccount', () => {
  assert.ok(!granted(load(rbacManifestPath)).some((p) => p.includes(' secrets ')));
  const optIn = load(secretsAccessManifestPath);
  assert.deepEqual(granted(optIn), ['get  secrets @*']);
  const sa = load(rbacManifestPath).find((d) => d.kind === 'ServiceAccount')!;
  const binding = optIn.find((d) => d.kind === 'ClusterRoleBinding') as k8s.V1ClusterRoleBinding;
  assert.deepEqual(
    binding.subjects?.map((s) => [s.kind, s.name, s.namespace]),
    [['ServiceAccount', sa.metadata?.name, sa.metadata?.namespace]],
  );
  assert.equal(binding.roleRef.name, optIn.find((d) => d.kind === 'ClusterRole')?.metadata?.name);
});

test('the auto-grow component grants exactly what --auto-grow adds to rbac.yaml, to the same ServiceAccount; never nodes/proxy', () => {
  const component = load(join(repoRoot, 'deploy', 'kubernetes', 'auto-grow', 'rbac-auto-grow.yaml'));
  const everything: PermissionNeeds = { pods: true, volumeAttributesClasses: true, leaseNamespace: 'default' };
  const base = new Set(needed(everything));
  const added = needed({ ...everything, autoGrow: { kubelets: true } }).filter((p) => !base.has(p));
  assert.deepEqual(granted(component), added);
  assert.ok(!granted(component).some((p) => p.includes('nodes/proxy')));
  // With Prometheus as the usage source the node rules are not needed.
  const withoutKubelets = needed({ ...everything, autoGrow: { kubelets: false } }).filter((p) => !base.has(p));
  assert.deepEqual(withoutKubelets, ['list storage.k8s.io storageclasses @*', 'patch  persistentvolumeclaims @*', 'watch storage.k8s.io storageclasses @*']);
  const sa = load(rbacManifestPath).find((d) => d.kind === 'ServiceAccount')!;
  const binding = component.find((d) => d.kind === 'ClusterRoleBinding') as k8s.V1ClusterRoleBinding;
  assert.deepEqual(
    binding.subjects?.map((s) => [s.kind, s.name, s.namespace]),
    [['ServiceAccount', sa.metadata?.name, sa.metadata?.namespace]],
  );
  assert.equal(binding.roleRef.name, component.find((d) => d.kind === 'ClusterRole')?.metadata?.name);
});
