// A bounded wait for work that is not ours to cancel: the process runner gives in-flight
// reconciles --timeout to drain and the elector its renew deadline to release the Lease, then
// goes on either way. The timer is referenced so the process does not end while the wait runs.
import type { TimerHandle } from './clock.js';
import { setLongTimeout } from './long-timer.js';

/** Waits for `work` but no longer than `ms`; says which came first. Never rejects. */
export async function settleWithin(work: Promise<unknown>, ms: number): Promise<'settled' | 'timedOut'> {
  let timer: TimerHandle | undefined;
  const timeout = new Promise<'timedOut'>((resolve) => {
    // Referenced on purpose: the wait is bounded, and an unreferenced timer would let the event
    // loop end while the caller still awaits the bound.
    timer = setLongTimeout(() => resolve('timedOut'), ms, { unref: false });
  });
  try {
    return await Promise.race([
      work.then(
        () => 'settled' as const,
        () => 'settled' as const,
      ),
      timeout,
    ]);
  } finally {
    timer?.cancel();
  }
}
