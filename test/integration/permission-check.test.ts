// The startup RBAC check against the real API server: the manifest's identity has everything;
// an identity without the rules gets one line per missing rule, naming it and what stops without it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig } from '../cluster/kube.js';
import { createNamespace, kubeconfigWithoutRules } from '../cluster/fixtures.js';
import { HttpKubeClient } from '../../src/kube/wire/http-client.js';
import { loadKubeConfig } from '../../src/kube/wire/kubeconfig.js';
import { checkPermissions } from '../../src/app/permission-check.js';
import { requiredRules } from '../../src/kube/api/required-permissions.js';
import { createLogger } from '../../src/observability/log/logger.js';

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

test('an identity without the rules: one line per missing rule, naming it and what stops; an error where resizes stop', async (t) => {
  const namespace = await createNamespace(admin, 'rz-rbac');
  const path = await kubeconfigWithoutRules(admin, cluster.resizerKubeconfigPath, namespace, 'rz-rbac-');
  const client = await clientFor(path);
  t.after(() => client.close());

  const lines: string[] = [];
  const missing = await checkPermissions(client, needs, createLogger({ verbosity: 0, format: 'text', write: (l) => lines.push(l) }), never);
  assert.equal(missing.length, requiredRules(needs).length);
  assert.equal(lines.length, missing.length);
  assert.ok(lines.every((l) => l.includes('Missing RBAC permission')));
  const line = (permission: string) => lines.find((l) => l.endsWith(` permission="${permission}"`));
  assert.match(
    line('persistentvolumeclaims/status patch') ?? '',
    /^E.*"Missing RBAC permission: neither resizes nor modifications will happen until it is granted"/,
  );
  assert.match(line('pods list,watch') ?? '', /^E.*"Missing RBAC permission: resizes will not happen until it is granted"/);
  assert.match(
    line('volumeattributesclasses.storage.k8s.io list,watch') ?? '',
    /^W.*"Missing RBAC permission: modify is off until it is granted \(resizes are not affected\)"/,
  );
  assert.match(line('events create,patch') ?? '', /^W.*"Missing RBAC permission: no events are recorded/);
  assert.match(line('leases.coordination.k8s.io get,create,update in namespace default') ?? '', /^E.*this replica cannot lead/);
});
