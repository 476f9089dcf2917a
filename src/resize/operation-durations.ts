// How long each resize and modification takes (§5.5), timed from the PVC informer's events: a
// claim's clock starts when this replica first sees it ask for more storage (or for another
// class) and stops when the claim has it. Watching the claims rather than the reconciles times
// what the user waits for, kubelet's node expansion included, and needs nothing from the
// controllers. Only the leader's informers run, so only the leader observes. A clock lives in
// memory: after a restart or a fail-over the start is taken from the claim itself (the earliest
// True condition of the operation), a lower bound, since every attempt re-stamps the conditions.
import type { Clock } from '../base/clock.js';
import { realClock } from '../base/clock.js';
import { modifyProgress, resizeProgress, trueCondition } from '../model/claim-state.js';
import { ConditionType, ResizeStatus } from '../model/names.js';
import type { Pvc } from '../model/objects.js';
import { capacityBytes, pvcKey, requestedBytes, resizeStatus } from '../model/pvc.js';
import { everyVolume, type VolumeScope } from '../model/volume-scope.js';
import { belongsToDriver, type PvSource } from './state-census.js';

/** A histogram without labels, as far as this module uses it. */
export interface DurationObserver {
  observe(seconds: number): void;
}

export interface OperationDurationsOptions {
  driverName: string;
  pvs: PvSource;
  /** The volumes this replica acts on (--node-deployment); default every volume of the driver. */
  scope?: VolumeScope;
  resizeController: DurationObserver;
  resize: DurationObserver;
  /** Absent when the modify controller does not run: modifications are not timed. */
  modify?: DurationObserver;
  clock?: Clock;
}

interface ResizeClock {
  startMs: number;
  /** The controller's part has been observed, or was over before this replica saw the claim. */
  controllerDone: boolean;
}

/** The resize conditions whose lastTransitionTime can date a resize found under way. */
const RESIZE_CONDITIONS = [ConditionType.Resizing, ConditionType.ControllerResizeError, ConditionType.FileSystemResizePending] as const;

/** The resize statuses kubelet owns: the controller's part is over. */
const NODE_STATUSES: ReadonlySet<string> = new Set([ResizeStatus.NodeResizePending, ResizeStatus.NodeResizeInProgress, ResizeStatus.NodeResizeInfeasible]);

/** The earliest lastTransitionTime (ms) of the claim's True conditions of these types. */
function earliestCondition(pvc: Pvc, types: readonly string[]): number | undefined {
  let earliest: number | undefined;
  for (const type of types) {
    const at = Date.parse(trueCondition(pvc, type)?.lastTransitionTime ?? '');
    if (Number.isFinite(at) && (earliest === undefined || at < earliest)) earliest = at;
  }
  return earliest;
}

/** The controller has done its part: kubelet's turn (§3.9), or the legacy pending condition. */
function controllerPartDone(pvc: Pvc): boolean {
  const status = resizeStatus(pvc);
  return NODE_STATUSES.has(status) || (status === '' && trueCondition(pvc, ConditionType.FileSystemResizePending) !== undefined);
}

/** Nothing of a resize is left: no resize state, and the capacity reaches the request. */
function resizeFinished(pvc: Pvc): boolean {
  if (resizeProgress(pvc) !== undefined) return false;
  try {
    return capacityBytes(pvc) >= requestedBytes(pvc);
  } catch {
    return false; // a malformed quantity finishes nothing
  }
}

const wantedClass = (pvc: Pvc) => pvc.spec.volumeAttributesClassName ?? '';

export class OperationDurations {
  private readonly clock: Clock;
  private readonly scope: VolumeScope;
  /** Claims (by uid) with an unfinished resize, and when it started. */
  private readonly resizes = new Map<string, ResizeClock>();
  /** Claims (by uid) with an unfinished modification, and when it started (ms). */
  private readonly modifies = new Map<string, number>();

  constructor(private readonly options: OperationDurationsOptions) {
    this.clock = options.clock ?? realClock;
    this.scope = options.scope ?? everyVolume;
  }

  /** The PVC informer's handlers: add (a listed or new claim), update, delete. */
  readonly handlers = {
    add: (pvc: Pvc) => this.seen(pvc),
    update: (_before: Pvc, after: Pvc) => this.seen(after),
    delete: (pvc: Pvc) => {
      this.resizes.delete(idOf(pvc));
      this.modifies.delete(idOf(pvc));
    },
  };

  /** Claims with a clock running (for tests and memory accounting). */
  get running(): { resizes: number; modifies: number } {
    return { resizes: this.resizes.size, modifies: this.modifies.size };
  }

  private seen(pvc: Pvc): void {
    this.timeResize(pvc);
    if (this.options.modify) this.timeModify(pvc, this.options.modify);
  }

  private timeResize(pvc: Pvc): void {
    const id = idOf(pvc);
    const now = this.clock.now();
    const running = this.resizes.get(id);
    if (!running) {
      if (resizeProgress(pvc) === undefined || this.notOurs(pvc)) return;
      // A claim asking for more now, or one found under way (a restart, a fail-over): its
      // conditions, when it has any, say since when at least.
      const startMs = Math.min(now, earliestCondition(pvc, RESIZE_CONDITIONS) ?? now);
      // Found with the controller's part already over: when that happened is not known.
      this.resizes.set(id, { startMs, controllerDone: controllerPartDone(pvc) });
      return;
    }
    const finished = resizeFinished(pvc);
    if (!running.controllerDone && (finished || controllerPartDone(pvc))) {
      running.controllerDone = true;
      if (this.isOurs(pvc)) this.options.resizeController.observe(secondsSince(running.startMs, now));
    }
    if (finished) {
      this.resizes.delete(id);
      if (this.isOurs(pvc)) this.options.resize.observe(secondsSince(running.startMs, now));
    }
  }

  private timeModify(pvc: Pvc, observer: DurationObserver): void {
    const id = idOf(pvc);
    const now = this.clock.now();
    const startMs = this.modifies.get(id);
    if (startMs === undefined) {
      if (wantedClass(pvc) === '' || modifyProgress(pvc) === undefined || this.notOurs(pvc)) return;
      this.modifies.set(id, Math.min(now, earliestCondition(pvc, [ConditionType.ModifyingVolume]) ?? now));
      return;
    }
    if (wantedClass(pvc) === '') {
      this.modifies.delete(id); // cancelled: nothing was completed
      return;
    }
    if (modifyProgress(pvc) !== undefined) return;
    this.modifies.delete(id);
    if (this.isOurs(pvc)) observer.observe(secondsSince(startMs, now));
  }

  private isOurs(pvc: Pvc): boolean {
    return belongsToDriver(pvc, this.options.pvs, this.options.driverName, this.scope);
  }

  /**
   * Known not to be ours. A claim whose PV is not cached yet (the PVC informer may list before the
   * PV informer) is timed, and left out when it finishes if it is not ours then.
   */
  private notOurs(pvc: Pvc): boolean {
    const volumeName = pvc.spec.volumeName;
    return !volumeName || (this.options.pvs.get(volumeName) !== undefined && !this.isOurs(pvc));
  }
}

function idOf(pvc: Pvc): string {
  return pvc.metadata.uid ?? pvcKey(pvc);
}

function secondsSince(startMs: number, nowMs: number): number {
  return Math.max(0, nowMs - startMs) / 1000;
}
