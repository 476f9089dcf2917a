// Reads of single objects outside the watch, for a transform that keeps or drops objects by state
// outside them (--node-deployment keeps the claims bound to the PVs of another cache): the watch
// will not resend an object it sent while the transform dropped it, so `request(key)` reads it
// again (a list of that one name, with the informer's selectors) and the cache merges the answer
// in resourceVersion order with the watch. Reads run one at a time, after the first sync and never
// while a list is gathered (a read after the list sees all the list saw); failures are retried
// with backoff.
import { Backoff, type BackoffOptions } from '../../base/backoff.js';
import { sleep } from '../../base/signals.js';
import type { KubeObject } from '../../model/objects.js';
import type { Logger } from '../../observability/log/logger.js';
import type { KubeList, ListWatcher } from '../api/client.js';
import type { WatchDeliveries } from './applier.js';
import { compareResourceVersions } from './store.js';
import { safeKey } from './keys.js';

/** The cache the reads are merged into (the informer's CacheApplier). */
export interface ReadTarget {
  readonly synced: boolean;
  /** A list is being gathered. */
  readonly listing: boolean;
  /** Caches `raw` unless the watch delivered that version or a newer one since the read was sent (`newestDelivered`). */
  mergeRead(key: string, raw: KubeObject, newestDelivered: string | undefined): void;
}

export interface RefetcherOptions {
  listWatcher: ListWatcher;
  labelSelector?: string;
  fieldSelector?: string;
  log: Logger;
  backoff: BackoffOptions;
}

export class Refetcher implements WatchDeliveries {
  /** Keys waiting to be read again: read while the informer watches, never during a list. */
  private readonly keys = new Set<string>();
  /** Reads in flight: per key, the newest resourceVersion the watch has delivered for it since the read was sent. */
  private readonly inFlight = new Map<string, { newestDelivered?: string }>();
  private wakeLoop: (() => void) | undefined;
  private readonly name: string;

  constructor(
    private readonly options: RefetcherOptions,
    private readonly target: ReadTarget,
  ) {
    this.name = options.listWatcher.resource.resource;
  }

  /** Reads `key` again, as soon as the cache is synced and no list is gathered. */
  request(key: string): void {
    this.keys.add(key);
    this.wake();
  }

  /** Lets the loop look again: the cache may be ready for reads, or the run ended. */
  wake(): void {
    this.wakeLoop?.();
  }

  delivered(key: string, resourceVersion: string | undefined): void {
    if (this.inFlight.size === 0) return;
    const read = this.inFlight.get(key);
    if (read && resourceVersion !== undefined && compareResourceVersions(resourceVersion, read.newestDelivered) > 0) read.newestDelivered = resourceVersion;
  }

  relisted(readAhead: readonly string[]): void {
    for (const key of readAhead) this.keys.add(key);
    this.wake();
  }

  /** Reads the keys asked for, one at a time, while the cache is synced and not listing, until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff(this.options.backoff);
    while (!signal.aborted) {
      const key = this.target.synced && !this.target.listing ? this.keys.values().next().value : undefined;
      if (key === undefined) {
        await new Promise<void>((resolve) => {
          const wake = () => {
            signal.removeEventListener('abort', wake);
            this.wakeLoop = undefined;
            resolve();
          };
          this.wakeLoop = wake;
          signal.addEventListener('abort', wake, { once: true });
        });
        continue;
      }
      this.keys.delete(key);
      try {
        await this.readOne(key, signal);
        backoff.reset();
      } catch (err) {
        if (signal.aborted) break;
        this.keys.add(key);
        const delayMs = backoff.next();
        this.options.log.warn('Reading an object again failed, retrying', { resource: this.name, key, err, delayMs: Math.round(delayMs) });
        await sleep(delayMs, signal).catch(() => {});
      }
    }
  }

  private async readOne(key: string, signal: AbortSignal): Promise<void> {
    const slash = key.indexOf('/');
    const namespace = slash < 0 ? undefined : key.slice(0, slash);
    const name = slash < 0 ? key : key.slice(slash + 1);
    const read: { newestDelivered?: string } = {};
    this.inFlight.set(key, read);
    let page: KubeList;
    try {
      page = await this.options.listWatcher.list(
        {
          namespace,
          labelSelector: this.options.labelSelector,
          fieldSelector: [this.options.fieldSelector, `metadata.name=${name}`].filter(Boolean).join(','),
        },
        signal,
      );
    } finally {
      this.inFlight.delete(key);
    }
    // A relist began meanwhile: read again after it, as for any read asked for during a list.
    if (this.target.listing || !this.target.synced) {
      this.keys.add(key);
      return;
    }
    const raw = (page.items ?? []).find((item) => safeKey(item) === key);
    // Gone: the watch's DELETED event takes any cached copy.
    if (raw) this.target.mergeRead(key, raw, read.newestDelivered);
  }
}
