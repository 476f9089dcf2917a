// The startup RBAC check against the real API server: the manifest's identity has everything;
// an identity without the rules gets one error per missing permission, naming it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig } from '../cluster/kube.js';
import { createNamespace } from '../cluster/fixtures.js';
import { HttpKubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/kubeconfig.js';
import { checkPermissions } from '../../src/app/permission-check.js';
import { requiredPermissions } from '../../src/kube/required-permissions.js';
import { createLogger } from '../../src/observability/logger.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);
const never = new AbortController().signal;
const needs = { pods: true, volumeAttributesClasses: true, leaseNamespace: 'default' };

async function clientFor(kubeconfigPath: string): Promise<HttpKubeClient> {
  return new HttpKubeClient({ kubeConfig: await loadKubeConfig({ kubeconfigPath }), qps: 100, burst: 100 });
}

test('the csi-resizer identity of deploy/kubernetes/rbac.yaml has every permission the resizer uses', async (t) => {
  const client = await clientFor(cluster.resizerKubeconfigPath);
  t.after(() => client.close());
  const lines: string[] = [];
  const missing = await checkPermissions(client, needs, createLogger({ verbosity: 0, format: 'text', write: (l) => lines.push(l) }), never);
  assert.deepEqual(missing, []);
  assert.deepEqual(lines, []);
});

test('an identity without the rules: one error per missing permission, naming it', async (t) => {
  const namespace = await createNamespace(admin, 'rz-rbac');
  await admin.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'no-rules' } } });
  const token = await admin.core.createNamespacedServiceAccountToken({
    namespace,
    name: 'no-rules',
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  const kubeconfig = JSON.parse(readFileSync(cluster.resizerKubeconfigPath, 'utf8')) as { users: { user: { token: string } }[] };
  kubeconfig.users[0]!.user.token = token.status!.token;
  const path = join(mkdtempSync(join(tmpdir(), 'rz-rbac-')), 'kubeconfig');
  writeFileSync(path, JSON.stringify(kubeconfig));
  const client = await clientFor(path);
  t.after(() => client.close());

  const lines: string[] = [];
  const missing = await checkPermissions(client, needs, createLogger({ verbosity: 0, format: 'text', write: (l) => lines.push(l) }), never);
  assert.equal(missing.length, requiredPermissions(needs).length);
  assert.equal(lines.length, missing.length);
  assert.ok(lines.some((l) => l.includes('patch persistentvolumeclaims/status (apiGroup core, cluster-wide)')));
  assert.ok(lines.every((l) => l.includes('Missing RBAC permission')));
});
