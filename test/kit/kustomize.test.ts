// The kustomize base and overlays render with kustomize (built by test/infra/build-kit-tools.sh),
// rewrite namespaces, names and references consistently, apply to the test API server
// (server-side apply, dry run), and, applied for real, grant the ServiceAccount exactly the
// resizer's permissions: secrets only with the opt-in component.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseConfig } from '../../src/flags/config.js';
import { requiredPermissions, type PermissionNeeds } from '../../src/kube/api/required-permissions.js';
import { repoRoot } from '../cluster/components.js';
import { uniqueName } from '../cluster/fixtures.js';
import { statusOf } from '../cluster/kube.js';
import { adminClients, useCluster, type KubeClients } from '../cluster/test-cluster.js';
import { eventually } from '../support/eventually.js';
import { kitTools, runTool } from './tools.js';

const deploy = join(repoRoot, 'deploy');
type Obj = k8s.KubernetesObject & Record<string, unknown>;

async function build(dir: string): Promise<Obj[]> {
  const { kustomizeBin } = await kitTools();
  const { stdout } = await runTool(kustomizeBin, ['build', dir]);
  return k8s.loadAllYaml(stdout).filter(Boolean) as Obj[];
}

const byKind = (objs: Obj[], kind: string) => objs.filter((o) => o.kind === kind);
const one = <T>(objs: Obj[], kind: string): T => {
  const found = byKind(objs, kind);
  assert.equal(found.length, 1, `one ${kind}`);
  return found[0] as T;
};
const plain = (file: string) => k8s.loadAllYaml(readFileSync(join(deploy, 'kubernetes', file), 'utf8')).filter(Boolean) as Obj[];
const key = (o: Obj) => `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;

/**
 * A throwaway overlay over the repository's base and components: `settings` are its own lines
 * (namespace, namePrefix); base and components are given as absolute paths and written relative
 * (kustomize refuses absolute ones).
 */
function overlay(t: { after(fn: () => void): void }, settings: string[], components: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'rz-kustomize-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const lines = [
    'apiVersion: kustomize.config.k8s.io/v1beta1',
    'kind: Kustomization',
    'resources:',
    `  - ${relative(dir, join(deploy, 'kubernetes'))}`,
    ...settings,
    ...(components.length ? ['components:', ...components.map((c) => `  - ${relative(dir, c)}`)] : []),
  ];
  writeFileSync(join(dir, 'kustomization.yaml'), `${lines.join('\n')}\n`);
  return dir;
}

/** Everything a resizer's objects must agree on after an overlay rewrote them. */
function assertConsistent(objs: Obj[], namespace: string, prefix: string): void {
  const sa = one<k8s.V1ServiceAccount>(objs, 'ServiceAccount');
  assert.equal(sa.metadata?.name, `${prefix}csi-resizer`);
  for (const o of objs) {
    const clusterScoped = o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding';
    assert.equal(o.metadata?.namespace, clusterScoped ? undefined : namespace, key(o));
    assert.ok(o.metadata!.name!.startsWith(prefix), `${key(o)} has the prefix`);
  }
  const names = new Set(objs.map((o) => `${o.kind}/${o.metadata?.name}`));
  for (const b of [...byKind(objs, 'ClusterRoleBinding'), ...byKind(objs, 'RoleBinding')] as unknown as k8s.V1RoleBinding[]) {
    assert.ok(names.has(`${b.roleRef.kind}/${b.roleRef.name}`), `${b.metadata?.name} refers to ${b.roleRef.kind}/${b.roleRef.name}, which exists`);
    assert.deepEqual(
      b.subjects?.map((s) => [s.kind, s.name, s.namespace]),
      [['ServiceAccount', sa.metadata?.name, namespace]],
    );
  }
  const deployment = one<k8s.V1Deployment>(objs, 'Deployment');
  assert.equal(deployment.spec?.template.spec?.serviceAccountName, sa.metadata?.name);
}

test('the base renders to exactly the plain manifests', async () => {
  const rendered = await build(join(deploy, 'kubernetes'));
  const expected = [...plain('rbac.yaml'), ...plain('deployment.yaml')];
  assert.deepEqual(rendered.map(key).sort(), expected.map(key).sort());
  for (const o of expected) {
    const r = rendered.find((x) => key(x) === key(o))!;
    assert.deepEqual(JSON.parse(JSON.stringify(r)), JSON.parse(JSON.stringify(o)), key(o));
  }
});

test('overlays: namespace, prefix, driver container and image; secrets only with the component', async () => {
  const example = await build(join(deploy, 'kustomize', 'overlays', 'example'));
  assertConsistent(example, 'example-csi', 'example-');
  const rules = (objs: Obj[]) => (byKind(objs, 'ClusterRole') as k8s.V1ClusterRole[]).flatMap((r) => r.rules ?? []);
  assert.ok(!rules(example).some((r) => r.resources?.includes('secrets')), 'no secrets without the component');

  const pod = one<k8s.V1Deployment>(example, 'Deployment').spec!.template.spec!;
  const resizer = pod.containers.find((c) => c.name === 'csi-resizer')!;
  assert.equal(resizer.image, 'registry.example.com/csi-resizer:0.1.0');
  const driver = pod.containers.find((c) => c.name === 'csi-driver')!;
  assert.equal(driver.image, 'registry.example.com/example-csi-driver:v1.0.0');
  // The patch replaced the driver's image and arguments and kept the shared socket volume.
  assert.deepEqual(
    driver.volumeMounts?.map((m) => m.name),
    resizer.volumeMounts?.map((m) => m.name),
  );
  assert.equal(one<k8s.V1Deployment>(example, 'Deployment').spec?.replicas, 2);

  const withSecrets = await build(join(deploy, 'kustomize', 'overlays', 'example-with-secrets'));
  assertConsistent(withSecrets, 'example-csi', 'example-');
  const secretRules = rules(withSecrets).filter((r) => r.resources?.includes('secrets'));
  assert.deepEqual(
    secretRules.map((r) => r.verbs),
    [['get']],
  );
  // Everything else is the example overlay's.
  assert.deepEqual(
    withSecrets
      .filter((o) => !o.metadata!.name!.includes('secrets'))
      .map(key)
      .sort(),
    example.map(key).sort(),
  );
});

test("the auto-grow component: its rules only, bound to the overlay's ServiceAccount, never nodes/proxy", async (t) => {
  const objs = await build(overlay(t, ['namespace: storage', 'namePrefix: grow-'], [join(deploy, 'kubernetes', 'auto-grow')]));
  assertConsistent(objs, 'storage', 'grow-');
  const role = (byKind(objs, 'ClusterRole') as k8s.V1ClusterRole[]).find((r) => r.metadata?.name === 'grow-external-resizer-auto-grow');
  assert.deepEqual(
    role?.rules?.map((r) => `${r.apiGroups?.join(',')}|${r.resources?.join(',')}|${r.verbs.join(',')}`),
    ['|persistentvolumeclaims|patch', 'storage.k8s.io|storageclasses|list,watch', '|nodes|get', '|nodes/stats|get'],
  );
  const everyRule = (byKind(objs, 'ClusterRole') as k8s.V1ClusterRole[]).flatMap((r) => r.rules ?? []);
  assert.ok(!everyRule.some((r) => r.resources?.includes('nodes/proxy')), 'no nodes/proxy anywhere');
});

test('monitoring components select the resizer pods and scrape the port and path it serves', async (t) => {
  const dir = overlay(
    t,
    ['namespace: monitored', 'namePrefix: mon-'],
    ['alerts', 'dashboard', 'podmonitor', 'servicemonitor'].map((c) => join(deploy, 'monitoring', c)),
  );
  const objs = await build(dir);
  assertConsistent(
    objs.filter((o) => o.apiVersion?.startsWith('rbac') || o.kind === 'ServiceAccount' || o.kind === 'Deployment'),
    'monitored',
    'mon-',
  );
  const deployment = one<k8s.V1Deployment>(objs, 'Deployment');
  const podLabels = deployment.spec!.template.metadata!.labels!;
  const resizer = deployment.spec!.template.spec!.containers.find((c) => c.name === 'csi-resizer')!;
  const config = parseConfig((resizer.args ?? []).map((a) => a.replace('$(ADDRESS)', '/csi.sock')));
  const matches = (selector: Record<string, string>) => Object.entries(selector).every(([k, v]) => podLabels[k] === v);

  const podMonitor = one<{ spec: { selector: { matchLabels: Record<string, string> }; podMetricsEndpoints: Array<{ port: string; path: string }> } }>(
    objs,
    'PodMonitor',
  );
  assert.ok(matches(podMonitor.spec.selector.matchLabels), 'the PodMonitor selects the resizer pods');
  assert.ok(resizer.ports?.some((p) => p.name === podMonitor.spec.podMetricsEndpoints[0]!.port));
  assert.equal(podMonitor.spec.podMetricsEndpoints[0]!.path, config.metricsPath);

  const service = one<k8s.V1Service>(objs, 'Service');
  assert.ok(matches(service.spec!.selector!), 'the metrics Service selects the resizer pods');
  assert.ok(resizer.ports?.some((p) => p.name === service.spec!.ports![0]!.targetPort));
  const serviceMonitor = one<{ spec: { selector: { matchLabels: Record<string, string> }; endpoints: Array<{ port: string; path: string }> } }>(
    objs,
    'ServiceMonitor',
  );
  assert.ok(
    Object.entries(serviceMonitor.spec.selector.matchLabels).every(([k, v]) => service.metadata?.labels?.[k] === v),
    'the ServiceMonitor selects the Service',
  );
  assert.equal(serviceMonitor.spec.endpoints[0]!.port, service.spec!.ports![0]!.name);
  assert.equal(serviceMonitor.spec.endpoints[0]!.path, config.metricsPath);

  const dashboard = one<k8s.V1ConfigMap>(objs, 'ConfigMap');
  assert.equal(dashboard.metadata?.labels?.['grafana_dashboard'], '1');
  assert.deepEqual(
    JSON.parse(dashboard.data!['csi-resizer.json']!),
    JSON.parse(readFileSync(join(deploy, 'monitoring', 'dashboard', 'csi-resizer.json'), 'utf8')),
  );
  assert.equal(one<Obj>(objs, 'PrometheusRule').metadata?.namespace, 'monitored');
});

async function ensureNamespace(admin: KubeClients, name: string): Promise<void> {
  try {
    await admin.core.createNamespace({ body: { metadata: { name } } });
  } catch (err) {
    if (statusOf(err) !== 409) throw err;
  }
}

async function apply(admin: KubeClients, objs: Obj[], dryRun: boolean): Promise<void> {
  const api = k8s.KubernetesObjectApi.makeApiClient(admin.kc);
  for (const o of objs) {
    const applied = await api.patch(o, undefined, dryRun ? 'All' : undefined, 'csi-resizer-kit-test', true, k8s.PatchStrategy.ServerSideApply);
    assert.equal(applied.metadata?.name, o.metadata?.name);
  }
}

test('the rendered overlays apply to the API server (server-side apply, dry run)', async (t) => {
  const admin = adminClients(await useCluster());
  await ensureNamespace(admin, 'example-csi');
  t.after(() => admin.core.deleteNamespace({ name: 'example-csi' }).catch(() => undefined));
  for (const name of ['example', 'example-with-secrets']) {
    const objs = await build(join(deploy, 'kustomize', 'overlays', name));
    await apply(admin, objs, true);
  }
  // Nothing was written.
  await assert.rejects(admin.rbac.readClusterRole({ name: 'example-external-resizer-runner' }), (err) => statusOf(err) === 404);
});

test('applied for real: the ServiceAccount may do what the resizer does and no more; secrets only with the component', { timeout: 120_000 }, async (t) => {
  const admin = adminClients(await useCluster());
  const namespace = uniqueName('rz-kit');
  const prefix = `${namespace}-`;
  const variant = (components: string[]) => overlay(t, [`namespace: ${namespace}`, `namePrefix: ${prefix}`], components);
  await ensureNamespace(admin, namespace);
  const base = (await build(variant([]))).filter((o) => o.kind !== 'Deployment');
  t.after(async () => {
    for (const name of [`${prefix}external-resizer-runner`, `${prefix}external-resizer-secrets`])
      await admin.rbac.deleteClusterRole({ name }).catch(() => undefined);
    for (const name of [`${prefix}csi-resizer-role`, `${prefix}csi-resizer-secrets`])
      await admin.rbac.deleteClusterRoleBinding({ name }).catch(() => undefined);
    await admin.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  });
  await apply(admin, base, false);

  const user = `system:serviceaccount:${namespace}:${prefix}csi-resizer`;
  const allowed = async (a: k8s.V1ResourceAttributes) =>
    (await admin.authz.createSubjectAccessReview({ body: { spec: { user, resourceAttributes: a } } })).status?.allowed === true;
  // The RBAC authorizer reads bindings from an informer: wait (bounded) until the new ones show.
  const settlesTo = (a: k8s.V1ResourceAttributes, want: boolean) =>
    eventually(`${JSON.stringify(a)}: allowed=${want}`, async () => (await allowed(a)) === want, 20_000);

  const needs: PermissionNeeds = { pods: true, volumeAttributesClasses: true, leaseNamespace: namespace };
  for (const p of requiredPermissions(needs)) {
    await settlesTo({ verb: p.verb, group: p.group, resource: p.resource, subresource: p.subresource, namespace: p.namespace }, true);
  }
  for (const denied of [
    { verb: 'get', resource: 'secrets', namespace },
    { verb: 'get', resource: 'secrets', namespace: 'default' },
    { verb: 'update', resource: 'persistentvolumeclaims', namespace },
    { verb: 'delete', resource: 'persistentvolumes' },
    { verb: 'create', group: 'coordination.k8s.io', resource: 'leases', namespace: 'default' },
    { verb: 'delete', group: 'coordination.k8s.io', resource: 'leases', namespace },
  ] satisfies k8s.V1ResourceAttributes[]) {
    assert.equal(await allowed(denied), false, JSON.stringify(denied));
  }

  const withSecrets = (await build(variant([join(deploy, 'kubernetes', 'secrets-access')]))).filter((o) => o.kind !== 'Deployment');
  await apply(admin, withSecrets, false);
  await settlesTo({ verb: 'get', resource: 'secrets', namespace: 'default' }, true);
  await settlesTo({ verb: 'get', resource: 'secrets', namespace }, true);
  assert.equal(await allowed({ verb: 'list', resource: 'secrets', namespace }), false, 'get only, never list');
});
