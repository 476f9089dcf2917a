// The modify controller (§4.1–§4.3): the controller engine configured with the PVC handlers and
// (ours) the VolumeAttributesClass add handler of handlers.ts, the PV cache, and ModifyReconciler.
// The PVC, PV and VAC informers are shared and run by the app. Once they have synced, the PVCs
// left InProgress seed the uncertain keys before any worker starts.
import { ControllerEngine, watched } from '../controller/engine.js';
import type { Informer } from '../kube/cache/informer.js';
import type { Pv, Pvc, VolumeAttributesClass } from '../model/objects.js';
import type { Logger } from '../observability/log/logger.js';
import type { RateLimitingQueue } from '../queue/rate-limiters.js';
import { classHandlers, pvcHandlers } from './handlers.js';
import type { ModifyReconciler } from './reconcile.js';

export interface ModifyControllerOptions {
  pvcInformer: Informer<Pvc>;
  pvInformer: Informer<Pv>;
  vacInformer: Informer<VolumeAttributesClass>;
  queue: RateLimitingQueue<string>;
  reconciler: ModifyReconciler;
  workers: number;
  /** The modifier's name (the driver name), as upstream's `controller` log key carries it. */
  controllerName: string;
  log: Logger;
}

export class ModifyController {
  readonly name = 'modify-controller';
  private readonly engine: ControllerEngine;

  constructor(o: ModifyControllerOptions) {
    const { pvcInformer, pvInformer, vacInformer, queue, reconciler, log, controllerName } = o;
    this.engine = new ControllerEngine({
      name: this.name,
      informers: [
        watched(pvcInformer, pvcHandlers({ queue, pvs: pvInformer.store, forget: (key) => reconciler.forget(key), log })),
        watched(pvInformer),
        watched(vacInformer, classHandlers({ queue, pvcs: pvcInformer.store })),
      ],
      queue,
      workers: o.workers,
      reconcile: (key, signal) => reconciler.reconcile(key, signal),
      lifecycle: {
        // As upstream: the start is said once the caches have synced.
        announce: 'afterSync',
        synced: () => {
          reconciler.seedUncertain(pvcInformer.store.list());
        },
        starting: () => log.info('Starting external resizer for modify volume', { controller: controllerName }),
        stopping: () => log.info('Shutting down external resizer', { controller: controllerName }),
        cachesNotSynced: () => log.error('Cannot sync pod, pv, pvc or vac caches'),
        // As upstream: the error names the PVC, the line no other field.
        reconcileFailed: (err) => log.error('Error syncing PVC', { err }),
      },
      log,
    });
  }

  /** Waits for the caches, seeds the uncertain keys, then works until the signal aborts and in-flight reconciles finish. */
  run(signal: AbortSignal, cancelSignal: AbortSignal = signal): Promise<void> {
    return this.engine.run(signal, cancelSignal);
  }
}
