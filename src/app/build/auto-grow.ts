// The auto-grow controller's construction (--auto-grow, docs/auto-grow.md), kept out of the
// composition root's body: the StorageClass cache, the usage source, the Node reads, its own
// queue, event recorder and metric families. Nothing here is created without the flag, so a
// resizer without it makes no request to a kubelet and keeps no cache it did not keep before.
// It shares the claim, volume and pod caches with the resize controller (the pod records keep
// their node name when auto-grow is on: autoGrowNodeNames).
import type { Clock } from '../../base/clock.js';
import { AutoGrowController } from '../../autogrow/controller.js';
import { ClaimMemory } from '../../autogrow/claim-memory.js';
import { autoGrowPvcHandlers } from '../../autogrow/handlers.js';
import type { PodMount } from '../../autogrow/mounts.js';
import type { StorageClassView } from '../../autogrow/policy.js';
import { AutoGrowReconciler } from '../../autogrow/reconcile.js';
import { UsagePoll } from '../../autogrow/usage-poll.js';
import { watched } from '../../controller/engine.js';
import type { Config } from '../../flags/config.js';
import { formatGoDuration } from '../../flags/go-duration.js';
import type { HttpKubeClient } from '../../kube/client.js';
import type { EventRecorder } from '../../kube/events.js';
import { Informer } from '../../kube/informer.js';
import type { ClientConfig } from '../../kube/kubeconfig.js';
import { PatchType } from '../../kube/patch.js';
import { Resources } from '../../kube/resources.js';
import type { StringPool } from '../../kube/string-pool.js';
import { TopolvmAnnotation } from '../../autogrow/annotations.js';
import type { KubeObject, Node, Pv, Pvc } from '../../model/objects.js';
import { formatBytes } from '../../model/quantity.js';
import { registerAutoGrowMetrics } from '../../observability/auto-grow-metrics.js';
import type { Logger } from '../../observability/logger.js';
import type { Metrics } from '../../observability/metrics.js';
import type { KeyLock } from '../../queue/key-lock.js';
import { ItemExponentialFailureRateLimiter, RateLimitingQueue } from '../../queue/rate-limiters.js';
import type { Resizer } from '../../resize/resizer.js';
import { usageSourceFromFlags } from '../../usage/source-from-flags.js';

/** A StorageClass as the auto-grow cache keeps it: the opt-in annotation and allowVolumeExpansion. */
type CachedClass = KubeObject & StorageClassView;

export interface AutoGrowParts {
  config: Config;
  clientConfig: ClientConfig;
  kube: Pick<HttpKubeClient, 'listWatcher' | 'patchPvc' | 'getNode'>;
  pvcs: Informer<Pvc>;
  pvs: Informer<Pv>;
  /** The pod cache, its records keeping node names (autoGrowNodeNames). */
  pods: Informer<PodMount & KubeObject>;
  resizer: Resizer;
  /** The resize queue: its failure count for a key is the claim's backoff. */
  resizeQueue: Pick<RateLimitingQueue<string>, 'numRequeues'>;
  keyLock: KeyLock;
  events: EventRecorder & { close(): void };
  strings: StringPool;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
}

export interface AutoGrowWiring {
  readonly controller: AutoGrowController;
  /** Informers to run beside the others. */
  readonly informers: readonly { readonly name: string; readonly informer: Informer<CachedClass> }[];
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

/** The pod transform's node-name interning when auto-grow runs (pod records then keep their node). */
export function autoGrowNodeNames(runs: boolean, strings: StringPool): ((nodeName: string) => string) | undefined {
  return runs ? (nodeName) => strings.intern(nodeName) : undefined;
}

export function buildAutoGrow(parts: AutoGrowParts): AutoGrowWiring {
  const { config, kube, clock, log: parentLog } = parts;
  const flags = config.autoGrow;
  const log = parentLog.child({ controller: 'auto-grow' });
  const classes = new Informer<CachedClass>({
    listWatcher: kube.listWatcher(Resources.storageClasses),
    log: parentLog,
    resyncPeriodMs: config.resyncPeriodMs,
    skippedObjects: parts.metrics.informerObjectsSkipped,
    transform: (obj) => classView(obj, parts.strings),
  });
  const usage = usageSourceFromFlags(flags, parts.clientConfig);
  const queue = new RateLimitingQueue<string>({
    name: 'auto-grow',
    clock,
    metrics: parts.metrics.workqueue,
    rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: config.retryIntervalStartMs, maxDelayMs: config.retryIntervalMaxMs }),
  });
  const memory = new ClaimMemory();
  let poll: UsagePoll | undefined;
  const reconciler = new AutoGrowReconciler({
    pvcs: parts.pvcs.store,
    pvs: parts.pvs.store,
    classes: classes.store,
    serves: (pv, pvc) => parts.resizer.canSupport(pv, pvc),
    usage: { usageOf: (key) => poll?.usageOf(key) },
    memory,
    resizeFailures: (key) => parts.resizeQueue.numRequeues(key),
    writer: {
      patchClaim: async (namespace, name, patch, signal) => (await kube.patchPvc(namespace, name, patch, { type: PatchType.Merge }, signal)) as Pvc,
    },
    events: parts.events,
    metrics: registerAutoGrowMetrics(parts.metrics.registry),
    defaults: { cooldownMs: flags.cooldownMs, minStepBytes: flags.minStepBytes, dryRun: flags.dryRun },
    keyLock: parts.keyLock,
    clock,
    log,
  });
  poll = new UsagePoll({
    source: usage.source,
    nodes: usage.readsKubelets ? { getNode: async (name, signal) => (await kube.getNode(name, signal)) as Node } : undefined,
    pods: parts.pods.store,
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
      watched(parts.pvcs, autoGrowPvcHandlers({ memory, queue, forget: (key) => reconciler.forget(key), now: () => clock.now() })),
      watched(parts.pvs),
      watched(classes),
      watched(parts.pods),
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
  return {
    controller,
    informers: [{ name: 'storageclass-informer', informer: classes }],
    readsKubelets: usage.readsKubelets,
    close: () => {
      usage.close();
      parts.events.close();
    },
  };
}

/** Only what auto-grow reads of a StorageClass: its name, the opt-in annotation, allowVolumeExpansion. */
function classView(obj: KubeObject, strings: StringPool): CachedClass {
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
