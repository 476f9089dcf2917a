// N worker loops over a rate-limiting queue, with controller-runtime's reconcile contract: a key in,
// an Outcome out. The engine, not each reconciler, owns what happens next:
//   done            → forget the key's backoff;
//   retryAfter(ms)  → add the key again after ms, leaving its backoff as it is (the slow-set wait);
//   a thrown error  → tell the caller (onError: a controller logs it in its own words) and add the
//                     key again with backoff.
// No exception escapes a loop. Once the signal aborts, the queue is shut down, no new key is
// started, and runWorkers resolves when the reconciles in flight have finished.
import { setMaxListeners } from 'node:events';
import { untilAborted } from '../base/signals.js';
import type { Logger } from '../observability/log/logger.js';
import type { RateLimitingQueue } from './rate-limiters.js';

export type Outcome = { kind: 'done' } | { kind: 'retryAfter'; ms: number };

export type Reconcile<K> = (key: K, signal: AbortSignal) => Promise<Outcome>;

export interface RunWorkersOptions<K> {
  queue: RateLimitingQueue<K>;
  workers: number;
  reconcile: Reconcile<K>;
  /** Stops taking keys: the queue shuts down and in-flight reconciles are waited for. */
  signal: AbortSignal;
  /**
   * Handed to each reconcile: aborting it cancels work in flight (driver calls, API writes).
   * Defaults to `signal`; graceful shutdown passes a later one so in-flight work can finish.
   */
  cancelSignal?: AbortSignal;
  /** A reconcile threw; the key is requeued with backoff after this returns. Must not throw. */
  onError: (err: unknown, key: K) => void;
  log: Logger;
}

export async function runWorkers<K>(options: RunWorkersOptions<K>): Promise<void> {
  const { queue, signal } = options;
  // Every reconcile in flight links a child to these signals (and unlinks it when done), so N
  // workers legitimately hold N listeners at once; Node would warn past 10.
  setMaxListeners(Math.max(0, options.workers) * 4 + 10, signal, ...(options.cancelSignal ? [options.cancelSignal] : []));
  const onAbort = () => queue.shutDown();
  if (signal.aborted) queue.shutDown();
  else signal.addEventListener('abort', onAbort, { once: true });
  try {
    // Like the Go sidecar's `for range workers`, 0 or fewer workers start no loop: keys queue up
    // and nothing takes them until the signal aborts.
    const loops = Array.from({ length: Math.max(0, options.workers) }, () => workerLoop(options));
    await (loops.length > 0 ? Promise.all(loops) : untilAborted(signal));
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

async function workerLoop<K>(options: RunWorkersOptions<K>): Promise<void> {
  const { queue, signal, log } = options;
  for (;;) {
    const key = await queue.get();
    if (key === undefined) return;
    if (signal.aborted) {
      // Shutting down: keys still queued are left for the next leader.
      queue.done(key);
      continue;
    }
    try {
      const outcome = await options.reconcile(key, options.cancelSignal ?? signal);
      settle(queue, key, outcome);
    } catch (err) {
      options.onError(err, key);
      try {
        queue.addRateLimited(key);
      } catch (queueErr) {
        log.error('Requeue failed', { key: String(key), err: queueErr });
      }
    } finally {
      queue.done(key);
    }
  }
}

function settle<K>(queue: RateLimitingQueue<K>, key: K, outcome: Outcome): void {
  switch (outcome.kind) {
    case 'done':
      queue.forget(key);
      return;
    case 'retryAfter':
      queue.addAfter(key, outcome.ms);
      return;
    default: {
      const unknown: never = outcome;
      throw new Error(`unhandled reconcile outcome ${JSON.stringify(unknown)}`);
    }
  }
}
