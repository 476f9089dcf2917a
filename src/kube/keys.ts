// Cache keys: "namespace/name" for namespaced objects, "name" for cluster-scoped ones, as client-go's
// MetaNamespaceKeyFunc. Delete notifications may carry a tombstone (an object we only knew under a
// key); unwrapTombstone returns the object inside.

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [field: string]: unknown;
}

/** A Kubernetes object as the API server sent it: plain JSON, never a typed model. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

export function objectKey(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new Error('object has no metadata.name');
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}

export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const parts = key.split('/');
  if (parts.length === 1 && parts[0]) return { namespace: undefined, name: parts[0] };
  if (parts.length === 2 && parts[0] && parts[1]) return { namespace: parts[0], name: parts[1] };
  throw new Error(`unexpected key format: ${JSON.stringify(key)}`);
}

/** The final state we knew of an object whose deletion we learned about only by relisting. */
export interface Tombstone<T extends KubeObject = KubeObject> {
  readonly tombstone: true;
  readonly key: string;
  readonly obj: T;
}

export function isTombstone(value: unknown): value is Tombstone {
  return typeof value === 'object' && value !== null && (value as { tombstone?: unknown }).tombstone === true;
}

export function unwrapTombstone<T extends KubeObject>(value: T | Tombstone<T>): T {
  return isTombstone(value) ? (value.obj as T) : value;
}
