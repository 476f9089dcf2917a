// One PVC key in, the resize work it needs done, an outcome out (§3.3–§3.6). Reads the PVC and
// PV from the informer stores, decides with plan.ts, writes through the API, and writes every
// patched object back into its store so the next reconcile never acts on an older copy.
//
// A thrown error means "retry with backoff" (the worker requeues rate-limited); a returned
// `retryAfter` is the infeasible slow path, which waits without growing the backoff.
import { messageOf } from '../base/errors.js';
import { CsiError } from '../csi/errors.js';
import { Annotation, EventReason, Message } from '../model/names.js';
import type { Pv, Pvc } from '../model/objects.js';
import { allocatedBytes, capacityBytes, isFileSystemResizePending, pvBytes, pvClaimedBy, requestedBytes, resizeStatus, STORAGE } from '../model/pvc.js';
import { formatBytes } from '../model/quantity.js';
import { kObj, type Logger } from '../observability/log/logger.js';
import type { Clock } from '../base/clock.js';
import { metaTime } from '../model/time.js';
import type { Outcome } from '../queue/workers.js';
import type { KeyLock } from '../queue/key-lock.js';
import type { SlowSetView } from '../queue/slow-set.js';
import type { EventRecorder } from '../kube/api/events.js';
import { patchPvCached, patchPvcStatusCached, readClaimAndVolume, type ObjectCache, type VolumeApi } from '../kube/api/volume-api.js';
import { planExpansion, pvcNeedsResize } from './plan.js';
import type { Resizer, ResizeResult, ResizeTarget } from './resizer.js';
import type { ClaimUsage } from './in-use.js';
import {
  markControllerExpansionFailed,
  markControllerResizeInProgress,
  markExpansionFinished,
  markNodeExpansionPending,
  pvCapacityPatch,
  removePreResizeAnnotationPatch,
  type PvcStatusPatch,
} from './status.js';

export interface ResizeGates {
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

/** One expansion attempt of one claim, from the in-progress mark on: what each of its steps needs. */
interface ExpandAttempt {
  readonly key: string;
  /** The PVC as last written: the cached copy, then the in-progress mark's answer. */
  readonly pvc: Pvc;
  readonly pv: Pv;
  readonly target: ResizeTarget;
  /** Whether the in-progress mark rewrites allocatedResources and the status (the plan's `rewritesAllocation`). */
  readonly rewritesAllocation: boolean;
  readonly signal: AbortSignal;
}

/** The volume is used by a pod and the driver can't expand it online; retried with backoff. */
export class VolumeInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VolumeInUseError';
  }
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
      log.v(4).info('No need to resize', { PV: kObj(pv) });
      return { kind: 'done' };
    }
    return this.expandAndRecover(key, pvc, pv, signal);
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

  /** §3.5: the recovery-aware path, the only one since upstream v2.3.0 removed the legacy one (§3.4). */
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
        await this.resize({ key, pvc, pv, target, rewritesAllocation: plan.rewritesAllocation, signal });
        log.v(4).info('Update capacity of PV succeeded', { PV: kObj(pv), capacity: target });
        return { kind: 'done' };
      }
      default: {
        const unknown: never = plan;
        throw new Error(`unhandled expansion plan ${String((unknown as { kind?: unknown }).kind)}`);
      }
    }
  }

  /**
   * §3.5 steps 5–9 from the in-progress mark on: mark, in-use guard, `Resizing`, one driver call,
   * the PV capacity, the node-pending or finished mark and its event. Any failure after the guard
   * is recorded as a `VolumeResizeFailed` warning and thrown.
   */
  private async resize(attempt: ExpandAttempt): Promise<void> {
    const { events, log } = this.options;
    const { key, pvc, pv, target, signal } = attempt;
    const marked = await this.patchStatus(pvc, markControllerResizeInProgress(pvc, target.quantity, attempt.rewritesAllocation, this.now()), signal).catch(
      (err: unknown) => {
        throw new Error(`marking pvc "${key}" as resizing failed: ${messageOf(err)}`, { cause: err });
      },
    );
    this.guardVolumeInUse(key, marked);
    events.event(marked, 'Normal', EventReason.Resizing, Message.resizing(pv.metadata.name));
    this.inUseErrorUids.delete(marked.metadata.uid ?? '');
    const expanding: ExpandAttempt = { ...attempt, pvc: marked };
    try {
      const result = await this.expandVolume(expanding);
      await this.updatePvCapacity(expanding, result).catch((err: unknown) => {
        throw new Error(`error updating pv "${pv.metadata.name}" by resizer: ${messageOf(err)}`, { cause: err });
      });
      if (result.nodeExpansionRequired) {
        await this.patchStatus(marked, markNodeExpansionPending(marked, this.now()), signal).catch((err: unknown) => {
          throw new Error(`mark PVC "${key}" as node expansion required failed: ${messageOf(err)}`, { cause: err });
        });
        log.v(4).info('Mark PVC as file system resize required', { PVC: kObj(marked) });
        events.event(marked, 'Normal', EventReason.FileSystemResizeRequired, Message.fileSystemResizeRequired);
      } else {
        await this.patchStatus(marked, markExpansionFinished(marked, result.capacity), signal).catch((err: unknown) => {
          throw new Error(`mark PVC "${key}" as resize finished failed: ${messageOf(err)}`, { cause: err });
        });
        log.v(4).info('Resize PVC finished', { PVC: kObj(marked) });
        events.event(marked, 'Normal', EventReason.VolumeResizeSuccessful, Message.resizeSuccessful);
      }
    } catch (err) {
      events.event(marked, 'Warning', EventReason.VolumeResizeFailed, messageOf(err));
      throw err;
    }
  }

  /**
   * The one ControllerExpandVolume, and its answer (§3.7, §3.8): the port's CsiError says how final
   * a failure was; an implausible size is a failure; `FailedPrecondition` sets the in-use mark; a
   * failure is recorded on the PVC (§3.5 step 8) and thrown. A success clears the key's failure memory.
   */
  private async expandVolume(attempt: ExpandAttempt): Promise<ResizeResult> {
    const { resizer, log } = this.options;
    const { key, pvc, pv, target } = attempt;
    let failure: CsiError | BogusCapacityError;
    try {
      const result = await resizer.resize(pv, target, attempt.signal);
      if (result.capacityBytes > 0n && result.capacityBytes >= target.bytes) {
        this.finalErrorKeys.delete(key);
        this.options.slowSet.remove(key);
        log.v(4).info("Resize volume succeeded, start to update PV's capacity", { PV: kObj(pv) });
        return result;
      }
      failure = new BogusCapacityError(result.capacityBytes, target.bytes);
    } catch (err) {
      // The port rejects with a CsiError only (resizer.ts); anything else is a bug of the port, passed up as it is.
      if (!(err instanceof CsiError)) throw err;
      failure = err;
    }
    if (failure instanceof CsiError && failure.failure === 'inUse') this.inUseErrorUids.add(pvc.metadata.uid ?? '');
    await this.recordControllerFailure(attempt, failure);
    throw new Error(`resize volume "${pv.metadata.name}" by resizer "${resizer.name}" failed: ${failure.message}`, { cause: failure });
  }

  /** §3.5 step 8, on error: remember how final it was and say so on the PVC. */
  private async recordControllerFailure(attempt: ExpandAttempt, err: CsiError | BogusCapacityError): Promise<void> {
    const { key, pvc } = attempt;
    if (err instanceof BogusCapacityError || err.failure !== 'inProgress') {
      this.finalErrorKeys.add(key);
      const infeasible = !(err instanceof BogusCapacityError) && err.failure === 'infeasible';
      if (!infeasible) this.options.slowSet.remove(key);
      try {
        // Not RV-checked: the failure is recorded even from a slightly stale copy.
        await this.patchStatus(pvc, markControllerExpansionFailed(pvc, err.message, infeasible, this.now()), attempt.signal);
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
  private async updatePvCapacity(attempt: ExpandAttempt, result: ResizeResult): Promise<void> {
    const { pv, pvc } = attempt;
    this.options.log.v(4).info("Resize volume succeeded, start to update PV's capacity", { PV: kObj(pv) });
    // The PVC's capacity before the resize; a missing one reads as Go's zero quantity.
    const preResize = this.options.gates.annotateFsResize && result.nodeExpansionRequired ? (pvc.status?.capacity?.[STORAGE] ?? '0') : undefined;
    try {
      await patchPvCached(this.options.api, this.options.pvs, pv.metadata.name, pvCapacityPatch(pv, result.capacity, preResize), attempt.signal);
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
