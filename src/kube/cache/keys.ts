// Cache keys: "namespace/name" for namespaced objects, "name" for cluster-scoped ones, as client-go's
// MetaNamespaceKeyFunc.
import type { KubeObject } from '../../model/objects.js';

export function objectKey(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new Error('object has no metadata.name');
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}
