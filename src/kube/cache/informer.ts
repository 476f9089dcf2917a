// Our own informer: list and watch one resource into a Store and tell handlers what changed.
// Written instead of client-node 1.4.0's makeInformer because that one stops for good on any error,
// reconnects without backoff, never asks for bookmarks or a watch timeout (so a half-open
// connection goes unnoticed for minutes), has no resync, gives listed and watched objects different
// shapes, doesn't paginate, and lets a throwing handler crash the process (unhandled rejection).
//
// Cut along client-go's seams, each part testable alone: the reflector lists and watches
// (reflector.ts), the cache side turns what arrives into store writes and handler calls
// (applier.ts, over store.ts), the processor hands each change to the handlers and resyncs
// (processor.ts), and the refetcher reads single objects again for a transform that keeps objects
// by state outside them (refetcher.ts). This class puts them together and runs them.
import { realClock } from '../../base/clock.js';
import type { KubeObject } from '../../model/objects.js';
import { CacheApplier } from './applier.js';
import { HandlerProcessor, startResync, type InformerHandlers } from './processor.js';
import { INFORMER_BACKOFF, Reflector, type ReflectorOptions } from './reflector.js';
import { Refetcher } from './refetcher.js';
import type { WritableStore } from './store.js';

export type { InformerHandlers } from './processor.js';
export type { InformerAccessListener } from './reflector.js';

export interface InformerOptions<T extends KubeObject> extends ReflectorOptions {
  /** Keep only what the controller needs; undefined drops the object (treated as absent). `key` is the cache key. */
  transform?: (obj: KubeObject, key: string) => T | undefined;
  /** Periodic update(obj, obj) for every cached object; 0 disables. */
  resyncPeriodMs?: number;
  /** Counts objects skipped because the key function or the transform threw, by resource. */
  skippedObjects?: { inc(labels: { resource: string }): void };
}

export class Informer<T extends KubeObject = KubeObject> {
  readonly store: WritableStore<T>;
  private readonly processor: HandlerProcessor<T>;
  private readonly cache: CacheApplier<T>;
  private readonly reflector: Reflector;
  private readonly refetcher: Refetcher;
  private readonly name: string;
  private running = false;

  constructor(private readonly options: InformerOptions<T>) {
    const { listWatcher, log } = options;
    this.name = listWatcher.resource.resource;
    this.processor = new HandlerProcessor<T>(log, this.name);
    this.cache = new CacheApplier<T>({
      resource: listWatcher.resource,
      transform: options.transform ?? ((o) => o as T),
      processor: this.processor,
      log,
      skippedObjects: options.skippedObjects,
      reads: { delivered: (key, rv) => this.refetcher.delivered(key, rv), relisted: (keys) => this.refetcher.relisted(keys) },
    });
    this.store = this.cache.store;
    const random = options.random ?? Math.random;
    this.reflector = new Reflector({ ...options, random }, this.cache);
    const backoff = { ...INFORMER_BACKOFF, ...options.backoff, random };
    this.refetcher = new Refetcher({ listWatcher, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector, log, backoff }, this.cache);
  }

  /** Handlers registered after the initial sync get add() for every cached object first, as in client-go. */
  addEventHandler(handlers: InformerHandlers<T>): void {
    this.processor.register(handlers, this.cache.synced ? this.store.list() : undefined);
  }

  hasSynced(): boolean {
    return this.cache.synced;
  }

  /** Resolves once the first list is in the store; rejects when the signal aborts first. */
  waitForSync(signal: AbortSignal): Promise<void> {
    return this.cache.waitForSync(signal);
  }

  get resourceVersion(): string {
    return this.cache.resourceVersion;
  }

  /**
   * Reads `key` again outside the watch (a list of that one name, with the informer's selectors)
   * and caches it as the watch would have delivered it, unless the watch has delivered that
   * version or a newer one meanwhile. For a transform whose verdict depends on other state: an
   * object dropped earlier may be kept now. Reads run while run() runs, after the first sync and
   * never during a list (a read after the list sees all the list saw); failures are retried.
   */
  refetch(key: string): void {
    this.refetcher.request(key);
  }

  /**
   * Runs the transform again on the cached objects `match` selects (the transform must accept its
   * own output), for a transform whose verdict depends on other state: an object it no longer
   * keeps leaves the cache and handlers see a delete. A list being gathered is filtered too.
   */
  refilter(match: (obj: T) => boolean): void {
    this.cache.refilter(match);
  }

  /** Runs until the signal aborts; never rejects for API errors (they are logged and retried). */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error(`informer for ${this.name} is already running`);
    this.running = true;
    const resync = startResync(this.options.clock ?? realClock, this.options.resyncPeriodMs ?? 0, () => {
      if (this.cache.synced) this.processor.resync(this.store.list());
    });
    const refetching = this.refetcher.run(signal);
    try {
      await this.reflector.run(signal);
    } finally {
      resync?.cancel();
      this.cache.endList();
      this.refetcher.wake();
      await refetching;
      this.running = false;
    }
  }
}
