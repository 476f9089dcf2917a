// The auto-grow controller's construction (--auto-grow, docs/auto-grow.md), kept out of the
// composition root's body: the StorageClass cache, the usage source, the Node reads, its own
// queue, event recorder and metric families. Nothing here is created without the flag, so a
// resizer without it makes no request to a kubelet and keeps no cache it did not keep before.
// It shares the claim, volume and pod caches with the resize controller (the pod records keep
// their node name when auto-grow is on: autoGrowNodeNames).
import { AutoGrowController } from '../../autogrow/controller.js';
import { ClaimMemory } from '../../autogrow/claim-memory.js';
import { autoGrowPvcHandlers } from '../../autogrow/handlers.js';
import type { StorageClassView } from '../../autogrow/policy.js';
import { AutoGrowReconciler } from '../../autogrow/reconcile.js';
import { UsagePoll } from '../../autogrow/usage-poll.js';
import { watched } from '../../controller/engine.js';
import type { Config } from '../../flags/config.js';
import { formatGoDuration } from '../../flags/go-duration.js';
import type { ClientConfig } from '../../kube/wire/kubeconfig.js';
import { PatchType } from '../../kube/api/patch.js';
import { Resources } from '../../kube/api/resources.js';
import { TopolvmAnnotation } from '../../autogrow/annotations.js';
import type { KubeObject, Node, Pvc } from '../../model/objects.js';
import { formatBytes } from '../../model/quantity.js';
import { registerAutoGrowMetrics } from '../../observability/auto-grow-metrics.js';
import type { Logger } from '../../observability/log/logger.js';
import type { Resizer } from '../../resize/resizer.js';
import { ItemExponentialFailureRateLimiter, RateLimitingQueue } from '../../queue/rate-limiters.js';
import { usageSourceFromFlags } from '../../usage/source-from-flags.js';
import type { ControllerKit } from './controller-kit.js';
import type { InformerSet } from './informers.js';
import type { BuiltResizeController } from './resize-controller.js';

/** A StorageClass as the auto-grow cache keeps it: the opt-in annotation and allowVolumeExpansion. */
type CachedClass = KubeObject & StorageClassView;

/** What auto-grow takes from the resize controller: its scoped resizer, its queue's failure counts, its pod cache. */
export type AutoGrowResizeParts = Pick<BuiltResizeController, 'resizer' | 'pods'> & { readonly queue: Pick<BuiltResizeController['queue'], 'numRequeues'> };

export interface AutoGrowWiring {
  readonly controller: AutoGrowController;
  /** Whether the usage source reads kubelets (the permission check then asks for nodes and nodes/stats). */
  readonly readsKubelets: boolean;
  close(): void;
}

/** Whether auto-grow runs: the flag, and a resizer (without one no bigger request is ever acted on). */
export function autoGrowRuns(config: Config, resizer: Resizer | undefined, log: Logger): boolean {
  if (!config.autoGrow.enabled) return false;
  if (resizer === undefined) {
    log.warn('--auto-grow is set, but this driver cannot expand volumes: auto-grow does not run');
    return false;
  }
  return true;
}

/**
 * The auto-grow controller over the shared claim, volume and pod caches (the resize controller's
 * pod cache, built with podNodes), acting through the resize controller's scoped resizer and
 * reading its queue's failure counts as the claim's backoff.
 */
export function buildAutoGrow(kit: ControllerKit, resize: AutoGrowResizeParts, clientConfig: ClientConfig): AutoGrowWiring {
  const { config, kube, clock, informers } = kit;
  const pods = resize.pods;
  if (!pods) throw new Error('auto-grow needs the Pod cache: build the resize controller with podNodes');
  const flags = config.autoGrow;
  const log = kit.log.child({ controller: 'auto-grow' });
  const classes = informers.add<CachedClass>('storageclass-informer', Resources.storageClasses, { transform: (obj) => classView(obj, informers) });
  const usage = usageSourceFromFlags(flags, clientConfig);
  const queue = new RateLimitingQueue<string>({
    name: 'auto-grow',
    clock,
    metrics: kit.metrics.workqueue,
    rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: config.retryIntervalStartMs, maxDelayMs: config.retryIntervalMaxMs }),
  });
  const memory = new ClaimMemory();
  let poll: UsagePoll | undefined;
  const reconciler = new AutoGrowReconciler({
    pvcs: informers.pvcs.store,
    pvs: informers.pvs.store,
    classes: classes.store,
    serves: (pv, pvc) => resize.resizer.canSupport(pv, pvc),
    usage: { usageOf: (key) => poll?.usageOf(key) },
    memory,
    resizeFailures: (key) => resize.queue.numRequeues(key),
    writer: {
      patchClaim: async (namespace, name, patch, signal) => (await kube.patchPvc(namespace, name, patch, { type: PatchType.Merge }, signal)) as Pvc,
    },
    events: kit.newEventRecorder(),
    metrics: registerAutoGrowMetrics(kit.metrics.registry),
    defaults: { cooldownMs: flags.cooldownMs, minStepBytes: flags.minStepBytes, dryRun: flags.dryRun },
    keyLock: kit.keyLock,
    clock,
    log,
  });
  poll = new UsagePoll({
    source: usage.source,
    nodes: usage.readsKubelets ? { getNode: async (name, signal) => (await kube.getNode(name, signal)) as Node } : undefined,
    pods: pods.store,
    candidates: () => memory.keys(),
    triage: (key) => reconciler.triage(key),
    enqueue: (key) => queue.add(key),
    intervalMs: flags.intervalMs,
    concurrency: flags.concurrency,
    clock,
    log,
  });
  const controller = new AutoGrowController({
    informers: [
      watched(informers.pvcs, autoGrowPvcHandlers({ memory, queue, forget: (key) => reconciler.forget(key), now: () => clock.now() })),
      watched(informers.pvs),
      watched(classes),
      watched(pods),
    ],
    queue,
    reconciler,
    poll,
    workers: Math.min(Math.max(config.workers, 1), 4),
    settings: {
      usageSource: usage.description,
      interval: formatGoDuration(flags.intervalMs),
      cooldown: formatGoDuration(flags.cooldownMs),
      minStep: formatBytes(flags.minStepBytes, 'BinarySI'),
      dryRun: flags.dryRun,
    },
    log,
  });
  return { controller, readsKubelets: usage.readsKubelets, close: () => usage.close() };
}

/** Only what auto-grow reads of a StorageClass: its name, the opt-in annotation, allowVolumeExpansion. */
function classView(obj: KubeObject, strings: Pick<InformerSet, 'intern'>): CachedClass {
  const enabled = obj.metadata?.annotations?.[TopolvmAnnotation.Enabled];
  return {
    metadata: {
      name: strings.intern(obj.metadata?.name ?? ''),
      ...(obj.metadata?.resourceVersion ? { resourceVersion: obj.metadata.resourceVersion } : {}),
      ...(enabled !== undefined ? { annotations: { [TopolvmAnnotation.Enabled]: enabled } } : {}),
    },
    ...(obj['allowVolumeExpansion'] === true ? { allowVolumeExpansion: true } : {}),
  };
}
