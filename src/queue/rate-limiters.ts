// client-go's rate limiters and the rate-limiting queue built on them. A limiter answers "how long
// should this key wait before its next try" (when), resets a key after success (forget), and says
// how many times a key has failed (numRequeues).
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
