// A Clock whose time moves only when a test says so. advance(ms) fires every timer that falls due,
// in due-time order (ties in creation order), and sets now() to each timer's due time while it runs,
// so code that re-arms timers from inside a callback sees the time it expects.
import type { Clock, TimerHandle } from '../../src/base/clock.js';

interface PendingTimer {
  readonly dueMs: number;
  readonly seq: number;
  readonly fn: () => void;
}

export class FakeClock implements Clock {
  private nowMs: number;
  private seq = 0;
  private readonly timers = new Set<PendingTimer>();

  constructor(startMs = 1_700_000_000_000) {
    this.nowMs = startMs;
  }

  now(): number {
    return this.nowMs;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    const timer: PendingTimer = { dueMs: this.nowMs + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.add(timer);
    return { cancel: () => void this.timers.delete(timer) };
  }

  /** Moves time forward by ms, firing due timers (including ones they schedule) in order. */
  advance(ms: number): void {
    const targetMs = this.nowMs + ms;
    for (;;) {
      const next = this.nextDue();
      if (next === undefined || next.dueMs > targetMs) break;
      this.timers.delete(next);
      this.nowMs = Math.max(this.nowMs, next.dueMs);
      next.fn();
    }
    this.nowMs = targetMs;
  }

  /** Moves time forward and lets promise callbacks triggered by the fired timers run. */
  async advanceAsync(ms: number): Promise<void> {
    this.advance(ms);
    await flushMicrotasks();
  }

  /** How many timers are waiting. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  private nextDue(): PendingTimer | undefined {
    let best: PendingTimer | undefined;
    for (const t of this.timers) {
      if (!best || t.dueMs < best.dueMs || (t.dueMs === best.dueMs && t.seq < best.seq)) best = t;
    }
    return best;
  }
}

/** Lets queued promise continuations run (a macrotask turn). */
export function flushMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
