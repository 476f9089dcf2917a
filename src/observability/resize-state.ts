// Resize-state gauges, beyond upstream (§5.4): how many of this driver's PVCs are in each state of
// model/claim-state.ts (waiting, in progress, waiting for the node, infeasible or backing off), and how long the
// oldest unfinished resize has been going. Computed from the informer caches when scraped, so
// they cost nothing between scrapes and can never drift from what the controller sees. Labels are
// a fixed set; a PVC name never becomes a label value.
//
// The caches are filled only while this replica leads, so a standby replica reports zeros.
import { Gauge, type Registry } from './prom-client.js';
import type { Clock } from '../base/clock.js';
import { realClock } from '../base/clock.js';
import { CLAIM_STATES, resizeProgress, trueCondition, type ClaimState } from '../model/claim-state.js';
import type { Pv, Pvc } from '../model/objects.js';
import { ConditionType } from '../model/names.js';
import { pvcKey } from '../model/pvc.js';
import { canSupport, everyVolume, type VolumeScope } from '../model/volume-scope.js';

export const PVCS_METRIC = 'csi_resizer_pvcs';
export const OLDEST_METRIC = 'csi_resizer_oldest_unfinished_resize_seconds';

/** The earliest timestamp (ms) a PVC's conditions give for the start of its unfinished operation. */
export function conditionStartMs(pvc: Pvc): number | undefined {
  let earliest: number | undefined;
  for (const type of [ConditionType.Resizing, ConditionType.FileSystemResizePending, ConditionType.ControllerResizeError, ConditionType.ModifyingVolume]) {
    const at = Date.parse(trueCondition(pvc, type)?.lastTransitionTime ?? '');
    if (Number.isFinite(at) && (earliest === undefined || at < earliest)) earliest = at;
  }
  return earliest;
}

/** A modification (VolumeAttributesClass) still running: counts for the "oldest" gauge. */
function modifyUnfinished(pvc: Pvc): boolean {
  return trueCondition(pvc, ConditionType.ModifyingVolume) !== undefined;
}

export interface PvcSource {
  list(): Pvc[];
}
export interface PvSource {
  get(key: string): Pv | undefined;
}

export interface ResizeStateOptions {
  registry: Registry;
  driverName: string;
  pvcs: PvcSource;
  pvs: PvSource;
  /** The resize queue's failure count for a key; without it "backoff" comes from conditions only. */
  requeues?: (key: string) => number;
  /** The volumes this replica acts on (--node-deployment); default every volume of the driver. */
  scope?: VolumeScope;
  clock?: Clock;
}

export interface ResizeStateMetrics {
  /**
   * Tells the gauges that a PVC's request changed (an informer update where the size differs):
   * the start of its resize when no condition says otherwise.
   */
  requestChanged(pvc: Pvc): void;
}

/**
 * True when the controllers would act on the PVC's volume: its PV is in the cache, canSupport
 * (§3.8) says the driver serves it (a migrated in-tree PV included) and it is in this replica's scope.
 */
export function belongsToDriver(pvc: Pvc, pvs: PvSource, driverName: string, scope: VolumeScope = everyVolume): boolean {
  const volumeName = pvc.spec.volumeName;
  const pv = volumeName ? pvs.get(volumeName) : undefined;
  return pv !== undefined && canSupport(driverName, pv, pvc) && scope.includes(pv);
}

export function registerResizeStateMetrics(options: ResizeStateOptions): ResizeStateMetrics {
  const clock = options.clock ?? realClock;
  const { driverName, pvcs, pvs } = options;
  /** When we first saw each unfinished PVC (by uid) or its request change; pruned on every scrape. */
  const startedAt = new Map<string, number>();

  const compute = () => {
    const now = clock.now();
    const counts = Object.fromEntries(CLAIM_STATES.map((s) => [s, 0])) as Record<ClaimState, number>;
    let oldestMs = 0;
    const live = new Set<string>();
    for (const pvc of pvcs.list()) {
      if (!belongsToDriver(pvc, pvs, driverName, options.scope)) continue;
      const key = pvcKey(pvc);
      const state = resizeProgress(pvc, options.requeues?.(key) ?? 0)?.state;
      if (state) counts[state] += 1;
      if (!state && !modifyUnfinished(pvc)) continue;
      const id = pvc.metadata.uid ?? key;
      live.add(id);
      const seen = startedAt.get(id) ?? now;
      startedAt.set(id, seen);
      const fromConditions = conditionStartMs(pvc);
      const start = fromConditions === undefined ? seen : Math.min(seen, fromConditions);
      oldestMs = Math.max(oldestMs, now - start);
    }
    for (const id of startedAt.keys()) if (!live.has(id)) startedAt.delete(id);
    return { counts, oldestSeconds: oldestMs / 1000 };
  };

  new Gauge({
    name: PVCS_METRIC,
    help: 'Number of PersistentVolumeClaims of this driver with an unfinished resize, by state (waiting, in_progress, node_pending, infeasible, backoff). Reported by the leader.',
    labelNames: ['state'] as const,
    registers: [options.registry],
    collect() {
      const { counts } = compute();
      for (const state of CLAIM_STATES) this.set({ state }, counts[state]);
    },
  });
  new Gauge({
    name: OLDEST_METRIC,
    help: 'Age in seconds of the oldest unfinished resize (or modification) of this driver\'s PersistentVolumeClaims, 0 when none. Reported by the leader.',
    registers: [options.registry],
    collect() {
      this.set(compute().oldestSeconds);
    },
  });

  return {
    requestChanged(pvc: Pvc): void {
      const id = pvc.metadata.uid ?? pvcKey(pvc);
      startedAt.set(id, clock.now());
    },
  };
}
