// Per-call cancellation linked to long-lived parent signals. We link a child controller by hand
// instead of AbortSignal.any(), which leaks listeners on a process-lifetime signal in several
// Node releases.
import type { Clock, TimerHandle } from './clock.js';
import { MAX_TIMER_DELAY_MS, setLongTimeout } from './long-timer.js';

export class AbortError extends Error {
  constructor(message = 'operation aborted', options?: ErrorOptions) {
    super(message, options);
    this.name = 'AbortError';
  }
}

export class TimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`timed out after ${timeoutMs}ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * What an aborted signal's waiters reject with: its reason when that is an Error (a
 * TimeoutError, the lifecycle's "shutting down"), else an AbortError.
 */
export function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new AbortError();
}

export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Aborts the child only (the parent is untouched). */
  abort(reason?: unknown): void;
  /** Unlinks from the parent and clears the timer; safe to call twice. */
  dispose(): void;
}

/**
 * A child signal aborted when the parent (or any of several parents, with the first one's
 * reason) aborts, or after timeoutMs (if given; on `clock` when given).
 */
export function linkedSignal(parent: AbortSignal | readonly AbortSignal[], timeoutMs?: number, clock?: Clock): LinkedSignal {
  const controller = new AbortController();
  const parents = parent instanceof AbortSignal ? [parent] : parent;
  for (const p of parents) {
    if (p.aborted) {
      controller.abort(p.reason);
      return { signal: controller.signal, abort: () => {}, dispose: () => {} };
    }
  }
  const onParentAbort = (event: Event) => controller.abort((event.target as AbortSignal).reason);
  for (const p of parents) p.addEventListener('abort', onParentAbort, { once: true });
  // A per-request timeout fits one Node timer: set directly, without setLongTimeout's steps.
  let shortTimer: NodeJS.Timeout | undefined;
  let timerHandle: TimerHandle | undefined;
  if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) {
    const onTimeout = () => controller.abort(new TimeoutError(timeoutMs));
    if (clock) {
      timerHandle = clock.setTimer(onTimeout, Math.max(timeoutMs, 0));
    } else if (timeoutMs <= MAX_TIMER_DELAY_MS) {
      shortTimer = setTimeout(onTimeout, Math.max(timeoutMs, 0));
      shortTimer.unref();
    } else {
      timerHandle = setLongTimeout(onTimeout, timeoutMs);
    }
  }
  return {
    signal: controller.signal,
    abort: (reason?: unknown) => controller.abort(reason ?? new AbortError()),
    dispose: () => {
      for (const p of parents) p.removeEventListener('abort', onParentAbort);
      if (shortTimer !== undefined) clearTimeout(shortTimer);
      timerHandle?.cancel();
    },
  };
}

/** Resolves after ms (on `clock` when given), or rejects with the signal's reason once it aborts. */
export function sleep(ms: number, signal?: AbortSignal, clock?: Clock): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = () => {
      timer.cancel();
      if (signal) reject(abortReason(signal));
    };
    const done = () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    };
    // Referenced, like a plain setTimeout: a sleeping loop keeps the process alive.
    const timer = clock ? clock.setTimer(done, ms, { keepAlive: true }) : setLongTimeout(done, ms, { unref: false });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves once `signal` aborts (at once when it already has). */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/**
 * Settles as `promise` does, or rejects with the signal's reason once the signal aborts first.
 * The abort listener is removed when `promise` settles, so a long-lived signal keeps none.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

export function isAbortError(err: unknown): boolean {
  return err instanceof AbortError || (err instanceof Error && err.name === 'AbortError');
}
