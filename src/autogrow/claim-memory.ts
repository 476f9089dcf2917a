// What the auto-grow controller remembers about a claim between polls, in memory. None of it can
// make a claim grow sooner or more than the claim's own state allows (the cooldown and the last
// grow live on the claim, docs/auto-grow.md "State on the claim"); losing it at a restart costs
// at most one poll, a repeated Warning, or one early retry of a refused request:
//  - when the controller first saw the claim at its current status.capacity (a sample must be
//    newer), kept only for claims that carry a storage_limit, so the memory follows opted-in claims;
//  - when a sample first showed the claim needing more (for the reaction-time histogram);
//  - the Warnings already given (the invalid policy's message, the usage failure's reason), so
//    each is given once, not every poll;
//  - a refused request's slow retry: the next attempt waits, doubling up to a bound.
import type { Pvc } from '../model/objects.js';
import { pvcKey } from '../model/pvc.js';
import { TopolvmAnnotation } from './annotations.js';

/** A refused request is tried again after this, doubling on every refusal up to REFUSAL_MAX_MS. */
export const REFUSAL_FIRST_MS = 5 * 60_000;
export const REFUSAL_MAX_MS = 60 * 60_000;

interface Remembered {
  /** status.capacity as the claim spells it, and when it was first seen at that value. */
  capacity: string;
  capacitySinceMs: number;
  /** The sample time of the first sample that needed more since the last grow. */
  neededSinceMs?: number;
  warnedInvalid?: string;
  warnedUsage?: string;
  lastDryRun?: string;
  refusals?: number;
  refusedUntilMs?: number;
}

/** Whether a claim carries pvc-autoresizer's limit: the cheap part of the opt-in, seen on the claim alone. */
export function mayOptIn(pvc: Pvc): boolean {
  return (pvc.metadata.annotations?.[TopolvmAnnotation.StorageLimit] ?? '') !== '';
}

export class ClaimMemory {
  private readonly claims = new Map<string, Remembered>();

  /** Records the claim's capacity as seen now (an informer add or update). */
  observe(pvc: Pvc, nowMs: number): void {
    const key = pvcKey(pvc);
    if (!mayOptIn(pvc)) {
      this.claims.delete(key);
      return;
    }
    const capacity = pvc.status?.capacity?.['storage'] ?? '';
    const known = this.claims.get(key);
    if (known === undefined) this.claims.set(key, { capacity, capacitySinceMs: nowMs });
    else if (known.capacity !== capacity) {
      known.capacity = capacity;
      known.capacitySinceMs = nowMs;
    }
  }

  forget(key: string): void {
    this.claims.delete(key);
  }

  /** Keys of the claims that carry a limit (the candidates a poll looks at). */
  keys(): IterableIterator<string> {
    return this.claims.keys();
  }

  get size(): number {
    return this.claims.size;
  }

  /** When the claim was first seen at its current capacity (undefined: not seen with a limit). */
  capacitySinceMs(key: string): number | undefined {
    return this.claims.get(key)?.capacitySinceMs;
  }

  /** The first time a sample needed more, recorded on the first call since the last grow. */
  needed(key: string, sampledAtMs: number): number {
    const r = this.claims.get(key);
    if (r === undefined) return sampledAtMs;
    r.neededSinceMs ??= sampledAtMs;
    return r.neededSinceMs;
  }

  /** The claim no longer needs more (below the threshold again). */
  satisfied(key: string): void {
    const r = this.claims.get(key);
    if (r) r.neededSinceMs = undefined;
  }

  /** After a grow: the next need starts a new clock, a refusal is forgotten. Returns when the need began. */
  grown(key: string): number | undefined {
    const r = this.claims.get(key);
    if (!r) return undefined;
    const since = r.neededSinceMs;
    r.neededSinceMs = undefined;
    r.refusals = undefined;
    r.refusedUntilMs = undefined;
    r.lastDryRun = undefined;
    return since;
  }

  /** True once per distinct message: whether to give the invalid-policy Warning. */
  warnInvalid(key: string, message: string | undefined): boolean {
    return this.once(key, 'warnedInvalid', message);
  }

  /** True once per distinct failure reason: whether to give the usage Warning (undefined: usage is back). */
  warnUsage(key: string, reason: string | undefined): boolean {
    return this.once(key, 'warnedUsage', reason);
  }

  /** True once per dry-run target: whether to record the dry-run event. */
  noteDryRun(key: string, request: string): boolean {
    return this.once(key, 'lastDryRun', request);
  }

  /** Records a refusal; returns when the next attempt is allowed. */
  refused(key: string, nowMs: number): number {
    const r = this.claims.get(key);
    const refusals = (r?.refusals ?? 0) + 1;
    const untilMs = nowMs + Math.min(REFUSAL_FIRST_MS * 2 ** (refusals - 1), REFUSAL_MAX_MS);
    if (r) {
      r.refusals = refusals;
      r.refusedUntilMs = untilMs;
    }
    return untilMs;
  }

  /** When a refused claim may be tried again (undefined: not held back). */
  refusedUntilMs(key: string, nowMs: number): number | undefined {
    const until = this.claims.get(key)?.refusedUntilMs;
    return until !== undefined && until > nowMs ? until : undefined;
  }

  private once(key: string, field: 'warnedInvalid' | 'warnedUsage' | 'lastDryRun', value: string | undefined): boolean {
    const r = this.claims.get(key);
    if (!r) return value !== undefined;
    const changed = r[field] !== value;
    r[field] = value;
    return changed && value !== undefined;
  }
}
