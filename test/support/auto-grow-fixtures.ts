// What the auto-grow integration tests set up against the real API server: an identity bound to
// rbac.yaml's ClusterRole and the auto-grow component's rules (and nothing else), opted-in
// StorageClasses, Nodes that point at kubelet stand-ins, claims bound to a fault driver's volumes
// and the pods that mount them.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { ClusterHandle } from '../cluster/test-cluster.js';
import { patchAs, statusOf, type KubeClients } from '../cluster/kube.js';
import { provisionVolume, uniqueName } from '../cluster/fixtures.js';
import { repoRoot } from '../cluster/components.js';
import { asApiBody, pod, storageClass } from './builders.js';
import { eventually } from './eventually.js';
import type { FaultDriver } from '../fakes/fault-driver.js';

export const GiB = 1n << 30n;

/** The ClusterRole of deploy/kubernetes/auto-grow, as an operator applies it. */
export function autoGrowRules(): k8s.V1PolicyRule[] {
  const docs = k8s.loadAllYaml(readFileSync(join(repoRoot, 'deploy', 'kubernetes', 'auto-grow', 'rbac-auto-grow.yaml'), 'utf8')) as k8s.KubernetesObject[];
  return (docs.find((d) => d.kind === 'ClusterRole') as k8s.V1ClusterRole).rules!;
}

/**
 * A ServiceAccount with rbac.yaml's ClusterRole (external-resizer-runner) and, unless `autoGrow` is
 * false, the auto-grow component's rules; a kubeconfig that authenticates as it. Returns once the
 * authorizer grants it nodes/stats (or pods list, without auto-grow).
 */
export async function resizerIdentity(
  admin: KubeClients,
  cluster: ClusterHandle,
  o: { namespace: string; dir: string; autoGrow?: boolean },
): Promise<{ kubeconfig: string; username: string }> {
  const name = uniqueName('ag-resizer');
  await admin.core.createNamespacedServiceAccount({ namespace: o.namespace, body: { metadata: { name } } });
  const token = await admin.core.createNamespacedServiceAccountToken({
    namespace: o.namespace,
    name,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const subject = { kind: 'ServiceAccount', name, namespace: o.namespace };
  const bind = async (role: string) =>
    admin.rbac.createClusterRoleBinding({
      body: {
        metadata: { name: uniqueName('ag-binding') },
        subjects: [subject],
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      },
    });
  await bind('external-resizer-runner');
  if (o.autoGrow !== false) {
    const role = uniqueName('ag-role');
    await admin.rbac.createClusterRole({ body: { metadata: { name: role }, rules: autoGrowRules() } });
    await bind(role);
  }
  const username = `system:serviceaccount:${o.namespace}:${name}`;
  const allowed = async (resourceAttributes: k8s.V1ResourceAttributes) =>
    (await admin.authz.createSubjectAccessReview({ body: { spec: { user: username, groups: [], resourceAttributes } } })).status?.allowed === true;
  await eventually(
    `${username} authorized`,
    async () =>
      (await allowed({ verb: 'watch', resource: 'pods', version: 'v1' })) &&
      (o.autoGrow === false || (await allowed({ verb: 'get', resource: 'nodes', subresource: 'stats', name: 'any', version: 'v1' }))),
  );
  const kubeconfig = JSON.parse(readFileSync(cluster.resizerKubeconfigPath, 'utf8')) as { users: { user: Record<string, string> }[] };
  kubeconfig.users[0]!.user = { token: token.status!.token! };
  const path = join(o.dir, `${name}.kubeconfig`);
  writeFileSync(path, JSON.stringify(kubeconfig), { mode: 0o600 });
  return { kubeconfig: path, username };
}

/** A StorageClass of the driver, opted in to auto-grow (resize.topolvm.io/enabled: "true"). */
export async function optedInClass(admin: KubeClients, driverName: string): Promise<string> {
  const name = uniqueName('ag-sc');
  await admin.storage.createStorageClass({
    body: asApiBody<k8s.V1StorageClass>(
      storageClass({ name, provisioner: driverName, allowVolumeExpansion: true, annotations: { 'resize.topolvm.io/enabled': 'true' } }),
    ),
  });
  return name;
}

/** A Node whose kubelet answers at 127.0.0.1:port (InternalIP), as a kubelet registers it. */
export async function nodeAt(admin: KubeClients, name: string, port: number): Promise<void> {
  await admin.core.createNode({ body: { metadata: { name, labels: { 'kubernetes.io/hostname': name } } } });
  await admin.core.patchNodeStatus(
    {
      name,
      body: { status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: port } } } },
    },
    patchAs(),
  );
}

export async function deleteNode(admin: KubeClients, name: string): Promise<void> {
  await admin.core.deleteNode({ name }).catch(() => undefined);
}

/** A bound claim of `size` on a new volume of the fault driver, with these annotations. */
export async function optedInClaim(
  admin: KubeClients,
  driver: FaultDriver,
  o: { namespace: string; storageClassName: string; driverName: string; size?: string; bytes?: bigint; annotations: Record<string, string> },
): Promise<{ pvc: string; pv: string }> {
  const id = uniqueName('ag-vol');
  driver.createVolume(id, o.bytes ?? 10n * GiB);
  const v = await provisionVolume(admin, driver.address, {
    namespace: o.namespace,
    size: o.size ?? '10Gi',
    storageClassName: o.storageClassName,
    driverName: o.driverName,
    existingVolumeId: id,
    pvcAnnotations: o.annotations,
  });
  return { pvc: v.pvc.metadata!.name!, pv: v.pv.metadata!.name! };
}

/** A pod on `node` that mounts the claim (no scheduler in the test cluster: spec.nodeName is set). */
export async function mountingPod(admin: KubeClients, namespace: string, claim: string, node: string): Promise<string> {
  const name = uniqueName('ag-pod');
  await admin.core.createNamespacedPod({ namespace, body: asApiBody<k8s.V1Pod>(pod({ name, namespace, claims: [claim], nodeName: node })) });
  return name;
}

/**
 * Waits until the API server's resize admission sees the class (its StorageClass cache lags a new
 * class): a server-side dry run of a bigger request is admitted.
 */
export async function admissionReady(admin: KubeClients, namespace: string, claim: string, bigger = '11Gi'): Promise<void> {
  await eventually(`the resize admission of ${namespace}/${claim} sees its class`, async () => {
    try {
      await admin.core.patchNamespacedPersistentVolumeClaim(
        { namespace, name: claim, dryRun: 'All', body: { spec: { resources: { requests: { storage: bigger } } } } },
        patchAs(),
      );
      return true;
    } catch (err) {
      if (statusOf(err) === 403) return false;
      throw err;
    }
  });
}
