// Applies deploy/kubernetes/rbac.yaml (and, when asked, the opt-in secrets access) to a test
// cluster. Each binding keeps the manifest's ServiceAccount subject and gains one more, the
// static-token test user "csi-resizer", so the resizer kubeconfig is granted exactly what the
// manifests grant and nothing else.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { repoRoot } from './components.js';
import { retryWhileStarting, statusOf, type KubeClients } from './kube.js';
import { RESIZER_USER } from './pki.js';

export const rbacManifestPath = join(repoRoot, 'deploy', 'kubernetes', 'rbac.yaml');
/** The opt-in `get secrets` (rbac.yaml grants none); tests with controller-expand/modify secrets need it. */
export const secretsAccessManifestPath = join(repoRoot, 'deploy', 'kubernetes', 'secrets-access', 'rbac-secrets.yaml');

type Subject = { kind: string; name: string; namespace?: string; apiGroup?: string };

export function withTestUser(subjects: Subject[] | undefined): Subject[] {
  const out = [...(subjects ?? [])];
  if (!out.some((s) => s.kind === 'User' && s.name === RESIZER_USER)) {
    out.push({ kind: 'User', name: RESIZER_USER, apiGroup: 'rbac.authorization.k8s.io' });
  }
  return out;
}

export async function applyRbac(clients: KubeClients, manifestPath = rbacManifestPath): Promise<void> {
  const docs = k8s.loadAllYaml(readFileSync(manifestPath, 'utf8')).filter(Boolean) as k8s.KubernetesObject[];
  for (const doc of docs) {
    const ns = doc.metadata?.namespace ?? 'default';
    const name = `${doc.kind}/${doc.metadata?.name}`;
    await retryWhileStarting(`applying ${name} from ${manifestPath}`, async () => {
      try {
        switch (doc.kind) {
          case 'ServiceAccount':
            await clients.core.createNamespacedServiceAccount({ namespace: ns, body: doc as k8s.V1ServiceAccount });
            return;
          case 'ClusterRole':
            await clients.rbac.createClusterRole({ body: doc as k8s.V1ClusterRole });
            return;
          case 'Role':
            await clients.rbac.createNamespacedRole({ namespace: ns, body: doc as k8s.V1Role });
            return;
          case 'ClusterRoleBinding': {
            const b = doc as k8s.V1ClusterRoleBinding;
            await clients.rbac.createClusterRoleBinding({ body: { ...b, subjects: withTestUser(b.subjects) } });
            return;
          }
          case 'RoleBinding': {
            const b = doc as k8s.V1RoleBinding;
            await clients.rbac.createNamespacedRoleBinding({ namespace: ns, body: { ...b, subjects: withTestUser(b.subjects) } });
            return;
          }
          default:
            throw new Error(`unexpected kind ${doc.kind} in ${manifestPath}`);
        }
      } catch (err) {
        // A fresh cluster has none of these; a retry after a lost response may find its own write.
        if (statusOf(err) === 409) return;
        throw err;
      }
    });
  }
}
