// The ports both controllers use to read and write PVCs and PVs: the two patch calls typed with
// the model's shapes, the cache view a reconcile reads from and writes patched objects back to,
// and the start both reconciles share (the PVC, then its PV, from the caches).
import { messageOf } from '../../base/errors.js';
import type { Pv, Pvc } from '../../model/objects.js';
import { kKey, kObj, type Logger } from '../../observability/log/logger.js';
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

export interface ReconcileStartOptions {
  pvcs: ObjectCache<Pvc>;
  pvs: ObjectCache<Pv>;
  log: Logger;
  /** The controller's error for a PV missing from the cache (upstream's two controllers word it differently). */
  pvNotFound(pvName: string): Error;
}

/**
 * The start both controllers' reconciles share (§3.3 steps 1-3, §4.3): the PVC from the cache,
 * then the PV it is bound to. Undefined when there is nothing to do, the PVC gone or bound to no
 * volume yet (each logged as upstream's controllers log it). A PV missing from the cache throws
 * the controller's error: retried with backoff, since the PV informer may not have caught up.
 */
export function readClaimAndVolume(key: string, options: ReconcileStartOptions): { pvc: Pvc; pv: Pv } | undefined {
  const { log } = options;
  const pvc = options.pvcs.get(key);
  if (!pvc) {
    log.v(3).info('PVC is deleted or does not exist', { PVC: kKey(key) });
    return undefined;
  }
  const pvName = pvc.spec.volumeName;
  if (!pvName) {
    log.v(4).info('PV bound to PVC is not created yet', { PVC: kObj(pvc) });
    return undefined;
  }
  const pv = options.pvs.get(pvName);
  if (!pv) throw options.pvNotFound(pvName);
  return { pvc, pv };
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
export async function patchPvCached(api: VolumeApi, cache: ObjectCache<Pv>, name: string, patch: Record<string, unknown>, signal: AbortSignal): Promise<Pv> {
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
