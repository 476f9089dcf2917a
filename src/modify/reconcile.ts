// One PVC key in, the modify work it needs done, an outcome out (§4.3–§4.8). Reads the PVC, PV
// and VolumeAttributesClass from the informer stores, decides with plan.ts, writes through the
// API, and writes every patched PVC and PV back into its store.
//
// Modify and resize of the same PVC don't fight over its status (better than upstream, §4.9):
// both reconcilers hold the shared KeyLock for the whole reconcile, and both write the object
// each patch returned back into the shared PVC cache. So the second reconcile of a PVC starts
// from the first one's result: its resourceVersion-checked patches carry the current
// resourceVersion and succeed, instead of failing with 409 Conflict and being retried with
// backoff (upstream's two controllers race on the same object and its modify controller doesn't
// write back, which turns every overlap into a Conflict retry).
//
// A thrown error means "retry with backoff"; `retryAfter` is the infeasible slow path.
import { messageOf } from '../base/errors.js';
import { CsiError } from '../csi/errors.js';
import type { Clock } from '../base/clock.js';
import { metaTime } from '../model/time.js';
import { EventReason, Message, ModifyStatus } from '../model/names.js';
import type { VolumeScope } from '../model/volume-scope.js';
import type { Pv, Pvc, VolumeAttributesClass } from '../model/objects.js';
import { pvcKey } from '../model/pvc.js';
import { goQuote } from '../base/go-quote.js';
import { kObj, type Logger } from '../observability/log/logger.js';
import type { KeyLock } from '../queue/key-lock.js';
import type { SlowSetView } from '../queue/slow-set.js';
import type { EventRecorder } from '../kube/api/events.js';
import { patchPvCached, patchPvcStatusCached, readClaimAndVolume, type ObjectCache, type VolumeApi } from '../kube/api/volume-api.js';
import type { Outcome } from '../queue/workers.js';
import type { Modifier } from './modifier.js';
import { modifyFacts, planModify } from './plan.js';
import {
  markModifyCanceled,
  markModifyCompleted,
  markModifyFailed,
  markModifyInProgress,
  markModifyPending,
  pvClassPatch,
  type PvcStatusPatch,
} from './status.js';

export interface ModifyReconcilerOptions {
  modifier: Modifier;
  pvcs: ObjectCache<Pvc>;
  pvs: ObjectCache<Pv>;
  /** VolumeAttributesClasses by name (the VAC informer's store). */
  classes: { get(name: string): VolumeAttributesClass | undefined };
  api: VolumeApi;
  events: EventRecorder;
  /** Infeasible targets, parked for --retry-interval-max. */
  slowSet: SlowSetView;
  /** Shared with the resize controller: one reconcile per PVC at a time across both. */
  keyLock: KeyLock;
  clock: Clock;
  log: Logger;
  /** The volumes this replica acts on (--node-deployment: its node's); every volume by default. */
  scope?: VolumeScope;
}

/** One ControllerModifyVolume attempt of one claim: what each of its steps needs. */
interface ModifyAttempt {
  readonly key: string;
  /** The PVC as last written (the InProgress mark's answer when one was written). */
  readonly pvc: Pvc;
  readonly pv: Pv;
  readonly vac: VolumeAttributesClass;
  /** The class name the attempt applies. */
  readonly target: string;
  readonly signal: AbortSignal;
}

/** The class a retried modify needs is gone from the cache (upstream's lister error, wrapped as upstream does). */
export class MissingClassError extends Error {
  constructor(readonly className: string) {
    super(`get VAC with vac name ${className} in VACInformer cache failed: volumeattributesclass.storage.k8s.io "${className}" not found`);
    this.name = 'MissingClassError';
  }
}

export class ModifyReconciler {
  /**
   * Keys whose last ControllerModifyVolume ended with a non-final error, plus the PVCs found
   * InProgress at startup: the driver may still be applying their target, so it is retried
   * until it definitively succeeds or fails, whatever the PVC asks for meanwhile.
   */
  private readonly uncertainKeys = new Set<string>();

  constructor(private readonly options: ModifyReconcilerOptions) {}

  reconcile(key: string, signal: AbortSignal): Promise<Outcome> {
    return this.options.keyLock.withKey(key, () => this.reconcileLocked(key, signal));
  }

  /** §4.1 startup: a PVC left InProgress by an earlier run may still be changing at the driver. */
  seedUncertain(pvcs: Iterable<Pvc>): number {
    let seeded = 0;
    for (const pvc of pvcs) {
      if (pvc.status?.modifyVolumeStatus?.status !== ModifyStatus.InProgress) continue;
      this.uncertainKeys.add(pvcKey(pvc));
      seeded += 1;
    }
    return seeded;
  }

  isUncertain(key: string): boolean {
    return this.uncertainKeys.has(key);
  }

  /** Forgets the memory of a deleted PVC (upstream keeps it; a new PVC of that name owes it nothing). */
  forget(key: string): void {
    this.uncertainKeys.delete(key);
    this.options.slowSet.remove(key);
  }

  private async reconcileLocked(key: string, signal: AbortSignal): Promise<Outcome> {
    const { pvcs, pvs, log } = this.options;
    log.v(4).info('Started PVC processing for modify controller', { key });
    const found = readClaimAndVolume(key, {
      pvcs,
      pvs,
      log,
      pvNotFound: (pvName) => new Error(`Get PV "${pvName}" of pvc "${key}" in PVInformer cache failed: persistentvolume "${pvName}" not found`),
    });
    if (!found) return { kind: 'done' };
    const { pvc, pv } = found;
    // Only CSI volumes of this driver; migrated in-tree volumes are never modified.
    if (pv.spec.csi?.driver !== this.options.modifier.name) {
      log.v(7).info('Skipping PV provisioned by different driver', { PV: kObj(pv) });
      return { kind: 'done' };
    }
    if (this.options.scope && !this.options.scope.includes(pv)) return { kind: 'done' };
    if (pvc.status?.phase !== 'Bound') {
      log.v(4).info('No need to modify PV', { PV: kObj(pv) });
      return { kind: 'done' };
    }
    return this.modify(key, pvc, pv, signal);
  }

  /** §4.4 */
  private async modify(key: string, pvc: Pvc, pv: Pv, signal: AbortSignal): Promise<Outcome> {
    const { slowSet, log } = this.options;
    const { slowSet: slowSetAction, plan } = planModify(modifyFacts(pvc, slowSet.contains(key), this.uncertainKeys.has(key)));
    switch (slowSetAction) {
      case 'remove':
        slowSet.remove(key);
        break;
      case 'add':
        slowSet.add(key);
        break;
      case 'leave':
        break;
      default: {
        const unknown: never = slowSetAction;
        throw new Error(`unhandled slow-set action ${String(unknown)}`);
      }
    }

    switch (plan.kind) {
      case 'delay':
        // Unlike upstream (which requeues with the growing per-key backoff and wakes up for
        // nothing several times), wait exactly until the slow-set entry expires.
        log.v(4).infof(Message.modifyInfeasibleDelay(key));
        return { kind: 'retryAfter', ms: Math.max(1, slowSet.timeRemaining(key)) };
      case 'nothing':
        if (plan.why === 'class cleared, nothing to cancel') log.v(4).info('stop reconcile for rolled back PVC', { PV: kObj(pv) });
        return { kind: 'done' };
      case 'cancel':
        log.v(4).info('stop reconcile for rolled back PVC', { PV: kObj(pv) });
        this.options.events.event(pvc, 'Normal', EventReason.VolumeModifyCanceled, Message.modifyCanceled);
        await this.patchStatus(pvc, markModifyCanceled(pvc), signal).catch((err: unknown) => {
          throw new Error(`mark PVC "${pvc.metadata.name}" as rolled back failed: ${messageOf(err)}`, { cause: err });
        });
        return { kind: 'done' };
      case 'retryPrevious': {
        // Keep the previous target: no InProgress re-mark and no VolumeModify event.
        const vac = this.options.classes.get(plan.target);
        if (!vac) {
          this.options.events.event(pvc, 'Warning', EventReason.VolumeModifyFailed, Message.vacMissing(plan.target));
          throw new MissingClassError(plan.target);
        }
        await this.callDriver({ key, pvc, pv, vac, target: plan.target, signal });
        return { kind: 'done' };
      }
      case 'modify': {
        const vac = this.options.classes.get(plan.target);
        if (!vac) {
          // Pending, and no retry: the class's creation brings the key back (handlers.ts).
          this.options.events.event(pvc, 'Warning', EventReason.VolumeModifyFailed, Message.vacMissing(plan.target));
          await this.markStatus(pvc, markModifyPending(pvc), signal);
          return { kind: 'done' };
        }
        const marked = await this.markStatus(pvc, markModifyInProgress(pvc, plan.target, this.now()), signal);
        this.options.events.event(marked, 'Normal', EventReason.VolumeModify, Message.modifying(pvc.metadata.name, plan.target));
        await this.callDriver({ key, pvc: marked, pv, vac, target: plan.target, signal });
        return { kind: 'done' };
      }
      default: {
        const unknown: never = plan;
        throw new Error(`unhandled modify plan ${JSON.stringify(unknown)}`);
      }
    }
  }

  /** §4.5 and §4.6: one ControllerModifyVolume and what its result means for the PVC and PV. */
  private async callDriver(attempt: ModifyAttempt): Promise<void> {
    const { log } = this.options;
    const { key, pvc, pv, target, signal } = attempt;
    try {
      await this.options.modifier.modify(pv, pvc, attempt.vac, signal);
    } catch (err) {
      // The port rejects with a CsiError only (modifier.ts); anything else is a bug of the port, passed up as it is.
      if (!(err instanceof CsiError)) throw err;
      if (err.code === null) {
        // No gRPC status (secret lookup, no volume handle, shutdown): no status change, no event.
        throw new Error(`cannot get error status from modify volume err: ${err.message}`, { cause: err });
      }
      await this.recordDriverFailure(attempt, err);
      throw err;
    }

    this.uncertainKeys.delete(key);
    this.options.slowSet.remove(key);
    try {
      // The PV first: once it names the class, a failed PVC write is repaired by the retry.
      await patchPvCached(this.options.api, this.options.pvs, pv.metadata.name, pvClassPatch(pv, target), signal).catch((err: unknown) => {
        throw new Error(`update pv.Spec.VolumeAttributesClassName for PVC "${pvc.metadata.name}" failed, errored with: ${messageOf(err)}`, { cause: err });
      });
      await this.patchStatus(pvc, markModifyCompleted(pvc, target), signal).catch((err: unknown) => {
        throw new Error(`mark PVC "${pvc.metadata.name}" as ModifyVolumeCompleted failed, errored with: ${messageOf(err)}`, { cause: err });
      });
    } catch (err) {
      // Upstream's words, trailing space included; it is returned as a non-gRPC error, so no event.
      throw new Error(
        `cannot get error status from modify volume err: modify volume failed to mark pvc ${pvc.metadata.name} modify volume completed: ${messageOf(err)} `,
        { cause: err },
      );
    }
    log.v(4).infof(`Update volumeAttributesClass of PV ${goQuote(pv.metadata.name)} to ${target} succeeded`);
    this.options.events.event(pvc, 'Normal', EventReason.VolumeModifySuccessful, Message.modifySuccessful(pvc.metadata.name, target));
  }

  /** §4.6, a gRPC error: remember how final it was, say so on the PVC, park infeasible targets. */
  private async recordDriverFailure(attempt: ModifyAttempt, err: CsiError): Promise<void> {
    const { key, pvc, target, signal } = attempt;
    const final = err.failure !== 'inProgress';
    if (final) this.uncertainKeys.delete(key);
    else this.uncertainKeys.add(key);
    const status = err.failure === 'infeasible' ? ModifyStatus.Infeasible : ModifyStatus.InProgress;
    // A failed status write is returned instead of the driver's error (and no event is recorded).
    await this.markStatus(
      pvc,
      markModifyFailed(
        pvc,
        {
          target,
          status,
          final,
          codeName: err.codeName,
          details: err.details,
        },
        this.now(),
      ),
      signal,
    );
    if (status === ModifyStatus.Infeasible) this.options.slowSet.add(key);
    const text = final ? err.message : `${err.message}. Still modifying to VAC ${target}`;
    this.options.events.event(pvc, 'Warning', EventReason.VolumeModifyFailed, text);
  }

  private patchStatus(pvc: Pvc, patch: PvcStatusPatch, signal: AbortSignal): Promise<Pvc> {
    return patchPvcStatusCached(this.options.api, this.options.pvcs, pvc, patch, signal);
  }

  /** Pending, InProgress or a failure: upstream's markControllerModifyVolumeStatus, with its error text. */
  private markStatus(pvc: Pvc, patch: PvcStatusPatch, signal: AbortSignal): Promise<Pvc> {
    return this.patchStatus(pvc, patch, signal).catch((err: unknown) => {
      throw new Error(`mark PVC "${pvc.metadata.name}" as modify volume failed, errored with: ${messageOf(err)}`, { cause: err });
    });
  }

  private now(): string {
    return metaTime(this.options.clock.now());
  }
}
