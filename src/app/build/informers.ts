// The informers the controllers share, made once: the PVC and PV informers every controller
// reads, and the others a controller adds (pods, VolumeAttributesClasses), all with the same
// resync period, log and skipped-object metric, run and synced together. What they cache is
// trimmed on arrival (no managedFields, repeated strings shared); with --node-deployment only
// this node's volumes, their claims and its pods are cached (node-local-caches.ts).
// A list or watch the server refuses is said once per rule, with what stops for want of it, and
// said again when the rule is granted (app/permission-notices.ts); for start-up, an informer so
// refused counts as settled, so the RBAC check and the process collectors do not wait for it.
import { abortable } from '../../base/signals.js';
import type { KubeClient } from '../../kube/api/client.js';
import { Informer, type InformerAccessListener, type InformerOptions } from '../../kube/cache/informer.js';
import { listWatchRule, type RequiredRule } from '../../kube/api/required-permissions.js';
import { Resources, type ResourceRef } from '../../kube/api/resources.js';
import { StringPool } from '../../kube/cache/string-pool.js';
import type { KubeObject, Pv, Pvc } from '../../model/objects.js';
import type { VolumeScope } from '../../model/volume-scope.js';
import type { Logger } from '../../observability/log/logger.js';
import type { Metrics } from '../../observability/metrics.js';
import { NodeLocalCaches } from '../node-local-caches.js';
import { NodeVolumeScope } from '../node-volume-scope.js';
import type { PermissionNotices } from '../permission-notices.js';
import { runLogged, type Runnable } from './runnable.js';

export interface InformerSetOptions {
  kube: Pick<KubeClient, 'listWatcher'>;
  resyncPeriodMs: number;
  metrics: Pick<Metrics, 'informerObjectsSkipped' | 'informerRefusals'>;
  log: Logger;
  scope: VolumeScope;
  driverName: string;
  /** The rules this configuration uses, and where a refused list or watch is said. */
  permissions: { rules: readonly RequiredRule[]; notices: PermissionNotices };
}

interface InformerRunnable extends Runnable {
  /** Resolves once the informer has its first list or the server has refused it (403); rejects when `signal` aborts first. */
  waitForStart(signal: AbortSignal): Promise<void>;
}

/** An informer, and a promise that resolves at its first refused list or watch. */
interface Made<T extends KubeObject> {
  readonly informer: Informer<T>;
  readonly refused: Promise<void>;
}

export class InformerSet {
  readonly pvcs: Informer<Pvc>;
  readonly pvs: Informer<Pv>;
  /** The Pod informer's field selector: this node's pods with --node-deployment, else none. */
  readonly podFieldSelector: string | undefined;
  private readonly strings = new StringPool();
  /** In start order: the PVC informer first (with --node-deployment it waits for the PVs' sync). */
  private readonly runnables: InformerRunnable[] = [];
  private markStarted!: () => void;
  private readonly started = new Promise<void>((resolve) => {
    this.markStarted = resolve;
  });

  constructor(private readonly options: InformerSetOptions) {
    const { scope, driverName } = options;
    const nodeLocal = scope instanceof NodeVolumeScope ? new NodeLocalCaches({ scope, driverName }) : undefined;
    this.podFieldSelector = nodeLocal?.podFieldSelector;
    const pvs = this.informer<Pv>(Resources.persistentVolumes, {
      transform: nodeLocal ? nodeLocal.pvTransform(this.forCache<Pv>()) : this.forCache<Pv>(),
    });
    const pvcs = this.informer<Pvc>(Resources.persistentVolumeClaims, {
      transform: nodeLocal ? nodeLocal.pvcTransform(this.forCache<Pvc>(), pvs.informer.store) : this.forCache<Pvc>(),
    });
    nodeLocal?.connect(pvs.informer, pvcs.informer);
    this.runnables.push(
      runnable('pvc-informer', pvcs, nodeLocal ? NodeLocalCaches.claimsAfterVolumes(pvs.informer, pvcs.informer) : undefined),
      runnable('pv-informer', pvs),
    );
    this.pvs = pvs.informer;
    this.pvcs = pvcs.informer;
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
    const made = this.informer<T>(resource, options);
    this.runnables.push(runnable(name, made));
    return made.informer;
  }

  /** Runs every informer until `signal` aborts; an informer's failure is logged and rejects. */
  async run(signal: AbortSignal): Promise<void> {
    const done = Promise.all(this.runnables.map((r) => runLogged(r, signal, signal, this.options.log)));
    Promise.all(this.runnables.map((r) => r.waitForStart(signal))).then(this.markStarted, () => {});
    await done;
  }

  /**
   * Resolves once every informer has its first list or has been refused it for want of a rule
   * (only ever while `run` runs); rejects when `signal` aborts first.
   */
  whenStarted(signal: AbortSignal): Promise<void> {
    return abortable(this.started, signal);
  }

  private informer<T extends KubeObject>(resource: ResourceRef, options: Pick<InformerOptions<T>, 'transform' | 'fieldSelector'>): Made<T> {
    const { kube, log, resyncPeriodMs, metrics, permissions } = this.options;
    let markRefused!: () => void;
    const refused = new Promise<void>((resolve) => {
      markRefused = resolve;
    });
    const rule = listWatchRule(permissions.rules, resource);
    const access: InformerAccessListener | undefined = rule && {
      refused: (err) => {
        permissions.notices.refused(rule, err);
        markRefused();
      },
      allowed: () => permissions.notices.granted(rule),
    };
    const informer = new Informer<T>({
      listWatcher: kube.listWatcher(resource),
      log,
      resyncPeriodMs,
      skippedObjects: metrics.informerObjectsSkipped,
      refusals: metrics.informerRefusals,
      access,
      ...options,
    });
    return { informer, refused };
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
function runnable<T extends KubeObject>(name: string, made: Made<T>, run?: (signal: AbortSignal) => Promise<void>): InformerRunnable {
  const { informer, refused } = made;
  return {
    name,
    run: run ?? ((signal) => informer.run(signal)),
    waitForStart: (signal) => Promise.race([informer.waitForSync(signal), refused]),
  };
}
