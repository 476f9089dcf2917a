// Resize-state gauges, beyond upstream (§5.4): how many of this driver's PVCs
// are waiting, in progress, waiting for the node, infeasible or backing off, and how long the
// oldest unfinished resize has been going. Computed from the informer caches when scraped, so
// they cost nothing between scrapes and can never drift from what the controller sees. Labels are
// a fixed set; a PVC name never becomes a label value.
//
// The caches are filled only while this replica leads, so a standby replica reports zeros.
import { Gauge, type Registry } from './prom-client.js';
import type { Clock } from '../base/clock.js';
import { realClock } from '../base/clock.js';
import type { Pv, Pvc, PvcCondition } from '../model/objects.js';
import { ConditionType, ResizeStatus } from '../model/names.js';
import { capacityBytes, pvcKey, requestedBytes, resizeStatus } from '../model/pvc.js';
import { canSupport, everyVolume, type VolumeScope } from '../model/volume-scope.js';

export const ResizeState = {
  /** A bigger size was requested and the resizer has not started on it yet. */
  Waiting: 'waiting',
  /** ControllerExpandVolume has been started for the current target and has not failed. */
  InProgress: 'in_progress',
  /** The controller part is done; kubelet has to grow the filesystem (NodeResizePending/InProgress). */
  NodePending: 'node_pending',
  /** The driver refused the size (ControllerResizeInfeasible, NodeResizeInfeasible). */
  Infeasible: 'infeasible',
  /** The last attempt failed with a retryable error; the key waits in the queue's backoff. */
  Backoff: 'backoff',
} as const;
export type ResizeState = (typeof ResizeState)[keyof typeof ResizeState];
export const RESIZE_STATES: readonly ResizeState[] = Object.values(ResizeState);

export const PVCS_METRIC = 'csi_resizer_pvcs';
export const OLDEST_METRIC = 'csi_resizer_oldest_unfinished_resize_seconds';

function conditionTrue(conditions: readonly PvcCondition[] | undefined, type: string): PvcCondition | undefined {
  return conditions?.find((c) => c.type === type && c.status === 'True');
}

/**
 * The resize state of one PVC (already known to belong to this driver), or undefined when no
 * resize is unfinished. `requeues` is the queue's failure count for the PVC's key.
 *
 * The allocatedResourceStatuses entry decides first (the recovery-aware path writes it); without
 * it, the legacy conditions and then the sizes decide.
 */
export function classifyResize(pvc: Pvc, requeues = 0): ResizeState | undefined {
  const conditions = pvc.status?.conditions;
  const status = resizeStatus(pvc);
  switch (status) {
    case ResizeStatus.ControllerResizeInfeasible:
    case ResizeStatus.NodeResizeInfeasible:
      return ResizeState.Infeasible;
    case ResizeStatus.NodeResizePending:
    case ResizeStatus.NodeResizeInProgress:
      return ResizeState.NodePending;
    case ResizeStatus.ControllerResizeInProgress:
      // A final, not-infeasible error leaves the status in progress with an error condition;
      // a transient error leaves only the queue's failure count behind.
      if (requeues > 0 || conditionTrue(conditions, ConditionType.ControllerResizeError)) return ResizeState.Backoff;
      return ResizeState.InProgress;
    case '':
      break;
    default:
      // A status this version does not know: something is going on.
      return requeues > 0 ? ResizeState.Backoff : ResizeState.InProgress;
  }
  // Legacy path (RecoverVolumeExpansionFailure=false) or not started yet.
  if (conditionTrue(conditions, ConditionType.FileSystemResizePending)) return ResizeState.NodePending;
  if (conditionTrue(conditions, ConditionType.Resizing)) return requeues > 0 ? ResizeState.Backoff : ResizeState.InProgress;
  let wantsMore: boolean;
  try {
    wantsMore = requestedBytes(pvc) > capacityBytes(pvc);
  } catch {
    return undefined; // a malformed quantity: the controller reports it, we don't guess
  }
  if (!wantsMore) return undefined;
  // An unbound or not yet reported capacity is not a resize.
  if (pvc.status?.phase !== 'Bound' || pvc.status?.capacity?.['storage'] === undefined) return undefined;
  return requeues > 0 ? ResizeState.Backoff : ResizeState.Waiting;
}

/** The earliest timestamp (ms) a PVC's conditions give for the start of its unfinished operation. */
export function conditionStartMs(pvc: Pvc): number | undefined {
  let earliest: number | undefined;
  for (const type of [ConditionType.Resizing, ConditionType.FileSystemResizePending, ConditionType.ControllerResizeError, ConditionType.ModifyingVolume]) {
    const at = Date.parse(conditionTrue(pvc.status?.conditions, type)?.lastTransitionTime ?? '');
    if (Number.isFinite(at) && (earliest === undefined || at < earliest)) earliest = at;
  }
  return earliest;
}

/** A modification (VolumeAttributesClass) still running: counts for the "oldest" gauge. */
function modifyUnfinished(pvc: Pvc): boolean {
  return conditionTrue(pvc.status?.conditions, ConditionType.ModifyingVolume) !== undefined;
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
    const counts = Object.fromEntries(RESIZE_STATES.map((s) => [s, 0])) as Record<ResizeState, number>;
    let oldestMs = 0;
    const live = new Set<string>();
    for (const pvc of pvcs.list()) {
      if (!belongsToDriver(pvc, pvs, driverName, options.scope)) continue;
      const key = pvcKey(pvc);
      const state = classifyResize(pvc, options.requeues?.(key) ?? 0);
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
      for (const state of RESIZE_STATES) this.set({ state }, counts[state]);
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
