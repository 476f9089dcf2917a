// Cache keys: "namespace/name" for namespaced objects, "name" for cluster-scoped ones, as client-go's
// MetaNamespaceKeyFunc.
import type { KubeObject } from '../../model/objects.js';

export function objectKey(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new Error('object has no metadata.name');
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}

/** The key of an object that may be malformed (fuzzed or hand-written JSON); undefined when it has none. */
export function safeKey(obj: KubeObject): string | undefined {
  try {
    const meta = obj.metadata;
    if (typeof meta?.name !== 'string' || (meta.namespace !== undefined && typeof meta.namespace !== 'string')) return undefined;
    return objectKey(obj);
  } catch {
    return undefined;
  }
}
