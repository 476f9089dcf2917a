// A token bucket with golang.org/x/time/rate's reservation model, on the injected clock: the
// bucket holds up to `burst` tokens and refills at `qps` per second; a caller that finds it empty
// reserves the next token anyway (the balance goes negative) and waits until that token exists,
// so waiters are served in arrival order. An aborted waiter hands its reservation back.
// Used for API requests (--kube-api-qps / --kube-api-burst, kube/wire/http.ts).
import { realClock, type Clock } from './clock.js';
import { abortReason } from './signals.js';

export interface TokenBucketOptions {
  /** Tokens per second; 0 or less (or +Inf) disables limiting. */
  qps: number;
  /** Bucket size; at least 1. */
  burst: number;
  clock?: Clock;
}

export class TokenBucket {
  private tokens: number;
  private lastMs: number;
  private readonly clock: Clock;
  private readonly burst: number;

  constructor(private readonly options: TokenBucketOptions) {
    this.clock = options.clock ?? realClock;
    this.burst = Math.max(1, options.burst);
    this.tokens = this.burst;
    this.lastMs = this.clock.now();
  }

  get unlimited(): boolean {
    return !(this.options.qps > 0) || this.options.qps === Infinity;
  }

  private refill(): void {
    const nowMs = this.clock.now();
    // A clock that steps back (the wall clock can) adds nothing rather than taking tokens away.
    const elapsedMs = Math.max(0, nowMs - this.lastMs);
    this.tokens = Math.min(this.burst, this.tokens + (elapsedMs / 1000) * this.options.qps);
    this.lastMs = nowMs;
  }

  /** Reserves the next token and returns how many ms until it exists (0: available now). */
  reserve(): number {
    if (this.unlimited) return 0;
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.options.qps) * 1000;
  }

  /**
   * Takes a token if one is there now (always true without a limit); false, taking nothing, when
   * the caller would have to wait (then take()). Lets a caller skip the await when nothing waits.
   */
  tryTake(): boolean {
    if (this.unlimited) return true;
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Waits for a token; rejects (and hands the reservation back) when the signal aborts. */
  async take(signal: AbortSignal): Promise<void> {
    if (this.unlimited) return;
    signal.throwIfAborted();
    const waitMs = this.reserve();
    if (waitMs === 0) return;
    try {
      await this.wait(waitMs, signal);
    } catch (err) {
      this.tokens += 1;
      throw err;
    }
  }

  private wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        timer.cancel();
        reject(abortReason(signal));
      };
      // The caller is waiting on this timer, so it keeps the process alive like a plain sleep.
      const timer = this.clock.setTimer(
        () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        ms,
        { keepAlive: true },
      );
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
