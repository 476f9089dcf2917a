// Informer callbacks to queue keys (§3.2). Handlers only decide whether a change is worth a
// reconcile; the reconcile reads the store again and decides what to do.
import type { InformerHandlers } from '../kube/cache/informer.js';
import { Annotation } from '../model/names.js';
import type { Pvc } from '../model/objects.js';
import { capacityBytes, pvcKey, requestedBytes, resizeStatus } from '../model/pvc.js';
import type { RateLimitingQueue } from '../queue/rate-limiters.js';
import type { ClaimUsage, PodClaimUsage } from './in-use.js';

export interface PvcHandlerOptions {
  queue: Pick<RateLimitingQueue<string>, 'add' | 'forget'>;
  /** Drops the reconciler's memory of a deleted PVC. */
  forget(key: string, uid: string | undefined): void;
}

/** The PVC informer's handlers: every add, the updates worth a reconcile, and deletes (which forget the key). */
export function pvcHandlers(o: PvcHandlerOptions): InformerHandlers<Pvc> {
  return {
    add: (pvc) => o.queue.add(pvcKey(pvc)),
    update: (before, after) => {
      if (pvcUpdateWorthReconciling(before, after)) o.queue.add(pvcKey(after));
    },
    delete: (pvc) => {
      o.queue.forget(pvcKey(pvc));
      o.forget(pvcKey(pvc), pvc.metadata.uid);
    },
  };
}

/** The Pod informer's handlers (--handle-volume-inuse-error): they keep claim usage and enqueue nothing. */
export function podHandlers(usage: ClaimUsage): InformerHandlers<PodClaimUsage> {
  return {
    add: (pod) => usage.add(pod),
    // Remove first: the same pod key stays recorded when before and after share a claim.
    update: (before, after) => {
      usage.remove(before);
      usage.add(after);
    },
    delete: (pod) => usage.remove(pod),
  };
}

/**
 * The PVC update filter (upstream v2.3.0's updatePVC): a size request changed in either direction
 * (a smaller one recovers from a failed expansion), the resizer annotation, a resync, capacity
 * growth, or a changed resize status in allocatedResourceStatuses.
 */
export function pvcUpdateWorthReconciling(before: Pvc, after: Pvc): boolean {
  const requestChanged = orMinusOne(() => requestedBytes(after)) !== orMinusOne(() => requestedBytes(before));
  // An absent annotation reads as "", as a Go map lookup does.
  const resizerOf = (pvc: Pvc) => pvc.metadata.annotations?.[Annotation.StorageResizer] ?? '';
  const annotationChanged = resizerOf(before) !== resizerOf(after);
  if (requestChanged || annotationChanged) return true;
  // A periodic resync delivers the same object twice.
  if (before.metadata.resourceVersion === after.metadata.resourceVersion) return true;
  // Capacity grew: kubelet finished node expansion, so the pre-resize annotation can go.
  if (orMinusOne(() => capacityBytes(after)) > orMinusOne(() => capacityBytes(before))) return true;
  // The resize status changed, e.g. the node failed its part of the expansion.
  return resizeStatus(before) !== resizeStatus(after);
}

/** A bad quantity must not throw inside a handler: the reconcile reports it. */
function orMinusOne(read: () => bigint): bigint {
  try {
    return read();
  } catch {
    return -1n;
  }
}
