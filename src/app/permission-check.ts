// A startup check for the most common support question upstream has no answer to: a resizer
// without the RBAC it needs (no pods list, no pvc/status patch, no lease access...) never resizes
// anything and says nothing. We ask the API server (SelfSubjectAccessReview) for each permission
// this configuration uses and log every missing one as an error naming the rule to add.
// The check never stops startup: a server that refuses the review itself is logged and ignored.
import type { AccessAttributes, KubeClient } from '../kube/client.js';
import type { Logger } from '../observability/logger.js';

export interface PermissionNeeds {
  /** Pods are watched for --handle-volume-inuse-error. */
  pods: boolean;
  /** The modify controller runs. */
  volumeAttributesClasses: boolean;
  /** The namespace of the Lease, with --leader-election. */
  leaseNamespace: string | undefined;
  /** --node-deployment: the replica reads its own Node's labels once at startup. */
  node?: boolean;
}

export function requiredPermissions(needs: PermissionNeeds): AccessAttributes[] {
  const list: AccessAttributes[] = [];
  for (const verb of ['list', 'watch']) {
    list.push({ verb, group: '', resource: 'persistentvolumeclaims' }, { verb, group: '', resource: 'persistentvolumes' });
    if (needs.pods) list.push({ verb, group: '', resource: 'pods' });
    if (needs.volumeAttributesClasses) list.push({ verb, group: 'storage.k8s.io', resource: 'volumeattributesclasses' });
  }
  list.push(
    { verb: 'patch', group: '', resource: 'persistentvolumeclaims', subresource: 'status' },
    { verb: 'patch', group: '', resource: 'persistentvolumes' },
    { verb: 'create', group: '', resource: 'events' },
    { verb: 'patch', group: '', resource: 'events' },
  );
  if (needs.node) list.push({ verb: 'get', group: '', resource: 'nodes' });
  if (needs.leaseNamespace !== undefined) {
    for (const verb of ['get', 'create', 'update']) {
      list.push({ verb, group: 'coordination.k8s.io', resource: 'leases', namespace: needs.leaseNamespace });
    }
  }
  return list;
}

export function describePermission(a: AccessAttributes): string {
  const resource = `${a.resource}${a.subresource ? `/${a.subresource}` : ''}`;
  const group = a.group === '' ? 'core' : a.group;
  return `${a.verb} ${resource} (apiGroup ${group}${a.namespace ? `, namespace ${a.namespace}` : ', cluster-wide'})`;
}

/** Returns the missing permissions (also logged); [] when all are granted or the check could not run. */
export async function checkPermissions(
  client: Pick<KubeClient, 'canI'>,
  needs: PermissionNeeds,
  log: Logger,
  signal: AbortSignal,
): Promise<AccessAttributes[]> {
  const missing: AccessAttributes[] = [];
  try {
    for (const attributes of requiredPermissions(needs)) {
      if (!(await client.canI(attributes, signal)).allowed) missing.push(attributes);
    }
  } catch (err) {
    log.warn('Could not check RBAC permissions', { err });
    return [];
  }
  for (const attributes of missing) {
    log.error('Missing RBAC permission: resizes will not happen until it is granted (see deploy/kubernetes/rbac.yaml)', {
      permission: describePermission(attributes),
    });
  }
  if (missing.length === 0) log.v(2).info('RBAC permissions checked', { granted: requiredPermissions(needs).length });
  return missing;
}
