// The modify controller (§1 step 18, §4): a VolumeAttributesClass informer, and its own queue
// (named and rate-limited as the resize controller's), slow set, event recorder and reconciler,
// sharing the PVC/PV informers and the KeyLock with the resize controller (src/modify/reconcile.ts
// says why the lock). The modifier calls the driver's ControllerModifyVolume.
import type { CsiClient } from '../../csi/client.js';
import { Resources } from '../../kube/api/resources.js';
import type { VolumeAttributesClass } from '../../model/objects.js';
import { ModifyController } from '../../modify/controller.js';
import { CsiModifier } from '../../modify/csi-modifier.js';
import { errorCountingModifier } from '../../modify/modifier.js';
import { OperationName, recordOperationError } from '../../observability/metrics.js';
import { ModifyReconciler } from '../../modify/reconcile.js';
import type { ControllerKit } from './controller-kit.js';
import type { Runnable } from './runnable.js';

export function buildModifyController(kit: ControllerKit, csi: CsiClient): Runnable {
  const { config, informers, driverName, log } = kit;
  const vacs = informers.add<VolumeAttributesClass>('vac-informer', Resources.volumeAttributesClasses, {
    transform: informers.forCache<VolumeAttributesClass>(),
  });
  const reconciler = new ModifyReconciler({
    modifier: errorCountingModifier(
      new CsiModifier({ driverName, csi, secrets: kit.kube, extraModifyMetadata: config.extraModifyMetadata, timeoutMs: config.modifyTimeoutMs }),
      recordOperationError(kit.metrics.operations, OperationName.Modify),
    ),
    pvcs: informers.pvcs.store,
    pvs: informers.pvs.store,
    classes: { get: (name) => vacs.store.get(name) },
    api: kit.api,
    events: kit.newEventRecorder(),
    slowSet: kit.newSlowSet(),
    keyLock: kit.keyLock,
    clock: kit.clock,
    log,
    scope: kit.scope,
  });
  return new ModifyController({
    pvcInformer: informers.pvcs,
    pvInformer: informers.pvs,
    vacInformer: vacs,
    queue: kit.newQueue(),
    reconciler,
    workers: config.workers,
    controllerName: driverName,
    log,
  });
}
