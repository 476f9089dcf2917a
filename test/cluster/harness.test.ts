import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { parseEnvFile } from './components.js';
import { quantityBytes, uniqueName } from './fixtures.js';
import { rbacManifestPath, secretsAccessManifestPath, withTestUser } from './rbac.js';

test('env files: KEY=VALUE lines, comments and blanks skipped, = allowed in values', () => {
  const vars = parseEnvFile('# c\nA=1\n\nB=x=y\nUPSTREAM_RESIZER_BIN=\n');
  assert.equal(vars.get('A'), '1');
  assert.equal(vars.get('B'), 'x=y');
  assert.equal(vars.get('UPSTREAM_RESIZER_BIN'), '');
});

test('fixture quantities and names', () => {
  assert.equal(quantityBytes('1Gi'), 1n << 30n);
  assert.equal(quantityBytes('500M'), 500_000_000n);
  assert.throws(() => quantityBytes('1.5Gi'));
  assert.notEqual(uniqueName(), uniqueName());
  assert.match(uniqueName('rz-pvc'), /^rz-pvc-\d+-[0-9a-f]{6}$/);
});

test('the test user is added once to a binding, beside the ServiceAccount', () => {
  const sa = { kind: 'ServiceAccount', name: 'csi-resizer', namespace: 'default' };
  const once = withTestUser([sa]);
  assert.deepEqual(
    once.map((s) => s.kind),
    ['ServiceAccount', 'User'],
  );
  assert.equal(withTestUser(once).length, 2);
});

test('deploy/kubernetes/rbac.yaml grants the verbs the resizer uses and no secrets; the opt-in grants secrets get only', () => {
  const docs = k8s.loadAllYaml(readFileSync(rbacManifestPath, 'utf8')) as k8s.KubernetesObject[];
  const role = docs.find((d) => d.kind === 'ClusterRole') as k8s.V1ClusterRole;
  const verbs = (rules: k8s.V1PolicyRule[], group: string, resource: string) =>
    rules
      .filter((r) => r.apiGroups!.includes(group) && r.resources!.includes(resource))
      .flatMap((r) => r.verbs)
      .sort();
  assert.deepEqual(verbs(role.rules!, '', 'persistentvolumes'), ['list', 'patch', 'watch']);
  assert.deepEqual(verbs(role.rules!, '', 'persistentvolumeclaims'), ['list', 'watch']);
  assert.deepEqual(verbs(role.rules!, '', 'persistentvolumeclaims/status'), ['patch']);
  assert.deepEqual(verbs(role.rules!, '', 'pods'), ['list', 'watch']);
  assert.deepEqual(verbs(role.rules!, '', 'events'), ['create', 'patch']);
  assert.deepEqual(verbs(role.rules!, '', 'secrets'), []);
  assert.deepEqual(verbs(role.rules!, 'storage.k8s.io', 'volumeattributesclasses'), ['list', 'watch']);
  assert.deepEqual(verbs(role.rules!, 'storage.k8s.io', 'storageclasses'), []);
  const lease = docs.find((d) => d.kind === 'Role') as k8s.V1Role;
  assert.deepEqual(lease.rules![0]!.verbs!.slice().sort(), ['create', 'get', 'update']);
  for (const kind of ['ClusterRoleBinding', 'RoleBinding']) {
    const b = docs.find((d) => d.kind === kind) as k8s.V1RoleBinding;
    assert.deepEqual(
      b.subjects!.map((s) => ({ kind: s.kind, name: s.name, namespace: s.namespace })),
      [{ kind: 'ServiceAccount', name: 'csi-resizer', namespace: 'default' }],
    );
  }

  const optIn = k8s.loadAllYaml(readFileSync(secretsAccessManifestPath, 'utf8')) as k8s.KubernetesObject[];
  const secretsRole = optIn.find((d) => d.kind === 'ClusterRole') as k8s.V1ClusterRole;
  assert.deepEqual(
    secretsRole.rules!.map((r) => ({ apiGroups: r.apiGroups, resources: r.resources, verbs: r.verbs })),
    [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
  );
  const binding = optIn.find((d) => d.kind === 'ClusterRoleBinding') as k8s.V1ClusterRoleBinding;
  assert.equal(binding.roleRef.name, secretsRole.metadata?.name);
  assert.deepEqual(
    binding.subjects!.map((s) => ({ kind: s.kind, name: s.name, namespace: s.namespace })),
    [{ kind: 'ServiceAccount', name: 'csi-resizer', namespace: 'default' }],
  );
});
