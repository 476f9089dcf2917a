// The auto-grow controller (docs/auto-grow.md, "The controller"): the controller engine configured
// with the PVC handlers of handlers.ts, the caches the decision reads (PVs, StorageClasses, the
// pod cache that says which node mounts a claim) and AutoGrowReconciler, beside the usage poll
// that feeds its queue. Like the resize and modify controllers it runs only on the leader (or on
// every node replica with --node-deployment): the app starts it with the other controllers.
import { ControllerEngine, type WatchedInformer } from '../controller/engine.js';
import type { Logger } from '../observability/log/logger.js';
import type { RateLimitingQueue } from '../queue/rate-limiters.js';
import type { AutoGrowReconciler } from './reconcile.js';
import type { UsagePoll } from './usage-poll.js';

export interface AutoGrowControllerOptions {
  /** Every cache the reconcile and the poll read, with the PVC handlers registered on the claims'. */
  informers: readonly WatchedInformer[];
  queue: RateLimitingQueue<string>;
  reconciler: AutoGrowReconciler;
  poll: UsagePoll;
  workers: number;
  /** What the start line says about the configuration. */
  settings: Readonly<Record<string, unknown>>;
  log: Logger;
}

export class AutoGrowController {
  readonly name = 'auto-grow-controller';
  private readonly engine: ControllerEngine;

  constructor(private readonly o: AutoGrowControllerOptions) {
    const { reconciler, log } = o;
    this.engine = new ControllerEngine({
      name: this.name,
      informers: o.informers,
      queue: o.queue,
      workers: o.workers,
      reconcile: (key, signal) => reconciler.reconcile(key, signal),
      lifecycle: {
        announce: 'afterSync',
        starting: () => log.info('Starting auto-grow controller', o.settings),
        stopping: () => log.info('Shutting down auto-grow controller'),
        cachesNotSynced: () => log.error('Cannot sync the caches of the auto-grow controller'),
        reconcileFailed: (err, key) => log.error('Auto-grow failed; retrying with backoff', { PVC: key, err }),
      },
      log,
    });
  }

  /** Waits for the caches, then polls and works until `signal` aborts and in-flight reconciles finish. */
  async run(signal: AbortSignal, cancelSignal: AbortSignal = signal): Promise<void> {
    const polling = this.pollAfterSync(signal);
    try {
      await this.engine.run(signal, cancelSignal);
    } finally {
      await polling;
    }
  }

  private async pollAfterSync(signal: AbortSignal): Promise<void> {
    try {
      await Promise.all(this.o.informers.map((informer) => informer.waitForSync(signal)));
    } catch {
      return; // aborted before the caches synced: the engine says so
    }
    await this.o.poll.run(signal);
  }
}
