// One PVC key in, the resize work it needs done, an outcome out (§3.3–§3.6). Reads the PVC and
// PV from the informer stores, decides with plan.ts, writes through the API, and writes every
// patched object back into its store so the next reconcile never acts on an older copy.
//
// A thrown error means "retry with backoff" (the worker requeues rate-limited); a returned
// `retryAfter` is the infeasible slow path, which waits without growing the backoff.
import { messageOf } from '../base/errors.js';
import { classifyCsiError, type CsiError } from '../csi/errors.js';
import { Annotation, EventReason, Message } from '../model/names.js';
import type { Pv, Pvc } from '../model/objects.js';
import { allocatedBytes, capacityBytes, isFileSystemResizePending, pvBytes, pvClaimedBy, requestedBytes, resizeStatus, STORAGE } from '../model/pvc.js';
import { formatBytes } from '../model/quantity.js';
import { kObj, type Logger } from '../observability/logger.js';
import type { Clock } from '../base/clock.js';
import { metaTime } from '../model/time.js';
import type { Outcome } from '../queue/workers.js';
import type { KeyLock } from '../queue/key-lock.js';
import type { SlowSetView } from '../queue/slow-set.js';
import type { EventRecorder } from '../kube/events.js';
import { patchPvCached, patchPvcStatusCached, readClaimAndVolume, type ObjectCache, type VolumeApi } from '../kube/volume-api.js';
import { legacyNeedsResize, planExpansion, pvcNeedsResize } from './plan.js';
import type { Resizer, ResizeResult, ResizeTarget } from './resizer.js';
import type { ClaimUsage } from './in-use.js';
import {
  markControllerExpansionFailed,
  markControllerResizeInProgress,
  markExpansionFinished,
  markFileSystemResizePendingLegacy,
  markNodeExpansionPending,
  markResizeFinishedLegacy,
  markResizingLegacy,
  pvCapacityPatch,
  removePreResizeAnnotationPatch,
  type PvcStatusPatch,
} from './status.js';

export interface ResizeGates {
  readonly recoverVolumeExpansionFailure: boolean;
  readonly annotateFsResize: boolean;
}

export interface ResizeReconcilerOptions {
  resizer: Resizer;
  pvcs: ObjectCache<Pvc>;
  pvs: ObjectCache<Pv>;
  api: VolumeApi;
  events: EventRecorder;
  gates: ResizeGates;
  slowSet: SlowSetView;
  /** Present when --handle-volume-inuse-error is on (pods are watched). */
  claimUsage: ClaimUsage | undefined;
  /** Shared with the modify controller: one reconcile per PVC at a time across both. */
  keyLock: KeyLock;
  clock: Clock;
  log: Logger;
}

/** The driver replied "success" with a size it can't have grown to: never written to the PV. */
export class BogusCapacityError extends Error {
  constructor(
    readonly replyBytes: bigint,
    readonly requestedBytes: bigint,
  ) {
    super(`CSI driver reported capacity ${replyBytes} bytes, less than the requested ${requestedBytes} bytes`);
    this.name = 'BogusCapacityError';
  }
}

/** The volume is used by a pod and the driver can't expand it online; retried with backoff. */
export class VolumeInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VolumeInUseError';
  }
}

/**
 * What the legacy (§3.4) and recovery (§3.5) paths write around their shared driver call: their
 * patch builders, what a driver failure leaves on the PVC, and upstream's wording of each failure
 * (the prefix of `<prefix>: <cause>`).
 */
interface PathWrites {
  readonly path: 'legacy' | 'recovery';
  markResizing(pvc: Pvc): PvcStatusPatch;
  markNodeExpansionPending(pvc: Pvc): PvcStatusPatch;
  markFinished(pvc: Pvc, capacity: string): PvcStatusPatch;
  recordFailure(key: string, pvc: Pvc, err: CsiError | BogusCapacityError, signal: AbortSignal): Promise<void>;
  readonly failed: {
    markResizing(key: string): string;
    /** Undefined: the PV write's own error is returned as is. */
    pvCapacity: ((pvName: string) => string) | undefined;
    markNodeExpansionPending(key: string): string;
    markFinished(key: string): string;
  };
}

export class ResizeReconciler {
  /** Keys whose last controller expansion ended with a final error (may be recovered to a smaller size). */
  private readonly finalErrorKeys = new Set<string>();
  /** UIDs of PVCs whose last expansion failed with FailedPrecondition (in use, offline-only driver). */
  private readonly inUseErrorUids = new Set<string>();

  constructor(private readonly options: ResizeReconcilerOptions) {}

  reconcile(key: string, signal: AbortSignal): Promise<Outcome> {
    return this.options.keyLock.withKey(key, () => this.reconcileLocked(key, signal));
  }

  private async reconcileLocked(key: string, signal: AbortSignal): Promise<Outcome> {
    const { pvcs, pvs, gates, log } = this.options;
    log.v(4).info('Started PVC processing for resize controller', { key });
    const found = readClaimAndVolume(key, {
      pvcs,
      pvs,
      log,
      pvNotFound: (pvName) => new Error(`PV "${pvName}" bound to pvc "${key}" not found`),
    });
    if (!found) return { kind: 'done' };
    const { pvc, pv } = found;
    const pvName = pv.metadata.name;

    if (gates.annotateFsResize) {
      log.v(4).info('Capacity of pv and pvc', {
        PV: kObj(pv),
        pvCapacity: pv.spec.capacity?.[STORAGE] ?? '0',
        PVC: kObj(pvc),
        pvcCapacity: pvc.status?.capacity?.[STORAGE] ?? '0',
      });
    }
    if (gates.annotateFsResize && pv.metadata.annotations?.[Annotation.PreResizeCapacity] !== undefined && capacityBytes(pvc) >= pvBytes(pv)) {
      try {
        await patchPvCached(this.options.api, pvs, pvName, removePreResizeAnnotationPatch(pv), signal);
      } catch (err) {
        throw new Error(`failed removing annotation ${Annotation.PreResizeCapacity} from pv "${pvName}": ${messageOf(err)}`, { cause: err });
      }
    }

    if (!pvcNeedsResize(pvc.status?.phase, pvName, requestedBytes(pvc), capacityBytes(pvc))) {
      log.v(4).info('No need to resize PVC', { PVC: kObj(pvc) });
      return { kind: 'done' };
    }
    if (!this.canExpand(pv, pvc)) {
      log.v(4).info(gates.recoverVolumeExpansionFailure ? 'No need to resize' : 'No need to resize PV', { PV: kObj(pv) });
      return { kind: 'done' };
    }
    return gates.recoverVolumeExpansionFailure ? this.expandAndRecover(key, pvc, pv, signal) : this.legacyResize(key, pvc, pv, signal);
  }

  /** Upstream's pvCanBeExpanded (and CanSupport), with its log lines: the resizer takes the PV and the PV is bound to this PVC. */
  private canExpand(pv: Pv, pvc: Pvc): boolean {
    const { resizer, log } = this.options;
    if (!resizer.canSupport(pv, pvc)) {
      if (!pv.spec.csi) log.v(4).info('PV is not a CSI volume, skip it', { PV: kObj(pv) });
      else log.v(4).info(resizer.supportsControlPlaneExpansion ? 'Skip resize PV' : 'Skip resize', { PV: kObj(pv), resizer: pv.spec.csi.driver });
      log.v(4).info("Resizer doesn't support PV", { controller: resizer.name, PV: kObj(pv) });
      return false;
    }
    if (!pvClaimedBy(pv, pvc)) {
      log.v(4).info('Persistent volume is not bound to PVC being updated', { PVC: kObj(pvc) });
      return false;
    }
    return true;
  }

  /** §3.5: the recovery-aware path. */
  private async expandAndRecover(key: string, pvc: Pvc, pv: Pv, signal: AbortSignal): Promise<Outcome> {
    const { slowSet, log } = this.options;
    const { slowSet: slowSetAction, plan } = planExpansion({
      requestedBytes: requestedBytes(pvc),
      pvBytes: pvBytes(pv),
      allocatedBytes: allocatedBytes(pvc),
      resizeStatus: resizeStatus(pvc),
      hasFinalError: this.finalErrorKeys.has(key),
      fileSystemResizePending: isFileSystemResizePending(pvc),
      supportsControlPlaneExpansion: this.options.resizer.supportsControlPlaneExpansion,
      inSlowSet: slowSet.contains(key),
    });
    if (slowSetAction === 'add') slowSet.add(key);
    if (plan.kind !== 'delay' && plan.warnOldApiServer) log.warnf(Message.oldApiServer);

    switch (plan.kind) {
      case 'nothing':
        return { kind: 'done' };
      case 'delay':
        // The user did not change the size since the driver called it infeasible: wait out the slow set.
        log.v(4).infof(Message.infeasibleDelay(key));
        return { kind: 'retryAfter', ms: Math.max(1, slowSet.timeRemaining(key)) };
      case 'expand': {
        if (!plan.rewritesAllocation) log.v(4).infof(`skipping updating status for pvc ${key}`);
        const target: ResizeTarget = { bytes: plan.targetBytes, quantity: quantityFor(pvc, plan.targetBytes) };
        await this.resize(key, pvc, pv, target, this.recoveryWrites(target, plan.rewritesAllocation), signal);
        log.v(4).info('Update capacity of PV succeeded', { PV: kObj(pv), capacity: target });
        return { kind: 'done' };
      }
      default: {
        const unknown: never = plan;
        throw new Error(`unhandled expansion plan ${String((unknown as { kind?: unknown }).kind)}`);
      }
    }
  }

  /** §3.4: the legacy path, when RecoverVolumeExpansionFailure is off. */
  private async legacyResize(key: string, pvc: Pvc, pv: Pv, signal: AbortSignal): Promise<Outcome> {
    const requested = requestedBytes(pvc);
    if (!legacyNeedsResize({ requestedBytes: requested, pvBytes: pvBytes(pv), fileSystemResizePending: isFileSystemResizePending(pvc) })) {
      this.options.log.v(4).info('No need to resize PV', { PV: kObj(pv) });
      return { kind: 'done' };
    }
    await this.resize(key, pvc, pv, { bytes: requested, quantity: quantityFor(pvc, requested) }, this.legacyWrites(), signal);
    return { kind: 'done' };
  }

  /** §3.5 steps 5, 8 and 9: the allocation-aware patches, and a driver failure recorded on the PVC. */
  private recoveryWrites(target: ResizeTarget, rewritesAllocation: boolean): PathWrites {
    return {
      path: 'recovery',
      markResizing: (pvc) => markControllerResizeInProgress(pvc, target.quantity, rewritesAllocation, this.now()),
      markNodeExpansionPending: (pvc) => markNodeExpansionPending(pvc, this.now()),
      markFinished: (pvc, capacity) => markExpansionFinished(pvc, capacity),
      recordFailure: (key, pvc, err, signal) => this.recordControllerFailure(key, pvc, err, signal),
      failed: {
        markResizing: (key) => `marking pvc "${key}" as resizing failed`,
        pvCapacity: (pv) => `error updating pv "${pv}" by resizer`,
        markNodeExpansionPending: (key) => `mark PVC "${key}" as node expansion required failed`,
        markFinished: (key) => `mark PVC "${key}" as resize finished failed`,
      },
    };
  }

  /** §3.4: the condition-only patches; a driver failure is only returned. */
  private legacyWrites(): PathWrites {
    return {
      path: 'legacy',
      markResizing: (pvc) => markResizingLegacy(pvc, this.now()),
      markNodeExpansionPending: (pvc) => markFileSystemResizePendingLegacy(pvc, this.now()),
      markFinished: (pvc, capacity) => markResizeFinishedLegacy(pvc, capacity),
      recordFailure: async () => {},
      failed: {
        markResizing: (key) => `marking pvc "${key}" as resizing failed: Mark PVC "${key}" as resize as in progress failed`,
        pvCapacity: undefined,
        markNodeExpansionPending: (key) => `mark PVC "${key}" as file system resize required failed`,
        markFinished: (key) => `Mark PVC "${key}" as resize finished failed`,
      },
    };
  }

  /**
   * Both paths from the in-progress mark on (§3.4 steps 1–7, §3.5 steps 5–9): mark, in-use guard,
   * `Resizing`, one driver call, the PV capacity, the node-pending or finished mark and its event.
   * Any failure after the guard is recorded as a `VolumeResizeFailed` warning and thrown.
   */
  private async resize(key: string, pvc: Pvc, pv: Pv, target: ResizeTarget, writes: PathWrites, signal: AbortSignal): Promise<void> {
    const { events, log } = this.options;
    const marked = await this.patchStatus(pvc, writes.markResizing(pvc), signal).catch((err: unknown) => {
      throw new Error(`${writes.failed.markResizing(key)}: ${messageOf(err)}`, { cause: err });
    });
    this.guardVolumeInUse(key, marked);
    events.event(marked, 'Normal', EventReason.Resizing, Message.resizing(pv.metadata.name));
    this.inUseErrorUids.delete(marked.metadata.uid ?? '');
    try {
      const result = await this.expandVolume(key, marked, pv, target, writes, signal);
      await this.updatePvCapacity(pv, marked, result, signal).catch((err: unknown) => {
        const prefix = writes.failed.pvCapacity?.(pv.metadata.name);
        throw prefix === undefined ? err : new Error(`${prefix}: ${messageOf(err)}`, { cause: err });
      });
      if (writes.path === 'legacy') log.v(4).info('Update capacity succeeded', { PV: kObj(pv), capacity: formatBytes(result.capacityBytes, 'BinarySI') });
      if (result.nodeExpansionRequired) {
        await this.patchStatus(marked, writes.markNodeExpansionPending(marked), signal).catch((err: unknown) => {
          throw new Error(`${writes.failed.markNodeExpansionPending(key)}: ${messageOf(err)}`, { cause: err });
        });
        log.v(4).info('Mark PVC as file system resize required', { PVC: kObj(marked) });
        events.event(marked, 'Normal', EventReason.FileSystemResizeRequired, Message.fileSystemResizeRequired);
      } else {
        await this.patchStatus(marked, writes.markFinished(marked, result.capacity), signal).catch((err: unknown) => {
          throw new Error(`${writes.failed.markFinished(key)}: ${messageOf(err)}`, { cause: err });
        });
        log.v(4).info('Resize PVC finished', { PVC: kObj(marked) });
        events.event(marked, 'Normal', EventReason.VolumeResizeSuccessful, Message.resizeSuccessful);
      }
    } catch (err) {
      // Every failure is recorded, conflicts included: upstream's legacy path means to skip
      // conflicts, but its errors are formatted with %v on the way up, so its IsConflict never
      // matches and the event is always written.
      events.event(marked, 'Warning', EventReason.VolumeResizeFailed, messageOf(err));
      throw err;
    }
  }

  /**
   * The one ControllerExpandVolume of both paths, and its answer classified (§3.7, §3.8): an
   * implausible size is a failure; `FailedPrecondition` sets the in-use mark; the path records a
   * failure as it does, and the failure is thrown. A success clears the key's failure memory.
   */
  private async expandVolume(key: string, pvc: Pvc, pv: Pv, target: ResizeTarget, writes: PathWrites, signal: AbortSignal): Promise<ResizeResult> {
    const { resizer, log } = this.options;
    let result: ResizeResult;
    try {
      result = await resizer.resize(pv, target, signal);
      if (result.capacityBytes <= 0n || result.capacityBytes < target.bytes) throw new BogusCapacityError(result.capacityBytes, target.bytes);
    } catch (raw) {
      const err = raw instanceof BogusCapacityError ? raw : classifyCsiError(raw, 'expand');
      if (!(err instanceof BogusCapacityError) && err.failure === 'inUse') this.inUseErrorUids.add(pvc.metadata.uid ?? '');
      await writes.recordFailure(key, pvc, err, signal);
      throw new Error(`resize volume "${pv.metadata.name}" by resizer "${resizer.name}" failed: ${err.message}`, { cause: err });
    }
    // Only the recovery path ever fills these; for the legacy path this clears nothing.
    this.finalErrorKeys.delete(key);
    this.options.slowSet.remove(key);
    const legacy = writes.path === 'legacy';
    log
      .v(4)
      .info(legacy ? "Resize volume succeeded start to update PV's capacity" : "Resize volume succeeded, start to update PV's capacity", { PV: kObj(pv) });
    return result;
  }

  /** §3.5 step 8, on error: remember how final it was and say so on the PVC. */
  private async recordControllerFailure(key: string, pvc: Pvc, err: CsiError | BogusCapacityError, signal: AbortSignal): Promise<void> {
    if (err instanceof BogusCapacityError || err.failure !== 'inProgress') {
      this.finalErrorKeys.add(key);
      const infeasible = !(err instanceof BogusCapacityError) && err.failure === 'infeasible';
      if (!infeasible) this.options.slowSet.remove(key);
      try {
        // Not RV-checked: the failure is recorded even from a slightly stale copy.
        await this.patchStatus(pvc, markControllerExpansionFailed(pvc, err.message, infeasible, this.now()), signal);
      } catch (patchErr) {
        throw new Error(
          `resizing failed in controller with ${err.message} but failed to update PVC ${key} with: ` +
            `mark PVC "${key}" as controller expansion failed, errored with: ${messageOf(patchErr)}`,
          { cause: patchErr },
        );
      }
      return;
    }
    // Non-final: the driver may still be working on it; the same target is retried.
    this.options.slowSet.remove(key);
    this.finalErrorKeys.delete(key);
  }

  /** §3.10 and our offline-only rule: don't call the driver for a volume a live pod uses. */
  private guardVolumeInUse(key: string, pvc: Pvc): void {
    const usage = this.options.claimUsage;
    if (!usage?.isInUse(key)) return;
    const offlineOnly = this.options.resizer.expansionMode === 'offline';
    if (!offlineOnly && !this.inUseErrorUids.has(pvc.metadata.uid ?? '')) return;
    const message = Message.inUse(pvc.metadata.namespace ?? '', pvc.metadata.name, this.options.resizer.name);
    this.options.events.event(pvc, 'Warning', EventReason.VolumeResizeFailed, message);
    throw new VolumeInUseError(message);
  }

  /** §3.6: PV capacity, and the pre-resize annotation while the node still has work. */
  private async updatePvCapacity(pv: Pv, pvc: Pvc, result: ResizeResult, signal: AbortSignal): Promise<void> {
    this.options.log.v(4).info("Resize volume succeeded, start to update PV's capacity", { PV: kObj(pv) });
    // The PVC's capacity before the resize; a missing one reads as Go's zero quantity.
    const preResize = this.options.gates.annotateFsResize && result.nodeExpansionRequired ? (pvc.status?.capacity?.[STORAGE] ?? '0') : undefined;
    try {
      await patchPvCached(this.options.api, this.options.pvs, pv.metadata.name, pvCapacityPatch(pv, result.capacity, preResize), signal);
    } catch (err) {
      throw new Error(`updating capacity of PV "${pv.metadata.name}" to ${result.capacity} failed: ${messageOf(err)}`, { cause: err });
    }
  }

  private patchStatus(pvc: Pvc, patch: PvcStatusPatch, signal: AbortSignal): Promise<Pvc> {
    return patchPvcStatusCached(this.options.api, this.options.pvcs, pvc, patch, signal);
  }

  private now(): string {
    return metaTime(this.options.clock.now());
  }

  /** Forgets per-key memory of a deleted PVC (upstream keeps it; we don't need to). */
  forget(key: string, uid: string | undefined): void {
    this.finalErrorKeys.delete(key);
    if (uid) this.inUseErrorUids.delete(uid);
  }
}

/** The target as a quantity string: the PVC's own spelling when it is S or A, else canonical bytes. */
function quantityFor(pvc: Pvc, bytes: bigint): string {
  const spec = pvc.spec.resources?.requests?.[STORAGE];
  if (spec !== undefined && requestedBytes(pvc) === bytes) return spec;
  const allocated = pvc.status?.allocatedResources?.[STORAGE];
  if (allocated !== undefined && allocatedBytes(pvc) === bytes) return allocated;
  return formatBytes(bytes, 'BinarySI');
}
