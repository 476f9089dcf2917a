// client-go's delaying queue: addAfter(key, ms) adds the key once ms have passed on the injected
// clock. A key waiting twice keeps the earlier time. Every addAfter counts as a retry in
// workqueue_retries_total, as in client-go.
import type { TimerHandle } from '../base/clock.js';
import { WorkQueue, type WorkQueueOptions } from './work-queue.js';

export class DelayingQueue<K = string> extends WorkQueue<K> {
  /** Keys waiting for their time; each has exactly one armed timer. */
  private readonly waiting = new Map<K, { readyAtMs: number; timer: TimerHandle }>();

  constructor(options: WorkQueueOptions = {}) {
    super(options);
  }

  addAfter(key: K, ms: number): void {
    if (this.shuttingDown()) return;
    this.recordRetry();
    if (!(ms > 0)) {
      this.add(key);
      return;
    }
    const readyAtMs = this.clock.now() + ms;
    const existing = this.waiting.get(key);
    if (existing && existing.readyAtMs <= readyAtMs) return;
    existing?.timer.cancel();
    const timer = this.clock.setTimer(() => {
      this.waiting.delete(key);
      this.add(key);
    }, ms);
    this.waiting.set(key, { readyAtMs, timer });
  }

  /** Keys waiting for their delay to pass. */
  waitingCount(): number {
    return this.waiting.size;
  }

  override shutDown(): void {
    this.cancelWaiting();
    super.shutDown();
  }

  private cancelWaiting(): void {
    for (const { timer } of this.waiting.values()) timer.cancel();
    this.waiting.clear();
  }
}
