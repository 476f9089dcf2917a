// The modify controller as one Runnable (§4.1–§4.3): PVC handlers and (ours) a
// VolumeAttributesClass add handler feed a rate-limited queue, N workers reconcile keys. The PVC
// and PV informers are shared with the resize controller and run by the app, as is the VAC
// informer; this waits for their first sync, seeds the uncertain keys, then works.
import type { Informer } from '../kube/informer.js';
import type { Pv, Pvc, VolumeAttributesClass } from '../model/objects.js';
import { pvcKey } from '../model/pvc.js';
import { goQuote } from '../observability/log-values.js';
import { kObj, type Logger } from '../observability/logger.js';
import type { RateLimitingQueue } from '../queue/rate-limiters.js';
import { runWorkers } from '../queue/workers.js';
import { pvcsWaitingForClass, pvcUpdateWorthModifying } from './handlers.js';
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

  constructor(private readonly o: ModifyControllerOptions) {
    const { pvcInformer, pvInformer, vacInformer, queue, reconciler } = o;
    pvcInformer.addEventHandler({
      add: (pvc) => queue.add(pvcKey(pvc)),
      update: (before, after) => {
        if (!pvcUpdateWorthModifying(before, after, () => true)) {
          o.log.v(4).info('No need to modify PVC', { PVC: kObj(after) });
          return;
        }
        const pvName = before.spec.volumeName ?? '';
        if (pvInformer.store.get(pvName) === undefined) {
          o.log.errorf(`Get PV ${goQuote(pvName)} of pvc ${goQuote(kObj(before).toString())} in PVInformer cache failed: persistentvolume ${goQuote(pvName)} not found`);
          return;
        }
        o.log.v(4).info('Enqueueing PVC for modify', { PVC: kObj(after) });
        queue.add(pvcKey(after));
      },
      delete: (pvc) => {
        queue.forget(pvcKey(pvc));
        reconciler.forget(pvcKey(pvc));
      },
    });
    // Better than upstream: a PVC left Pending because its class did not exist yet is retried as
    // soon as the class is created, without the user touching the PVC again. Creating a class is
    // rare, so scanning the PVC cache is cheaper than keeping an index up to date.
    vacInformer.addEventHandler({
      add: (vac) => {
        for (const key of pvcsWaitingForClass(vac, pvcInformer.store.list())) queue.add(key);
      },
    });
  }

  /** Waits for the caches, seeds the uncertain keys, then works until the signal aborts and in-flight reconciles finish. */
  async run(signal: AbortSignal, cancelSignal: AbortSignal = signal): Promise<void> {
    const { pvcInformer, pvInformer, vacInformer, reconciler, log, controllerName } = this.o;
    try {
      await Promise.all([pvcInformer.waitForSync(signal), pvInformer.waitForSync(signal), vacInformer.waitForSync(signal)]);
    } catch (err) {
      if (!signal.aborted) throw err;
      log.error('Cannot sync pod, pv, pvc or vac caches');
      return;
    }
    reconciler.seedUncertain(pvcInformer.store.list());
    log.info('Starting external resizer for modify volume', { controller: controllerName });
    try {
      await runWorkers({
        queue: this.o.queue,
        workers: this.o.workers,
        reconcile: (key, workerSignal) => reconciler.reconcile(key, workerSignal),
        signal,
        cancelSignal,
        log,
      });
    } finally {
      log.info('Shutting down external resizer', { controller: controllerName });
    }
  }
}
