// The ports both controllers use to read and write PVCs and PVs: the two patch calls typed with
// the model's shapes, and the cache view a reconcile reads from and writes patched objects back to.
import { messageOf } from '../base/errors.js';
import type { Pv, Pvc } from '../model/objects.js';
import type { KubeClient } from './client.js';

export interface VolumeApi {
  /** Strategic-merge patch of the PVC's status subresource; returns what the server stored. */
  patchPvcStatus(namespace: string, name: string, patch: Record<string, unknown>, signal: AbortSignal): Promise<Pvc>;
  /** Strategic-merge patch of the PV; returns what the server stored. */
  patchPv(name: string, patch: Record<string, unknown>, signal: AbortSignal): Promise<Pv>;
}

/** An informer store as a reconcile sees it. */
export interface ObjectCache<T> {
  get(key: string): T | undefined;
  /** Puts an object a PATCH returned into the cache when it is newer than the cached copy. */
  writeBack(obj: T): boolean;
}

/**
 * Patches a PVC's status and writes the stored object back into the cache, so the next read sees
 * our write. A failure reads as upstream's PatchClaim words it (the two spaces are upstream's):
 * `can't patch status of  PVC <ns>/<name> with <API error>`.
 */
export async function patchPvcStatusCached(
  api: VolumeApi,
  cache: ObjectCache<Pvc>,
  pvc: Pvc,
  patch: Record<string, unknown>,
  signal: AbortSignal,
): Promise<Pvc> {
  const namespace = pvc.metadata.namespace ?? '';
  let updated: Pvc;
  try {
    updated = await api.patchPvcStatus(namespace, pvc.metadata.name, patch, signal);
  } catch (err) {
    throw new Error(`can't patch status of  PVC ${namespace}/${pvc.metadata.name} with ${messageOf(err)}`, { cause: err });
  }
  cache.writeBack(updated);
  return updated;
}

/**
 * Patches a PV and writes the stored object back into the cache. A failure reads as upstream's
 * PV patch helper words it, for every PV write (the class too): `update capacity of PV <name>
 * failed: <API error>`.
 */
export async function patchPvCached(
  api: VolumeApi,
  cache: ObjectCache<Pv>,
  name: string,
  patch: Record<string, unknown>,
  signal: AbortSignal,
): Promise<Pv> {
  let updated: Pv;
  try {
    updated = await api.patchPv(name, patch, signal);
  } catch (err) {
    throw new Error(`update capacity of PV ${name} failed: ${messageOf(err)}`, { cause: err });
  }
  cache.writeBack(updated);
  return updated;
}

/** Preconditions travel inside the patch bodies (metadata.resourceVersion), so no options here. */
export function volumeApi(client: Pick<KubeClient, 'patchPvcStatus' | 'patchPv'>): VolumeApi {
  return {
    patchPvcStatus: async (namespace, name, patch, signal) => (await client.patchPvcStatus(namespace, name, patch, {}, signal)) as Pvc,
    patchPv: async (name, patch, signal) => (await client.patchPv(name, patch, {}, signal)) as Pv,
  };
}
