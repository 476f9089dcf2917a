// Time as a dependency, so queues, backoffs and slow sets are tested with a fake clock
// (test/fakes/fake-clock.ts) instead of real waiting.
import { setLongTimeout } from './long-timer.js';

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls fn once after ms; background timers never keep the process alive. */
  setTimer(fn: () => void, ms: number): TimerHandle;
}

export const realClock: Clock = {
  now: () => Date.now(),
  // Any delay, also beyond Node's 2^31-1 ms limit; unreferenced.
  setTimer: (fn, ms) => setLongTimeout(fn, ms),
};
