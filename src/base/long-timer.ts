// Timers for any delay a Go duration can hold. Node runs a timer whose delay exceeds 2^31-1 ms
// (about 24.8 days) after 1 ms, so a `--resync-period=600h` would become a hot loop. Every timer
// the program schedules from a flag or a computed backoff goes through setLongTimeout, which
// waits in steps of at most MAX_TIMER_DELAY_MS until the whole delay has passed.

/** A scheduled call that can be called off (the Clock's timers and setLongTimeout's). */
export interface TimerHandle {
  cancel(): void;
}

/** The largest delay Node's setTimeout honours. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

export interface LongTimerOptions {
  /** false keeps the process alive while the timer waits; default true (a background timer). */
  unref?: boolean;
}

/**
 * Calls fn once after ms. Infinity never fires; a negative or NaN delay fires as soon as possible,
 * as Node does for 0. cancel() is safe to call at any time, also twice.
 */
export function setLongTimeout(fn: () => void, ms: number, options: LongTimerOptions = {}): TimerHandle {
  const unref = options.unref ?? true;
  let remainingMs = ms > 0 ? ms : 0;
  let timer: NodeJS.Timeout | undefined;
  let cancelled = false;
  const arm = () => {
    if (remainingMs === Infinity) return;
    // Each step is counted from the previous step's end, not from the wall clock, so a clock
    // jump cannot shorten the wait (Node's timers run on a monotonic clock).
    const stepMs = Math.min(remainingMs, MAX_TIMER_DELAY_MS);
    timer = setTimeout(() => {
      timer = undefined;
      remainingMs -= stepMs;
      if (cancelled) return;
      if (remainingMs > 0) arm();
      else fn();
    }, stepMs);
    if (unref) timer.unref();
  };
  arm();
  return {
    cancel: () => {
      cancelled = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}
