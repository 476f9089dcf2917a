// client-go's work queue: a key added many times is processed once, and a key is never handed to
// two workers at once. Invariants:
//   - every queued key is dirty and not processing;
//   - a key added while it is processing is only marked dirty, and is queued again by done();
//   - after shutDown() adds are ignored, but keys already queued are still handed out, and get()
//     resolves undefined once the queue is empty.
// Metrics use client-go's workqueue_* names with the queue's name as the `name` label.
import { realClock, type Clock, type TimerHandle } from '../base/clock.js';
import type { WorkqueueMetrics } from '../observability/metrics.js';

export interface WorkQueueOptions {
  /** The `name` label of the workqueue metrics, e.g. "<driver>-pvc". */
  name?: string;
  clock?: Clock;
  metrics?: WorkqueueMetrics;
  /** How often unfinished-work gauges are refreshed (client-go: 500 ms). */
  metricsUpdatePeriodMs?: number;
}

export class WorkQueue<K = string> {
  readonly name: string;
  protected readonly clock: Clock;
  private readonly metrics: QueueMetricsRecorder<K>;

  /** Keys waiting for a worker, in order; entries before `head` are consumed. */
  private queue: K[] = [];
  private head = 0;
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private isShuttingDown = false;
  private getWaiters: Array<() => void> = [];

  constructor(options: WorkQueueOptions = {}) {
    this.name = options.name ?? '';
    this.clock = options.clock ?? realClock;
    this.metrics = new QueueMetricsRecorder<K>(this.name, this.clock, options.metrics, options.metricsUpdatePeriodMs ?? 500);
  }

  add(key: K): void {
    if (this.isShuttingDown || this.dirty.has(key)) return;
    this.metrics.added(key);
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.queue.push(key);
    this.wakeOneGetter();
  }

  /** Keys waiting for a worker (not counting those being processed). */
  len(): number {
    return this.queue.length - this.head;
  }

  /** The next key, once there is one; undefined when the queue is shut down and empty. */
  async get(): Promise<K | undefined> {
    while (this.len() === 0 && !this.isShuttingDown) {
      await new Promise<void>((resolve) => this.getWaiters.push(resolve));
    }
    if (this.len() === 0) return undefined;
    const key = this.queue[this.head] as K;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.metrics.taken(key);
    this.processing.add(key);
    this.dirty.delete(key);
    return key;
  }

  /** Marks key finished; if it was added again meanwhile, it is queued now. */
  done(key: K): void {
    if (!this.processing.delete(key)) return;
    this.metrics.finished(key);
    if (this.dirty.has(key)) {
      this.queue.push(key);
      this.wakeOneGetter();
    }
  }

  /** Ignore new keys and let waiting get() calls finish; does not wait for workers. */
  shutDown(): void {
    this.beginShutdown();
  }

  shuttingDown(): boolean {
    return this.isShuttingDown;
  }

  /** Counts a retry in workqueue_retries_total (used by the delaying queue). */
  protected recordRetry(): void {
    this.metrics.retried();
  }

  private beginShutdown(): void {
    this.isShuttingDown = true;
    this.metrics.stop();
    const waiters = this.getWaiters;
    this.getWaiters = [];
    for (const wake of waiters) wake();
  }

  private wakeOneGetter(): void {
    this.getWaiters.shift()?.();
  }
}

/** client-go's queue metrics provider, bound to one queue name. A no-op without metrics. */
class QueueMetricsRecorder<K> {
  private readonly addedAtMs = new Map<K, number>();
  private readonly startedAtMs = new Map<K, number>();
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(
    private readonly name: string,
    private readonly clock: Clock,
    private readonly metrics: WorkqueueMetrics | undefined,
    private readonly updatePeriodMs: number,
  ) {
    if (metrics) {
      // Create the series at zero, as client-go does on registration.
      metrics.depth.set({ name }, 0);
      metrics.adds.inc({ name }, 0);
      metrics.retries.inc({ name }, 0);
      metrics.unfinishedWorkSeconds.set({ name }, 0);
      metrics.longestRunningProcessorSeconds.set({ name }, 0);
    }
  }

  added(key: K): void {
    if (!this.metrics) return;
    this.metrics.adds.inc({ name: this.name });
    this.metrics.depth.inc({ name: this.name });
    if (!this.addedAtMs.has(key)) this.addedAtMs.set(key, this.clock.now());
  }

  taken(key: K): void {
    if (!this.metrics) return;
    this.metrics.depth.dec({ name: this.name });
    const now = this.clock.now();
    this.startedAtMs.set(key, now);
    this.schedule();
    const addedAt = this.addedAtMs.get(key);
    if (addedAt !== undefined) {
      this.metrics.queueDuration.observe({ name: this.name }, (now - addedAt) / 1000);
      this.addedAtMs.delete(key);
    }
  }

  finished(key: K): void {
    if (!this.metrics) return;
    const startedAt = this.startedAtMs.get(key);
    if (startedAt !== undefined) {
      this.metrics.workDuration.observe({ name: this.name }, (this.clock.now() - startedAt) / 1000);
      this.startedAtMs.delete(key);
    }
  }

  retried(): void {
    this.metrics?.retries.inc({ name: this.name });
  }

  /** Recomputes the in-progress gauges (client-go's updateUnfinishedWork). */
  updateUnfinishedWork(): void {
    if (!this.metrics) return;
    const now = this.clock.now();
    let totalSeconds = 0;
    let longestSeconds = 0;
    for (const startedAt of this.startedAtMs.values()) {
      const seconds = (now - startedAt) / 1000;
      totalSeconds += seconds;
      longestSeconds = Math.max(longestSeconds, seconds);
    }
    this.metrics.unfinishedWorkSeconds.set({ name: this.name }, totalSeconds);
    this.metrics.longestRunningProcessorSeconds.set({ name: this.name }, longestSeconds);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  /**
   * The in-progress gauges are recomputed every updatePeriodMs while a key is being processed,
   * plus once after the last one finished (back to 0). An idle queue holds no timer: client-go
   * ticks forever, which is cheap in Go but a wake-up of the whole event loop here.
   */
  private schedule(): void {
    if (this.stopped || this.timer) return;
    this.timer = this.clock.setTimer(() => {
      this.timer = undefined;
      this.updateUnfinishedWork();
      if (this.startedAtMs.size > 0) this.schedule();
    }, this.updatePeriodMs);
  }
}
