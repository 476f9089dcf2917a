// The resize controller (§1 step 17, §3): its queue, slow set, event recorder and reconciler over
// the shared PVC/PV informers, and with --handle-volume-inuse-error the Pod informer that tells
// which claims are in use. The resizer acts only on the volumes of the replica's scope.
import type { Informer } from '../../kube/cache/informer.js';
import { Resources } from '../../kube/api/resources.js';
import { everyVolume } from '../../model/volume-scope.js';
import type { RateLimitingQueue } from '../../queue/rate-limiters.js';
import { ResizeController } from '../../resize/controller.js';
import { ClaimUsage, toPodClaimUsage, type PodClaimUsage } from '../../resize/in-use.js';
import { ResizeReconciler } from '../../resize/reconcile.js';
import { OperationName, recordOperationError } from '../../observability/metrics.js';
import { errorCountingResizer, scopedResizer, type Resizer } from '../../resize/resizer.js';
import type { ControllerKit } from './controller-kit.js';
import type { Runnable } from './runnable.js';

export interface BuiltResizeController {
  readonly controller: Runnable;
  /** Its queue, whose requeue counts the resize-state gauges report. */
  readonly queue: RateLimitingQueue<string>;
  /** The resizer it acts through: the replica's scope applied, failures counted. */
  readonly resizer: Resizer;
  /** The Pod cache (with --handle-volume-inuse-error, or when its records keep their node for auto-grow). */
  readonly pods: Informer<PodClaimUsage> | undefined;
}

export interface ResizeControllerOptions {
  /** Whether the Pod cache's records keep their node name (auto-grow reads which node mounts a claim). */
  readonly podNodes?: boolean;
}

export function buildResizeController(kit: ControllerKit, backend: Resizer, options: ResizeControllerOptions = {}): BuiltResizeController {
  const { config, informers, scope, log } = kit;
  const scoped = scope === everyVolume ? backend : scopedResizer(backend, scope);
  const resizer = errorCountingResizer(scoped, recordOperationError(kit.metrics.operations, OperationName.Expand));
  const claimUsage = config.handleVolumeInUseError ? new ClaimUsage() : undefined;
  const internNode = options.podNodes ? (nodeName: string) => informers.intern(nodeName) : undefined;
  const podInformer =
    claimUsage || internNode
      ? informers.add<PodClaimUsage>('pod-informer', Resources.pods, {
          fieldSelector: informers.podFieldSelector,
          transform: (obj, key) => toPodClaimUsage(obj, key, claimUsage && ((claim) => claimUsage.intern(claim)), internNode),
        })
      : undefined;
  const queue = kit.newQueue();
  const reconciler = new ResizeReconciler({
    resizer,
    pvcs: informers.pvcs.store,
    pvs: informers.pvs.store,
    api: kit.api,
    events: kit.newEventRecorder(),
    gates: kit.gates,
    slowSet: kit.newSlowSet(),
    claimUsage,
    keyLock: kit.keyLock,
    clock: kit.clock,
    log,
  });
  const controller = new ResizeController({
    pvcInformer: informers.pvcs,
    pvInformer: informers.pvs,
    podInformer,
    claimUsage,
    queue,
    reconciler,
    workers: config.workers,
    controllerName: resizer.name,
    log,
  });
  return { controller, queue, resizer, pods: podInformer };
}
