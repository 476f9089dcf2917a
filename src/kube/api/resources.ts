// The API resources the resizer touches, and URL paths for them.

export interface ResourceRef {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** Plural resource name, as in the URL. */
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

export const Resources = {
  persistentVolumeClaims: { group: '', version: 'v1', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', namespaced: true },
  persistentVolumes: { group: '', version: 'v1', resource: 'persistentvolumes', kind: 'PersistentVolume', namespaced: false },
  pods: { group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true },
  secrets: { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true },
  events: { group: '', version: 'v1', resource: 'events', kind: 'Event', namespaced: true },
  volumeAttributesClasses: { group: 'storage.k8s.io', version: 'v1', resource: 'volumeattributesclasses', kind: 'VolumeAttributesClass', namespaced: false },
  nodes: { group: '', version: 'v1', resource: 'nodes', kind: 'Node', namespaced: false },
  storageClasses: { group: 'storage.k8s.io', version: 'v1', resource: 'storageclasses', kind: 'StorageClass', namespaced: false },
  leases: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true },
} as const satisfies Record<string, ResourceRef>;

export function apiVersionOf(ref: ResourceRef): string {
  return ref.group === '' ? ref.version : `${ref.group}/${ref.version}`;
}

export function groupVersionPath(groupVersion: string): string {
  return groupVersion.includes('/') ? `/apis/${groupVersion}` : `/api/${groupVersion}`;
}

/**
 * /api/v1/namespaces/ns/persistentvolumeclaims/name/status. Without a namespace a namespaced
 * resource is addressed across all namespaces (list/watch).
 */
export function resourcePath(ref: ResourceRef, at: { namespace?: string; name?: string; subresource?: string } = {}): string {
  let path = groupVersionPath(apiVersionOf(ref));
  if (ref.namespaced && at.namespace) path += `/namespaces/${encodeURIComponent(at.namespace)}`;
  path += `/${ref.resource}`;
  if (at.name !== undefined) path += `/${encodeURIComponent(at.name)}`;
  if (at.subresource) path += `/${at.subresource}`;
  return path;
}
