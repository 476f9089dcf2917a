// What a --node-deployment replica caches: its own node's volumes, not the cluster's
// (docs/differences/node-deployment.md, "What a replica caches"). The API server cannot select
// PVs on node affinity nor claims on their PV, so both informers filter on arrival, before
// anything is cached or interned: a PV is kept when its required node affinity selects this node
// (the rule the controllers' scope applies), a claim when it is bound to a kept PV. Pods are
// selected by the API server itself (spec.nodeName, as kubelet watches them).
//
// The claim filter depends on the PV cache, so the claim informer starts after the PV informer's
// first sync, and changes to the PV cache are carried over: a PV that leaves takes its claims
// with it (Informer.refilter); a PV that arrives after its claim was dropped has the claim read
// again (Informer.refetch, one list of that name), since the watch will not send it again until
// it changes.
import type { Informer } from '../kube/cache/informer.js';
import type { ReadonlyStore } from '../kube/cache/store.js';
import { MIGRATION_TARGET_DRIVERS } from '../model/names.js';
import { nodeAffinitySelects } from '../model/node-affinity.js';
import type { KubeObject, Pv, Pvc } from '../model/objects.js';
import type { NodeVolumeScope } from './node-volume-scope.js';

export class NodeLocalCaches {
  /** The pod informer's field selector: this node's pods only. */
  readonly podFieldSelector: string;

  constructor(private readonly options: { scope: NodeVolumeScope; driverName: string }) {
    this.podFieldSelector = `spec.nodeName=${options.scope.node.name}`;
  }

  /** The PV informer's transform: `cache` for this node's PVs; the others are dropped before anything is copied or interned. */
  pvTransform(cache: (obj: KubeObject) => Pv): (obj: KubeObject) => Pv | undefined {
    return (obj) => (this.keepsPv(obj) ? cache(obj) : undefined);
  }

  /** The PVC informer's transform: `cache` for the claims bound to a PV in `pvs`; the others are dropped first. */
  pvcTransform(cache: (obj: KubeObject) => Pvc, pvs: ReadonlyStore<Pv>): (obj: KubeObject) => Pvc | undefined {
    return (obj) => (this.keepsPvc(obj, pvs) ? cache(obj) : undefined);
  }

  /**
   * The PV filter: the PV's required node affinity selects this node. A PV of the driver without
   * node affinity belongs to no node; it is reported once, as the controllers' scope does.
   */
  private keepsPv(raw: KubeObject): boolean {
    const pv = raw as Pv;
    if (typeof pv.spec !== 'object' || pv.spec === null) return false;
    const selects = nodeAffinitySelects(pv, this.options.scope.node);
    if (selects === 'none' && this.mayBeOfDriver(pv)) this.options.scope.reportNoAffinity(pv);
    return selects === true;
  }

  /** The claim filter: bound to a PV the PV cache holds. */
  private keepsPvc(raw: KubeObject, pvs: ReadonlyStore<Pv>): boolean {
    const volumeName = (raw as Partial<Pvc>).spec?.volumeName;
    return typeof volumeName === 'string' && volumeName !== '' && pvs.get(volumeName) !== undefined;
  }

  /** Carries changes of the PV cache over to the claim cache. */
  connect(pvs: Informer<Pv>, pvcs: Informer<Pvc>): void {
    pvs.addEventHandler({
      add: (pv) => {
        // During the PV informer's first sync the claim informer has not started (see
        // claimsAfterVolumes): its first list will see these PVs.
        if (!pvs.hasSynced()) return;
        const claim = claimKeyOf(pv);
        if (claim !== undefined && pvcs.store.get(claim) === undefined) pvcs.refetch(claim);
      },
      delete: (pv) => pvcs.refilter((pvc) => pvc.spec.volumeName === pv.metadata.name),
    });
  }

  /**
   * The claim informer's run: after the PV informer's first sync, so the claims of the first list
   * are judged against a complete PV cache.
   */
  static claimsAfterVolumes(pvs: Informer<Pv>, pvcs: Informer<Pvc>): (signal: AbortSignal) => Promise<void> {
    return async (signal) => {
      try {
        await pvs.waitForSync(signal);
      } catch {
        return; // aborted before the PVs synced: nothing to run
      }
      await pvcs.run(signal);
    };
  }

  /**
   * Whether the PV may be the driver's: its CSI driver, or an in-tree PV when the driver is a
   * migration target (which in-tree PVs migrate is the claim's annotation, not known here).
   */
  private mayBeOfDriver(pv: Pv): boolean {
    const csi = pv.spec.csi;
    if (csi) return csi.driver === this.options.driverName;
    return MIGRATION_TARGET_DRIVERS.has(this.options.driverName);
  }
}

/** The cache key of the claim a PV's claimRef names, if it names one. */
function claimKeyOf(pv: Pv): string | undefined {
  const ref = pv.spec.claimRef as { namespace?: unknown; name?: unknown } | undefined;
  if (typeof ref?.name !== 'string' || ref.name === '' || typeof ref.namespace !== 'string' || ref.namespace === '') return undefined;
  return `${ref.namespace}/${ref.name}`;
}
