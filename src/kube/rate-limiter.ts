// Client-side token bucket for API requests (--kube-api-qps / --kube-api-burst), written here
// because @kubernetes/client-node 1.4.0 has no client-side throttling at all. Same model as
// client-go's flowcontrol limiter: the bucket holds up to `burst` tokens and refills at `qps` per
// second; a caller that finds it empty reserves the next token (the balance goes negative) and
// sleeps until that token exists, so waiters are served in arrival order. An aborted waiter hands
// its reservation back.
import { sleep } from '../base/signals.js';

export interface RateLimiterOptions {
  /** Tokens per second; 0 or less disables limiting. */
  qps: number;
  /** Bucket size; at least 1. */
  burst: number;
  now?: () => number;
}

export class TokenBucket {
  private tokens: number;
  private lastMs: number;
  private readonly now: () => number;

  constructor(private readonly options: RateLimiterOptions) {
    this.now = options.now ?? (() => performance.now());
    this.tokens = Math.max(1, options.burst);
    this.lastMs = this.now();
  }

  get unlimited(): boolean {
    return !(this.options.qps > 0);
  }

  private refill(): void {
    const now = this.now();
    const burst = Math.max(1, this.options.burst);
    this.tokens = Math.min(burst, this.tokens + ((now - this.lastMs) / 1000) * this.options.qps);
    this.lastMs = now;
  }

  /** Takes a token now if one is available. */
  tryTake(): boolean {
    if (this.unlimited) return true;
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Waits for a token; rejects (and returns the reservation) when the signal aborts. */
  async take(signal: AbortSignal): Promise<void> {
    if (this.unlimited) return;
    signal.throwIfAborted();
    this.refill();
    this.tokens -= 1;
    if (this.tokens >= 0) return;
    const waitMs = (-this.tokens / this.options.qps) * 1000;
    try {
      await sleep(waitMs, signal);
    } catch (err) {
      this.tokens += 1;
      throw err;
    }
  }
}
