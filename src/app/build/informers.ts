// The informers the controllers share, made once: the PVC and PV informers every controller
// reads, and the others a controller adds (pods, VolumeAttributesClasses), all with the same
// resync period, log and skipped-object metric, run and synced together. What they cache is
// trimmed on arrival (no managedFields, repeated strings shared); with --node-deployment only
// this node's volumes, their claims and its pods are cached (node-local-caches.ts).
import { abortable } from '../../base/signals.js';
import type { KubeClient } from '../../kube/client.js';
import { Informer, type InformerOptions } from '../../kube/informer.js';
import { Resources, type ResourceRef } from '../../kube/resources.js';
import { StringPool } from '../../kube/string-pool.js';
import type { KubeObject, Pv, Pvc } from '../../model/objects.js';
import type { VolumeScope } from '../../model/volume-scope.js';
import type { Logger } from '../../observability/logger.js';
import type { Metrics } from '../../observability/metrics.js';
import { NodeLocalCaches } from '../node-local-caches.js';
import { NodeVolumeScope } from '../node-volume-scope.js';
import { runLogged, type Runnable } from './runnable.js';

export interface InformerSetOptions {
  kube: Pick<KubeClient, 'listWatcher'>;
  resyncPeriodMs: number;
  metrics: Pick<Metrics, 'informerObjectsSkipped'>;
  log: Logger;
  scope: VolumeScope;
  driverName: string;
}

interface InformerRunnable extends Runnable {
  waitForSync(signal: AbortSignal): Promise<void>;
}

export class InformerSet {
  readonly pvcs: Informer<Pvc>;
  readonly pvs: Informer<Pv>;
  /** The Pod informer's field selector: this node's pods with --node-deployment, else none. */
  readonly podFieldSelector: string | undefined;
  private readonly strings = new StringPool();
  /** In start order: the PVC informer first (with --node-deployment it waits for the PVs' sync). */
  private readonly runnables: InformerRunnable[] = [];
  private markSynced!: () => void;
  private readonly synced = new Promise<void>((resolve) => {
    this.markSynced = resolve;
  });

  constructor(private readonly options: InformerSetOptions) {
    const { scope, driverName } = options;
    const nodeLocal = scope instanceof NodeVolumeScope ? new NodeLocalCaches({ scope, driverName }) : undefined;
    this.podFieldSelector = nodeLocal?.podFieldSelector;
    const pvs = this.informer<Pv>(Resources.persistentVolumes, {
      transform: nodeLocal ? nodeLocal.pvTransform(this.forCache<Pv>()) : this.forCache<Pv>(),
    });
    const pvcs = this.informer<Pvc>(Resources.persistentVolumeClaims, {
      transform: nodeLocal ? nodeLocal.pvcTransform(this.forCache<Pvc>(), pvs.store) : this.forCache<Pvc>(),
    });
    nodeLocal?.connect(pvs, pvcs);
    this.runnables.push(runnable('pvc-informer', pvcs, nodeLocal ? NodeLocalCaches.claimsAfterVolumes(pvs, pvcs) : undefined), runnable('pv-informer', pvs));
    this.pvs = pvs;
    this.pvcs = pvcs;
  }

  /** The shared informers' transform: without managedFields, repeated strings shared. */
  forCache<T extends KubeObject>(): (obj: KubeObject) => T {
    return (obj) => {
      const cached = withoutManagedFields<T>(obj);
      this.strings.internValues(cached);
      return cached;
    };
  }

  /** The string shared by every cached copy of `value` (names, node names). */
  intern(value: string): string {
    return this.strings.intern(value);
  }

  /** Another informer with the shared settings, run and synced with the others. */
  add<T extends KubeObject>(name: string, resource: ResourceRef, options: Pick<InformerOptions<T>, 'transform' | 'fieldSelector'>): Informer<T> {
    const informer = this.informer<T>(resource, options);
    this.runnables.push(runnable(name, informer));
    return informer;
  }

  /** Runs every informer until `signal` aborts; an informer's failure is logged and rejects. */
  async run(signal: AbortSignal): Promise<void> {
    const done = Promise.all(this.runnables.map((r) => runLogged(r, signal, signal, this.options.log)));
    Promise.all(this.runnables.map((r) => r.waitForSync(signal))).then(this.markSynced, () => {});
    await done;
  }

  /** Resolves once every informer has its first list (only ever while `run` runs); rejects when `signal` aborts first. */
  whenSynced(signal: AbortSignal): Promise<void> {
    return abortable(this.synced, signal);
  }

  private informer<T extends KubeObject>(resource: ResourceRef, options: Pick<InformerOptions<T>, 'transform' | 'fieldSelector'>): Informer<T> {
    const { kube, log, resyncPeriodMs, metrics } = this.options;
    return new Informer<T>({ listWatcher: kube.listWatcher(resource), log, resyncPeriodMs, skippedObjects: metrics.informerObjectsSkipped, ...options });
  }
}

/** Drops what no controller reads and what weighs most in memory. */
function withoutManagedFields<T extends KubeObject>(obj: KubeObject): T {
  if (obj.metadata && 'managedFields' in obj.metadata) {
    const { managedFields: _dropped, ...metadata } = obj.metadata;
    return { ...obj, metadata } as T;
  }
  return obj as T;
}

/** `run` replaces the informer's own run (e.g. to start it after another informer's sync). */
function runnable<T extends KubeObject>(name: string, informer: Informer<T>, run?: (signal: AbortSignal) => Promise<void>): InformerRunnable {
  return { name, run: run ?? ((signal) => informer.run(signal)), waitForSync: (signal) => informer.waitForSync(signal) };
}
