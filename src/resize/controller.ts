// The resize controller as one Runnable (§3.1–§3.3): PVC (and, with --handle-volume-inuse-error,
// Pod) handlers feed a rate-limited queue, N workers reconcile keys. The informers are shared
// with the modify controller and run by the app; this waits for their first sync.
import type { Informer } from '../kube/informer.js';
import type { Logger } from '../observability/logger.js';
import type { Pv, Pvc } from '../model/objects.js';
import { pvcKey } from '../model/pvc.js';
import { pvcUpdateWorthReconciling } from './handlers.js';
import type { ClaimUsage, PodClaimUsage } from './in-use.js';
import type { ResizeReconciler } from './reconcile.js';
import type { RateLimitingQueue } from '../queue/rate-limiters.js';
import { runWorkers } from '../queue/workers.js';

export interface ResizeControllerOptions {
  pvcInformer: Informer<Pvc>;
  pvInformer: Informer<Pv>;
  /** Present with --handle-volume-inuse-error. */
  podInformer: Informer<PodClaimUsage> | undefined;
  claimUsage: ClaimUsage | undefined;
  queue: RateLimitingQueue<string>;
  reconciler: ResizeReconciler;
  workers: number;
  recoverVolumeExpansionFailure: boolean;
  /** The resizer's name (the driver name), as upstream's `controller` log key carries it. */
  controllerName: string;
  log: Logger;
}

export class ResizeController {
  readonly name = 'resize-controller';

  constructor(private readonly o: ResizeControllerOptions) {
    const { pvcInformer, podInformer, claimUsage, queue, reconciler } = o;
    pvcInformer.addEventHandler({
      add: (pvc) => queue.add(pvcKey(pvc)),
      update: (before, after) => {
        if (pvcUpdateWorthReconciling(before, after, o.recoverVolumeExpansionFailure)) queue.add(pvcKey(after));
      },
      delete: (pvc) => {
        queue.forget(pvcKey(pvc));
        reconciler.forget(pvcKey(pvc), pvc.metadata.uid);
      },
    });
    if (podInformer && claimUsage) {
      o.log.info('Register Pod informer for resizer', { controller: o.controllerName });
      podInformer.addEventHandler({
        add: (pod) => claimUsage.upsert(pod),
        update: (_before, after) => claimUsage.upsert(after),
        delete: (pod) => claimUsage.remove(pod),
      });
    }
  }

  /** Waits for the caches, then works until `signal` aborts and in-flight reconciles finish (or `cancelSignal` cuts them short). */
  async run(signal: AbortSignal, cancelSignal: AbortSignal = signal): Promise<void> {
    const { pvcInformer, pvInformer, podInformer, log, controllerName } = this.o;
    log.info('Starting external resizer', { controller: controllerName });
    try {
      try {
        await Promise.all([pvcInformer.waitForSync(signal), pvInformer.waitForSync(signal), podInformer?.waitForSync(signal)]);
      } catch (err) {
        if (!signal.aborted) throw err;
        log.error('Cannot sync pod, pv or pvc caches');
        return;
      }
      await runWorkers({
        queue: this.o.queue,
        workers: this.o.workers,
        reconcile: (key, workerSignal) => this.o.reconciler.reconcile(key, workerSignal),
        signal,
        cancelSignal,
        log,
      });
    } finally {
      log.info('Shutting down external resizer', { controller: controllerName });
    }
  }
}
