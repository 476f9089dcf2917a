// client-go's rate limiters and the rate-limiting queue built on them. A limiter answers "how long
// should this key wait before its next try" (when), resets a key after success (forget), and says
// how many times a key has failed (numRequeues).
import { realClock, type Clock } from '../base/clock.js';
import { DelayingQueue } from './delaying-queue.js';
import type { WorkQueueOptions } from './work-queue.js';

export interface RateLimiter<K = string> {
  /** The delay before key's next try, in ms; each call counts as one more failure. */
  when(key: K): number;
  forget(key: K): void;
  numRequeues(key: K): number;
}

/** baseDelayMs × 2^failures, capped at maxDelayMs (the resizer's --retry-interval-start/max). */
export class ItemExponentialFailureRateLimiter<K = string> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();

  constructor(private readonly options: { baseDelayMs: number; maxDelayMs: number }) {}

  when(key: K): number {
    const exponent = this.failures.get(key) ?? 0;
    this.failures.set(key, exponent + 1);
    const delayMs = this.options.baseDelayMs * 2 ** exponent;
    return Number.isFinite(delayMs) && delayMs < this.options.maxDelayMs ? delayMs : this.options.maxDelayMs;
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * An overall token bucket (golang.org/x/time/rate semantics): burst tokens, refilled at qps per
 * second; each when() reserves one token and returns how long until it is available.
 */
export class BucketRateLimiter<K = string> implements RateLimiter<K> {
  private tokens: number;
  private lastMs: number;
  private readonly clock: Clock;

  constructor(private readonly options: { qps: number; burst: number; clock?: Clock }) {
    this.clock = options.clock ?? realClock;
    this.tokens = options.burst;
    this.lastMs = this.clock.now();
  }

  when(_key: K): number {
    const nowMs = this.clock.now();
    const elapsedMs = Math.max(0, nowMs - this.lastMs);
    this.tokens = Math.min(this.options.burst, this.tokens + (elapsedMs / 1000) * this.options.qps);
    this.lastMs = nowMs;
    this.tokens -= 1;
    if (this.tokens >= 0) return 0;
    return this.options.qps > 0 ? (-this.tokens / this.options.qps) * 1000 : Infinity;
  }

  forget(_key: K): void {}

  numRequeues(_key: K): number {
    return 0;
  }
}

/** The longest delay of several limiters; forget resets all of them. */
export class MaxOfRateLimiter<K = string> implements RateLimiter<K> {
  private readonly limiters: readonly RateLimiter<K>[];

  constructor(...limiters: RateLimiter<K>[]) {
    this.limiters = limiters;
  }

  when(key: K): number {
    let delayMs = 0;
    for (const limiter of this.limiters) delayMs = Math.max(delayMs, limiter.when(key));
    return delayMs;
  }

  forget(key: K): void {
    for (const limiter of this.limiters) limiter.forget(key);
  }

  numRequeues(key: K): number {
    let n = 0;
    for (const limiter of this.limiters) n = Math.max(n, limiter.numRequeues(key));
    return n;
  }
}

/** client-go's DefaultControllerRateLimiter: per-item 5 ms … 1000 s, and 10 qps / 100 burst overall. */
export function defaultControllerRateLimiter<K = string>(clock?: Clock): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(
    new ItemExponentialFailureRateLimiter<K>({ baseDelayMs: 5, maxDelayMs: 1_000_000 }),
    new BucketRateLimiter<K>({ qps: 10, burst: 100, ...(clock ? { clock } : {}) }),
  );
}

export interface RateLimitingQueueOptions<K> extends WorkQueueOptions {
  rateLimiter: RateLimiter<K>;
}

export class RateLimitingQueue<K = string> extends DelayingQueue<K> {
  private readonly rateLimiter: RateLimiter<K>;

  constructor(options: RateLimitingQueueOptions<K>) {
    super(options);
    this.rateLimiter = options.rateLimiter;
  }

  /** Adds key after the limiter's delay for it (which counts one more failure). */
  addRateLimited(key: K): void {
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** Resets key's failure count; it does not remove the key from the queue. */
  forget(key: K): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: K): number {
    return this.rateLimiter.numRequeues(key);
  }
}
