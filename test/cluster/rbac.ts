// Applies deploy/kubernetes/rbac.yaml (and, when asked, the opt-in secrets access) to a test
// cluster. Each binding keeps the manifest's ServiceAccount subject and gains one more, the
// static-token test user "csi-resizer", so the resizer kubeconfig is granted exactly what the
// manifests grant and nothing else. `identityWithRunnerRole` makes another identity, bound to the
// manifest's ClusterRole with rules left out, for tests of a resizer deployed with less.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { repoRoot } from './components.js';
import { retryWhileStarting, statusOf, type KubeClients } from './kube.js';
import { uniqueName } from './fixtures.js';
import { eventually } from '../support/eventually.js';
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

/** The rules of the manifest's ClusterRole (external-resizer-runner). */
export function runnerRules(manifestPath = rbacManifestPath): k8s.V1PolicyRule[] {
  const docs = k8s.loadAllYaml(readFileSync(manifestPath, 'utf8')).filter(Boolean) as k8s.KubernetesObject[];
  const role = docs.find((d) => d.kind === 'ClusterRole') as k8s.V1ClusterRole | undefined;
  if (!role?.rules) throw new Error(`no ClusterRole with rules in ${manifestPath}`);
  return role.rules;
}

export interface ReducedIdentity {
  /** A kubeconfig authenticating as the ServiceAccount (the cluster's server and CA). */
  readonly kubeconfigPath: string;
  /** system:serviceaccount:<namespace>:<name> */
  readonly username: string;
  /** Its ClusterRole, bound to it alone. */
  readonly clusterRole: string;
  /** Replaces the ClusterRole's rules (an operator's `kubectl apply` of a fixed role). */
  setRules(rules: k8s.V1PolicyRule[]): Promise<void>;
  /** Waits until the authorizer answers `allowed` for this verb on this resource, cluster-wide. */
  untilAllowed(verb: string, group: string, resource: string, allowed?: boolean): Promise<void>;
}

/**
 * A ServiceAccount in `namespace` with a fresh token and a ClusterRole of its own holding `rules`
 * (by default the manifest's, the caller drops some), bound to it; resolves once the authorizer
 * grants it `list persistentvolumeclaims`. The role and binding are deleted by `after`.
 */
export async function identityWithRunnerRole(
  admin: KubeClients,
  options: { namespace: string; resizerKubeconfigPath: string; rules: k8s.V1PolicyRule[]; after: (fn: () => Promise<void>) => void },
): Promise<ReducedIdentity> {
  const { namespace } = options;
  const name = uniqueName('rz-reduced');
  await admin.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const token = await admin.core.createNamespacedServiceAccountToken({ namespace, name, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
  const kubeconfig = JSON.parse(readFileSync(options.resizerKubeconfigPath, 'utf8')) as { users: { user: Record<string, string> }[] };
  kubeconfig.users[0]!.user = { token: token.status!.token };
  const kubeconfigPath = join(mkdtempSync(join(tmpdir(), 'rz-reduced-')), 'kubeconfig');
  writeFileSync(kubeconfigPath, JSON.stringify(kubeconfig), { mode: 0o600 });

  await admin.rbac.createClusterRole({ body: { metadata: { name }, rules: options.rules } });
  options.after(async () => {
    await admin.rbac.deleteClusterRoleBinding({ name }).catch(() => undefined);
    await admin.rbac.deleteClusterRole({ name }).catch(() => undefined);
  });
  await admin.rbac.createClusterRoleBinding({
    body: {
      metadata: { name },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    },
  });
  const username = `system:serviceaccount:${namespace}:${name}`;
  const untilAllowed = async (verb: string, group: string, resource: string, allowed = true): Promise<void> => {
    await eventually(`${username} ${allowed ? 'allowed' : 'refused'} ${verb} ${resource}`, async () => {
      const review = await admin.authz.createSubjectAccessReview({
        body: {
          spec: { user: username, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`], resourceAttributes: { verb, group, resource } },
        },
      });
      return (review.status?.allowed === true) === allowed;
    });
  };
  await untilAllowed('list', '', 'persistentvolumeclaims');
  return {
    kubeconfigPath,
    username,
    clusterRole: name,
    setRules: async (rules) => {
      await admin.rbac.replaceClusterRole({ name, body: { metadata: { name }, rules } });
    },
    untilAllowed,
  };
}
