// The controller engine both controllers run on (§3.1–§3.3, §4.1–§4.3): informer handlers feed
// one rate-limiting queue, and once every informer the controller reads has synced, N worker
// loops hand keys to the controller's reconcile (queue/workers.ts owns what each outcome means).
// A controller is this engine configured with its informers and handlers (`handlers.ts`), its
// reconcile (`reconcile.ts`) and its lifecycle lines; the informers themselves are shared and run
// by the app, so the engine only waits for their first sync.
import type { Informer, InformerHandlers } from '../kube/cache/informer.js';
import type { KubeObject } from '../model/objects.js';
import type { Logger } from '../observability/log/logger.js';
import type { RateLimitingQueue } from '../queue/rate-limiters.js';
import { runWorkers, type Reconcile } from '../queue/workers.js';

/** An informer the controller reads, with the handlers it registers on it (none: cache only). */
export interface WatchedInformer {
  /** Registers the handlers; called once, when the engine is constructed. */
  register(): void;
  waitForSync(signal: AbortSignal): Promise<void>;
}

export function watched<T extends KubeObject>(informer: Informer<T>, handlers?: InformerHandlers<T>): WatchedInformer {
  return {
    register: () => {
      if (handlers) informer.addEventHandler(handlers);
    },
    waitForSync: (signal) => informer.waitForSync(signal),
  };
}

/** What a controller says and does around its run, as upstream's controllers do it. */
export interface ControllerLifecycle {
  /**
   * When the start is announced: before waiting for the caches (upstream's resize controller) or
   * once they have synced (its modify controller). The stop is announced only after a start was.
   */
  readonly announce: 'beforeSync' | 'afterSync';
  starting(): void;
  stopping(): void;
  /** The signal aborted before the caches synced: nothing was worked on. */
  cachesNotSynced(): void;
  /** The caches have synced; runs before the start is announced (when after the sync) and before the first worker. */
  synced?(): void;
  /** A reconcile threw (the key goes back with backoff): said in the controller's words. Must not throw. */
  reconcileFailed(err: unknown, key: string): void;
}

export interface ControllerEngineOptions {
  /** The runnable's name. */
  name: string;
  /** Every informer whose cache the reconcile reads; the workers start once all have synced. */
  informers: readonly WatchedInformer[];
  queue: RateLimitingQueue<string>;
  workers: number;
  reconcile: Reconcile<string>;
  lifecycle: ControllerLifecycle;
  log: Logger;
}

export class ControllerEngine {
  readonly name: string;

  constructor(private readonly options: ControllerEngineOptions) {
    this.name = options.name;
    for (const informer of options.informers) informer.register();
  }

  /** Waits for the caches, then works until `signal` aborts and in-flight reconciles finish (or `cancelSignal` cuts them short). */
  async run(signal: AbortSignal, cancelSignal: AbortSignal = signal): Promise<void> {
    const { informers, lifecycle, log } = this.options;
    let announced = false;
    const announce = () => {
      lifecycle.starting();
      announced = true;
    };
    try {
      if (lifecycle.announce === 'beforeSync') announce();
      try {
        await Promise.all(informers.map((informer) => informer.waitForSync(signal)));
      } catch (err) {
        if (!signal.aborted) throw err;
        lifecycle.cachesNotSynced();
        return;
      }
      lifecycle.synced?.();
      if (!announced) announce();
      await runWorkers({
        queue: this.options.queue,
        workers: this.options.workers,
        reconcile: this.options.reconcile,
        onError: (err, key) => lifecycle.reconcileFailed(err, key),
        signal,
        cancelSignal,
        log,
      });
    } finally {
      if (announced) lifecycle.stopping();
    }
  }
}
