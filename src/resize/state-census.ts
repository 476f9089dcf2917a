// What the resize-state gauges report (§5.4), taken from the informer caches when asked: how many
// of this driver's PVCs are in each state of model/claim-state.ts, and how long the oldest
// unfinished resize (or modify) has been going. Taken at scrape time, it costs nothing between
// scrapes and cannot drift from what the controllers see; a standby's caches are empty, so it
// counts nothing. The metrics themselves are registered in observability/resize-state.ts.
import type { Clock } from '../base/clock.js';
import { realClock } from '../base/clock.js';
import { CLAIM_STATES, resizeProgress, trueCondition, type ClaimState } from '../model/claim-state.js';
import { ConditionType } from '../model/names.js';
import type { Pv, Pvc } from '../model/objects.js';
import { pvcKey } from '../model/pvc.js';
import { canSupport, everyVolume, type VolumeScope } from '../model/volume-scope.js';

export interface PvcSource {
  list(): Pvc[];
}
export interface PvSource {
  get(key: string): Pv | undefined;
}

export interface ResizeStateCensusOptions {
  driverName: string;
  pvcs: PvcSource;
  pvs: PvSource;
  /** The resize queue's failure count for a key; without it "backoff" comes from conditions only. */
  requeues?: (key: string) => number;
  /** The volumes this replica acts on (--node-deployment); default every volume of the driver. */
  scope?: VolumeScope;
  clock?: Clock;
}

export interface ResizeStateCounts {
  /** PVCs by resize state; every state is present. */
  readonly counts: Readonly<Record<ClaimState, number>>;
  /** Age of the oldest unfinished resize or modify, 0 when none. */
  readonly oldestSeconds: number;
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

const UNFINISHED_CONDITIONS = [
  ConditionType.Resizing,
  ConditionType.FileSystemResizePending,
  ConditionType.ControllerResizeError,
  ConditionType.ModifyingVolume,
] as const;

/** The earliest time (ms) the PVC's True conditions give for the start of its unfinished operation. */
export function unfinishedSinceMs(pvc: Pvc): number | undefined {
  let earliest: number | undefined;
  for (const type of UNFINISHED_CONDITIONS) {
    const at = Date.parse(trueCondition(pvc, type)?.lastTransitionTime ?? '');
    if (Number.isFinite(at) && (earliest === undefined || at < earliest)) earliest = at;
  }
  return earliest;
}

/** A modification (VolumeAttributesClass) still running: counts for the "oldest" age. */
function modifyUnfinished(pvc: Pvc): boolean {
  return trueCondition(pvc, ConditionType.ModifyingVolume) !== undefined;
}

export class ResizeStateCensus {
  private readonly clock: Clock;
  /** When we first saw each unfinished PVC (by uid) or its request change; pruned on every count. */
  private readonly startedAt = new Map<string, number>();

  constructor(private readonly options: ResizeStateCensusOptions) {
    this.clock = options.clock ?? realClock;
  }

  /** Counts the PVCs in the caches now. */
  count(): ResizeStateCounts {
    const { driverName, pvcs, pvs, requeues, scope } = this.options;
    const now = this.clock.now();
    const counts = Object.fromEntries(CLAIM_STATES.map((s) => [s, 0])) as Record<ClaimState, number>;
    let oldestMs = 0;
    const live = new Set<string>();
    for (const pvc of pvcs.list()) {
      if (!belongsToDriver(pvc, pvs, driverName, scope)) continue;
      const key = pvcKey(pvc);
      const state = resizeProgress(pvc, requeues?.(key) ?? 0)?.state;
      if (state) counts[state] += 1;
      if (!state && !modifyUnfinished(pvc)) continue;
      const id = pvc.metadata.uid ?? key;
      live.add(id);
      const seen = this.startedAt.get(id) ?? now;
      this.startedAt.set(id, seen);
      const fromConditions = unfinishedSinceMs(pvc);
      const start = fromConditions === undefined ? seen : Math.min(seen, fromConditions);
      oldestMs = Math.max(oldestMs, now - start);
    }
    for (const id of this.startedAt.keys()) if (!live.has(id)) this.startedAt.delete(id);
    return { counts, oldestSeconds: oldestMs / 1000 };
  }

  /**
   * A PVC's request changed (an informer update where the size differs): the start of its resize
   * when no condition says otherwise.
   */
  requestChanged(pvc: Pvc): void {
    this.startedAt.set(pvc.metadata.uid ?? pvcKey(pvc), this.clock.now());
  }
}
