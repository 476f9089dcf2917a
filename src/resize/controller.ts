// The resize controller (§3.1–§3.3): the controller engine configured with the PVC handlers (and,
// with --handle-volume-inuse-error, the Pod handlers) of handlers.ts, the PV cache, and
// ResizeReconciler. The informers are shared with the modify controller and run by the app.
import { ControllerEngine, watched } from '../controller/engine.js';
import type { Informer } from '../kube/cache/informer.js';
import type { Logger } from '../observability/log/logger.js';
import type { Pv, Pvc } from '../model/objects.js';
import type { RateLimitingQueue } from '../queue/rate-limiters.js';
import { podHandlers, pvcHandlers } from './handlers.js';
import type { ClaimUsage, PodClaimUsage } from './in-use.js';
import type { ResizeReconciler } from './reconcile.js';

export interface ResizeControllerOptions {
  pvcInformer: Informer<Pvc>;
  pvInformer: Informer<Pv>;
  /** Present with --handle-volume-inuse-error. */
  podInformer: Informer<PodClaimUsage> | undefined;
  claimUsage: ClaimUsage | undefined;
  queue: RateLimitingQueue<string>;
  reconciler: ResizeReconciler;
  workers: number;
  /** The resizer's name (the driver name), as upstream's `controller` log key carries it. */
  controllerName: string;
  log: Logger;
}

export class ResizeController {
  readonly name = 'resize-controller';
  private readonly engine: ControllerEngine;

  constructor(o: ResizeControllerOptions) {
    const { pvcInformer, pvInformer, podInformer, claimUsage, queue, reconciler, log, controllerName } = o;
    const informers = [watched(pvcInformer, pvcHandlers({ queue, forget: (key, uid) => reconciler.forget(key, uid) })), watched(pvInformer)];
    if (podInformer) {
      if (claimUsage) log.info('Register Pod informer for resizer', { controller: controllerName });
      informers.push(watched(podInformer, claimUsage ? podHandlers(claimUsage) : undefined));
    }
    this.engine = new ControllerEngine({
      name: this.name,
      informers,
      queue,
      workers: o.workers,
      reconcile: (key, signal) => reconciler.reconcile(key, signal),
      lifecycle: {
        // As upstream: the start is said before the caches sync, so a failed sync is also followed by the stop.
        announce: 'beforeSync',
        starting: () => log.info('Starting external resizer', { controller: controllerName }),
        stopping: () => log.info('Shutting down external resizer', { controller: controllerName }),
        cachesNotSynced: () => log.error('Cannot sync pod, pv or pvc caches'),
        // As upstream: the error names the PVC, the line no other field.
        reconcileFailed: (err) => log.error('Error syncing PVC', { err }),
      },
      log,
    });
  }

  /** Waits for the caches, then works until `signal` aborts and in-flight reconciles finish (or `cancelSignal` cuts them short). */
  run(signal: AbortSignal, cancelSignal: AbortSignal = signal): Promise<void> {
    return this.engine.run(signal, cancelSignal);
  }
}
