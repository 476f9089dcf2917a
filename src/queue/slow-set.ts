// csi-lib-utils' slowset: keys parked after an infeasible error, each with the time it was parked.
// While a key is parked with an unchanged target, the controller waits timeRemaining(key) instead
// of calling the driver again. Entries older than the retention time are gone: checked on every
// access, and swept every purgeIntervalMs while started and not empty (Go purges every 100 ms,
// always; an empty set here holds no timer, so an idle process is not woken 10 times a second)
// so the map does not grow with keys nobody asks about again.
import { realClock, type Clock, type TimerHandle } from '../base/clock.js';

export interface SlowSetOptions {
  /** How long a key stays parked (the resizer's --retry-interval-max). */
  retentionMs: number;
  clock?: Clock;
  purgeIntervalMs?: number;
}

/** What a reconcile needs of a slow set. */
export interface SlowSetView<K = string> {
  add(key: K): unknown;
  contains(key: K): boolean;
  remove(key: K): unknown;
  timeRemaining(key: K): number;
}

export class SlowSet<K = string> implements SlowSetView<K> {
  /** Parked keys and when they were parked; expired entries may linger until the next access or sweep. */
  private readonly parkedAtMs = new Map<K, number>();
  private readonly clock: Clock;
  private readonly retentionMs: number;
  private readonly purgeIntervalMs: number;
  private timer: TimerHandle | undefined;
  private started = false;

  constructor(options: SlowSetOptions) {
    this.clock = options.clock ?? realClock;
    this.retentionMs = options.retentionMs;
    this.purgeIntervalMs = options.purgeIntervalMs ?? 100;
  }

  /** Parks key; keeps the original time if it is already parked. Returns whether it was added. */
  add(key: K): boolean {
    if (this.contains(key)) return false;
    this.parkedAtMs.set(key, this.clock.now());
    this.armSweep();
    return true;
  }

  contains(key: K): boolean {
    const parkedAt = this.parkedAtMs.get(key);
    if (parkedAt === undefined) return false;
    if (this.isExpired(parkedAt, this.clock.now())) {
      this.parkedAtMs.delete(key);
      return false;
    }
    return true;
  }

  remove(key: K): boolean {
    return this.parkedAtMs.delete(key);
  }

  /** Ms until key leaves the set; 0 when it is not parked. */
  timeRemaining(key: K): number {
    if (!this.contains(key)) return 0;
    const parkedAt = this.parkedAtMs.get(key) as number;
    return Math.max(0, this.retentionMs - (this.clock.now() - parkedAt));
  }

  get size(): number {
    this.purgeExpired();
    return this.parkedAtMs.size;
  }

  purgeExpired(): void {
    const now = this.clock.now();
    for (const [key, parkedAt] of this.parkedAtMs) {
      if (this.isExpired(parkedAt, now)) this.parkedAtMs.delete(key);
    }
  }

  /** Starts the periodic sweep (background timer; never keeps the process alive). Idempotent. */
  start(): void {
    this.started = true;
    this.armSweep();
  }

  /** Stops the sweep; a second call does nothing. */
  stop(): void {
    this.started = false;
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** Sweeps every purgeIntervalMs while started and something is parked. */
  private armSweep(): void {
    if (!this.started || this.timer || this.parkedAtMs.size === 0) return;
    this.timer = this.clock.setTimer(() => {
      this.timer = undefined;
      this.purgeExpired();
      this.armSweep();
    }, this.purgeIntervalMs);
  }

  private isExpired(parkedAtMs: number, nowMs: number): boolean {
    // Go removes an entry once time.Since(parked) > retention.
    return nowMs - parkedAtMs > this.retentionMs;
  }
}
