// The RBAC permissions a configuration of the resizer uses: one entry per kind of call the
// controllers, the informers, the event recorder and the elector make through client.ts. The
// startup RBAC check, `doctor` and the manifest tests all read this one list. Pure.
import type { AccessAttributes } from './client.js';

export interface PermissionNeeds {
  /** Pods are watched for --handle-volume-inuse-error. */
  pods: boolean;
  /** The modify controller runs. */
  volumeAttributesClasses: boolean;
  /** The namespace of the Lease, with --leader-election. */
  leaseNamespace: string | undefined;
  /** --node-deployment: the replica reads its own Node's labels once at startup. */
  node?: boolean;
  /**
   * --auto-grow (deploy/kubernetes/auto-grow): the PVC patch and the StorageClass cache; with the
   * kubelet usage source also the Nodes of the claims' pods and kubelet's nodes/stats.
   */
  autoGrow?: { readonly kubelets: boolean };
}

export function requiredPermissions(needs: PermissionNeeds): AccessAttributes[] {
  const list: AccessAttributes[] = [];
  for (const verb of ['list', 'watch']) {
    list.push({ verb, group: '', resource: 'persistentvolumeclaims' }, { verb, group: '', resource: 'persistentvolumes' });
    if (needs.pods) list.push({ verb, group: '', resource: 'pods' });
    if (needs.volumeAttributesClasses) list.push({ verb, group: 'storage.k8s.io', resource: 'volumeattributesclasses' });
    if (needs.autoGrow) list.push({ verb, group: 'storage.k8s.io', resource: 'storageclasses' });
  }
  list.push(
    { verb: 'patch', group: '', resource: 'persistentvolumeclaims', subresource: 'status' },
    { verb: 'patch', group: '', resource: 'persistentvolumes' },
    { verb: 'create', group: '', resource: 'events' },
    { verb: 'patch', group: '', resource: 'events' },
  );
  if (needs.autoGrow) list.push({ verb: 'patch', group: '', resource: 'persistentvolumeclaims' });
  if (needs.node || needs.autoGrow?.kubelets) list.push({ verb: 'get', group: '', resource: 'nodes' });
  if (needs.autoGrow?.kubelets) list.push({ verb: 'get', group: '', resource: 'nodes', subresource: 'stats' });
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
