// One claim key in, auto-grow's decision carried out (docs/auto-grow.md, "The controller"): reads
// the claim, its volume and StorageClass from the caches and its usage from the last poll, decides
// with decision.ts, then writes at most one patch and records what it did (an event with a stable
// reason, a metric, a log line). The patch carries the claim's resourceVersion: a claim changed
// since it was read is not written, and its next version is decided again. A refusal by the API
// server (a ResourceQuota, a LimitRange, an admission plugin) is a Warning and a slow retry; any
// other failed write is thrown, so the queue retries it with backoff.
import type { Clock } from '../base/clock.js';
import { messageOf } from '../base/errors.js';
import type { EventRecorder } from '../kube/api/events.js';
import { KubeApiError } from '../kube/api/errors.js';
import type { ObjectCache } from '../kube/api/volume-api.js';
import type { Pv, Pvc } from '../model/objects.js';
import { formatBytes } from '../model/quantity.js';
import { AutoGrowResult, type AutoGrowMetrics } from '../observability/auto-grow-metrics.js';
import { kObj, type Logger } from '../observability/log/logger.js';
import type { KeyLock } from '../queue/key-lock.js';
import type { Outcome } from '../queue/workers.js';
import { UsageUnavailable, type ClaimUsage } from '../usage/volume-usage.js';
import { growPatch, limitReachedPatch } from './claim-patch.js';
import type { ClaimMemory } from './claim-memory.js';
import { decideAutoGrow, type AutoGrowDecision } from './decision.js';
import { AutoGrowMessage, AutoGrowReason } from './events.js';
import type { AutoGrowDefaults, StorageClassView } from './policy.js';
import type { Triage } from './usage-poll.js';

/** The write port: a JSON merge patch of the PVC itself; returns what the server stored. */
export interface ClaimWriter {
  patchClaim(namespace: string, name: string, patch: Record<string, unknown>, signal: AbortSignal): Promise<Pvc>;
}

export interface AutoGrowReconcilerOptions {
  pvcs: ObjectCache<Pvc>;
  pvs: { get(name: string): Pv | undefined };
  classes: { get(name: string): StorageClassView | undefined };
  /** Whether this resizer serves the claim's volume: its driver (and, with --node-deployment, its node). */
  serves(pv: Pv, pvc: Pvc): boolean;
  /** The usage the last poll read. */
  usage: { usageOf(key: string): ClaimUsage | undefined };
  memory: ClaimMemory;
  /** The resize queue's failure count for the key (its backoff). */
  resizeFailures(key: string): number;
  writer: ClaimWriter;
  events: EventRecorder;
  metrics: AutoGrowMetrics;
  defaults: AutoGrowDefaults;
  /** Shared with the resize and modify controllers: one reconcile of a claim at a time. */
  keyLock: KeyLock;
  clock: Clock;
  log: Logger;
}

type WriteResult = { kind: 'written'; pvc: Pvc } | { kind: 'conflict' } | { kind: 'refused'; message: string };

const done: Outcome = { kind: 'done' };
const size = (bytes: bigint) => formatBytes(bytes, 'BinarySI');

export class AutoGrowReconciler {
  constructor(private readonly o: AutoGrowReconcilerOptions) {}

  /** What a poll does with a claim: measure it, evaluate it without usage (a Warning to give), or leave it. */
  triage(key: string): Triage {
    const found = this.read(key);
    if (found === undefined) return 'skip';
    if (this.o.memory.refusedUntilMs(key, this.o.clock.now()) !== undefined) return 'skip';
    const decision = this.decide(key, found.pvc, undefined);
    if (decision.kind === 'usageUnavailable') return 'measure';
    return decision.kind === 'invalidPolicy' ? 'evaluate' : 'skip';
  }

  reconcile(key: string, signal: AbortSignal): Promise<Outcome> {
    return this.o.keyLock.withKey(key, () => this.reconcileLocked(key, signal));
  }

  /** Drops what is remembered of a deleted claim. */
  forget(key: string): void {
    this.o.memory.forget(key);
  }

  private async reconcileLocked(key: string, signal: AbortSignal): Promise<Outcome> {
    const { memory, log } = this.o;
    const found = this.read(key);
    if (found === undefined) return done;
    const { pvc } = found;
    const usage = this.o.usage.usageOf(key);
    const d = this.decide(key, pvc, usage);
    if (d.kind !== 'invalidPolicy') memory.warnInvalid(key, undefined);
    if (d.kind !== 'usageUnavailable') memory.warnUsage(key, undefined);
    switch (d.kind) {
      case 'notOptedIn':
      case 'notIdle':
      case 'unusableSample':
        log.v(5).info('Auto-grow: nothing to do', { PVC: kObj(pvc), decision: d.kind, reason: 'reason' in d ? d.reason : undefined });
        return done;
      case 'invalidPolicy':
        if (memory.warnInvalid(key, d.message)) {
          this.o.events.event(pvc, 'Warning', AutoGrowReason.InvalidPolicy, d.message);
          log.warn('Auto-grow policy is invalid', { PVC: kObj(pvc), message: d.message });
        }
        return done;
      case 'usageUnavailable':
        this.usageUnavailable(key, pvc, d);
        return done;
      case 'belowThreshold':
        memory.satisfied(key);
        log
          .v(5)
          .info('Auto-grow: enough free space', { PVC: kObj(pvc), available: size(d.evaluation.availableBytes), threshold: size(d.evaluation.thresholdBytes) });
        return done;
      case 'limitReached':
        this.o.metrics.count(AutoGrowResult.LimitReached);
        if (d.notify) await this.reportLimit(key, pvc, d, signal);
        return done;
      case 'cooldown':
        this.noteNeed(key, usage);
        this.o.metrics.count(AutoGrowResult.Cooldown);
        log.v(4).info('Auto-grow: waiting for the cooldown', { PVC: kObj(pvc), nextGrowAllowedAt: new Date(d.nextGrowAllowedAtMs).toISOString() });
        return done;
      case 'grow':
        this.noteNeed(key, usage);
        return this.grow(key, pvc, d, signal);
      default: {
        const unknown: never = d;
        throw new Error(`unhandled auto-grow decision ${String((unknown as { kind?: unknown }).kind)}`);
      }
    }
  }

  /** The claim and its volume from the caches, when this resizer serves them. */
  private read(key: string): { pvc: Pvc; pv: Pv } | undefined {
    const pvc = this.o.pvcs.get(key);
    const volumeName = pvc?.spec.volumeName;
    if (pvc === undefined || !volumeName) return undefined;
    const pv = this.o.pvs.get(volumeName);
    if (pv === undefined || !this.o.serves(pv, pvc)) return undefined;
    return { pvc, pv };
  }

  private decide(key: string, pvc: Pvc, usage: ClaimUsage | undefined): AutoGrowDecision {
    const { o } = this;
    const nowMs = o.clock.now();
    return decideAutoGrow({
      pvc,
      storageClass: pvc.spec.storageClassName ? o.classes.get(pvc.spec.storageClassName) : undefined,
      usage,
      // A claim not yet seen with its limit (an update still on its way): no sample counts yet.
      capacitySeenSinceMs: o.memory.capacitySinceMs(key) ?? nowMs,
      resizeFailures: o.resizeFailures(key),
      nowMs,
      defaults: o.defaults,
    });
  }

  private noteNeed(key: string, usage: ClaimUsage | undefined): void {
    if (usage?.kind === 'sampled') this.o.memory.needed(key, usage.usage.sampledAtMs);
  }

  /** Counted every time; a Warning once per cause, and none while no pod runs it (not mounted, or kubelet has no reading yet). */
  private usageUnavailable(key: string, pvc: Pvc, d: Extract<AutoGrowDecision, { kind: 'usageUnavailable' }>): void {
    if (d.reason === 'notMounted') return;
    this.o.metrics.count(AutoGrowResult.UsageUnavailable);
    if (d.reason === UsageUnavailable.NotReported) return;
    if (this.o.memory.warnUsage(key, d.reason)) this.o.events.event(pvc, 'Warning', AutoGrowReason.UsageUnavailable, d.message);
  }

  private async reportLimit(key: string, pvc: Pvc, d: Extract<AutoGrowDecision, { kind: 'limitReached' }>, signal: AbortSignal): Promise<void> {
    const result = await this.write(key, pvc, limitReachedPatch(pvc, d.limit), signal);
    if (result.kind === 'written') {
      this.o.events.event(result.pvc, 'Warning', AutoGrowReason.LimitReached, AutoGrowMessage.limitReached(d.limit, d.evaluation));
      this.o.log.info('Auto-grow: the claim is at its limit', { PVC: kObj(pvc), limit: d.limit });
    } else if (result.kind === 'refused') {
      const retryAt = this.o.memory.refused(key, this.o.clock.now());
      this.o.log.warn('Auto-grow: cannot record that the claim is at its limit', {
        PVC: kObj(pvc),
        message: result.message,
        retryAt: new Date(retryAt).toISOString(),
      });
    }
  }

  private async grow(key: string, pvc: Pvc, d: Extract<AutoGrowDecision, { kind: 'grow' }>, signal: AbortSignal): Promise<Outcome> {
    const { o } = this;
    const fields = { PVC: kObj(pvc), from: size(d.fromBytes), to: d.request, trigger: d.trigger };
    if (d.dryRun) {
      o.metrics.count(AutoGrowResult.DryRun);
      if (o.memory.noteDryRun(key, d.request)) {
        o.events.event(pvc, 'Normal', AutoGrowReason.DryRun, AutoGrowMessage.dryRun(d.fromBytes, d.request, d.evaluation, d.trigger));
        o.log.info('Auto-grow dry run: the storage request would be raised', fields);
      }
      return done;
    }
    const heldUntil = o.memory.refusedUntilMs(key, o.clock.now());
    if (heldUntil !== undefined) {
      o.log.v(4).info('Auto-grow: a refused request waits before the next attempt', { ...fields, retryAt: new Date(heldUntil).toISOString() });
      return done;
    }
    const result = await this.write(key, pvc, growPatch(pvc, d.request, d.annotations), signal);
    if (result.kind === 'conflict') return done;
    if (result.kind === 'refused') {
      o.metrics.count(AutoGrowResult.Refused);
      const retryAt = o.memory.refused(key, o.clock.now());
      o.events.event(pvc, 'Warning', AutoGrowReason.Refused, AutoGrowMessage.refused(d.request, result.message));
      o.log.warn('Auto-grow: the API server refused the new storage request', { ...fields, message: result.message, retryAt: new Date(retryAt).toISOString() });
      return done;
    }
    o.metrics.count(AutoGrowResult.Grown);
    const neededSinceMs = o.memory.grown(key);
    if (neededSinceMs !== undefined) o.metrics.observeReaction((o.clock.now() - neededSinceMs) / 1000);
    o.events.event(result.pvc, 'Normal', AutoGrowReason.Grown, AutoGrowMessage.grown(d.fromBytes, d.request, d.evaluation, d.trigger));
    o.log.info('Auto-grow raised the storage request', {
      ...fields,
      available: size(d.evaluation.availableBytes),
      filesystem: size(d.evaluation.filesystemBytes),
    });
    return done;
  }

  /**
   * One patch. A conflict (the claim changed since it was read) and a refusal (403, 422: quota,
   * LimitRange, admission, RBAC) are outcomes; anything else is thrown for a retry with backoff.
   */
  private async write(key: string, pvc: Pvc, patch: Record<string, unknown>, signal: AbortSignal): Promise<WriteResult> {
    const namespace = pvc.metadata.namespace ?? '';
    try {
      const updated = await this.o.writer.patchClaim(namespace, pvc.metadata.name, patch, signal);
      this.o.pvcs.writeBack(updated);
      return { kind: 'written', pvc: updated };
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 409) {
        this.o.log.info('Auto-grow: the claim changed since it was read; deciding again from its new version', { PVC: kObj(pvc) });
        return { kind: 'conflict' };
      }
      if (err instanceof KubeApiError && (err.status === 403 || err.status === 422)) return { kind: 'refused', message: err.message };
      throw new Error(`patching PVC ${key}: ${messageOf(err)}`, { cause: err });
    }
  }
}
