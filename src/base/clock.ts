// Time as a dependency, so queues, backoffs and slow sets are tested with a fake clock
// (test/fakes/fake-clock.ts) instead of real waiting.
import { setLongTimeout, type TimerHandle } from './long-timer.js';

export type { TimerHandle } from './long-timer.js';

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Calls fn once after ms. A background timer (the default) never keeps the process alive;
   * keepAlive is for a caller that is itself waiting on the timer, like a plain setTimeout.
   */
  setTimer(fn: () => void, ms: number, options?: { keepAlive?: boolean }): TimerHandle;
}

/**
 * A monotonic clock in milliseconds, for intervals only. Not `performance.now()`: the global
 * `performance` loads node:perf_hooks on the way to a first resize (docs/performance.md,
 * "Start-up costs behind code choices").
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export const realClock: Clock = {
  now: () => Date.now(),
  // Any delay, also beyond Node's 2^31-1 ms limit; unreferenced unless asked.
  setTimer: (fn, ms, options) => setLongTimeout(fn, ms, { unref: !options?.keepAlive }),
};
