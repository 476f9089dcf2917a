// Informer callbacks to keys (§4.2). Handlers only decide whether a change is worth a reconcile;
// the reconcile reads the stores again and decides what to do.
import type { InformerHandlers } from '../kube/cache/informer.js';
import type { Pv, Pvc, VolumeAttributesClass } from '../model/objects.js';
import { pvcKey } from '../model/pvc.js';
import { goQuote } from '../base/go-quote.js';
import { kObj, type Logger } from '../observability/log/logger.js';
import type { RateLimitingQueue } from '../queue/rate-limiters.js';

type KeyQueue = Pick<RateLimitingQueue<string>, 'add' | 'forget'>;

export interface PvcHandlerOptions {
  queue: KeyQueue;
  /** The PV cache: an update whose PV is not cached yet is dropped, as upstream does. */
  pvs: { get(name: string): Pv | undefined };
  /** Drops the reconciler's memory of a deleted PVC. */
  forget(key: string): void;
  log: Logger;
}

/** The PVC informer's handlers: every add, the updates worth a modify, and deletes (which forget the key). */
export function pvcHandlers(o: PvcHandlerOptions): InformerHandlers<Pvc> {
  const { queue, pvs, log } = o;
  return {
    add: (pvc) => queue.add(pvcKey(pvc)),
    update: (before, after) => {
      if (!pvcUpdateWorthModifying(before, after, () => true)) {
        log.v(4).info('No need to modify PVC', { PVC: kObj(after) });
        return;
      }
      const pvName = before.spec.volumeName ?? '';
      if (pvs.get(pvName) === undefined) {
        log.errorf(
          `Get PV ${goQuote(pvName)} of pvc ${goQuote(kObj(before).toString())} in PVInformer cache failed: persistentvolume ${goQuote(pvName)} not found`,
        );
        return;
      }
      log.v(4).info('Enqueueing PVC for modify', { PVC: kObj(after) });
      queue.add(pvcKey(after));
    },
    delete: (pvc) => {
      queue.forget(pvcKey(pvc));
      o.forget(pvcKey(pvc));
    },
  };
}

/**
 * The VolumeAttributesClass informer's handlers (ours): a PVC left Pending because its class did
 * not exist yet is retried as soon as the class is created, without the user touching the PVC
 * again. Creating a class is rare, so scanning the PVC cache is cheaper than keeping an index.
 */
export function classHandlers(o: { queue: KeyQueue; pvcs: { list(): Iterable<Pvc> } }): InformerHandlers<VolumeAttributesClass> {
  return {
    add: (vac) => {
      for (const key of pvcsWaitingForClass(vac, o.pvcs.list())) o.queue.add(key);
    },
  };
}

/**
 * The PVC update filter: the class changed or the modify status is gone, the PVC is bound, and
 * the PV named by the old PVC is in the cache. A PVC with a modify status (Pending, InProgress,
 * Infeasible) is not re-enqueued by resync; it comes back through the queue's backoff, a class
 * change, a restart, or (ours) the creation of the class it waits for.
 */
export function pvcUpdateWorthModifying(before: Pvc, after: Pvc, pvExists: (name: string) => boolean): boolean {
  const classChanged = (before.spec.volumeAttributesClassName ?? null) !== (after.spec.volumeAttributesClassName ?? null);
  if (!classChanged && after.status?.modifyVolumeStatus) return false;
  if (after.status?.phase !== 'Bound') return false;
  const pvName = before.spec.volumeName;
  return !!pvName && pvExists(pvName);
}

/**
 * Better than upstream: the keys of PVCs a newly created class unblocks. Upstream registers no
 * VolumeAttributesClass handler, so a PVC that asked for a class before it existed stays Pending
 * until the user edits it again. Only PVCs that name the class and are not already settled on it
 * (some modify status, or a current class that differs) are returned, so the add calls of the
 * initial list don't enqueue every PVC that already has its class.
 */
export function pvcsWaitingForClass(vac: VolumeAttributesClass, pvcs: Iterable<Pvc>): string[] {
  const name = vac.metadata.name;
  const keys: string[] = [];
  for (const pvc of pvcs) {
    if (pvc.spec.volumeAttributesClassName !== name) continue;
    const settled = !pvc.status?.modifyVolumeStatus && (pvc.status?.currentVolumeAttributesClassName ?? '') === name;
    if (!settled) keys.push(pvcKey(pvc));
  }
  return keys;
}
