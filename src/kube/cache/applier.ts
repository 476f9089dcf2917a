// The informer's cache side, as client-go's DeltaFIFO and processDeltas together: what the
// reflector lists and watches, and what the refetcher reads, becomes store writes and handler
// calls. A relist replaces the cache as DeltaFIFO.Replace does. Every object passes the key
// function and the transform here; one that either cannot handle is skipped, logged and counted,
// never thrown, and a known object whose new version cannot be handled leaves the cache (handlers
// see a delete), so no controller acts on a stale copy. A read merged ahead of the watch makes the
// watch's older versions of that key no-ops until the watch catches up.
import { abortReason } from '../../base/signals.js';
import type { KubeObject } from '../../model/objects.js';
import type { Logger } from '../../observability/log/logger.js';
import { apiVersionOf, type ResourceRef } from '../api/resources.js';
import type { WatchEvent } from '../api/watch.js';
import { objectKey, safeKey } from './keys.js';
import type { HandlerProcessor } from './processor.js';
import { compareResourceVersions, resourceVersionOf, Store } from './store.js';

/** A watch event that carries an object (ERROR events are the reflector's). */
export type ChangeEvent = WatchEvent & { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' };

/** Who reads objects outside the watch (the refetcher): told what the watch delivers and when a relist replaced the cache. */
export interface WatchDeliveries {
  /** The watch delivered this version of `key` (a deletion too). */
  delivered(key: string, resourceVersion: string | undefined): void;
  /** A relist replaced the cache; `readAhead` are the keys last read ahead of the old watch, to be read again. */
  relisted(readAhead: readonly string[]): void;
}

export interface CacheApplierOptions<T extends KubeObject> {
  /** Fills in kind and apiVersion, which list items lack; names the informer in logs and metrics. */
  resource: ResourceRef;
  /** Keep only what the controller needs; undefined drops the object (treated as absent). */
  transform: (obj: KubeObject, key: string) => T | undefined;
  processor: HandlerProcessor<T>;
  log: Logger;
  /** Counts objects skipped because the key function or the transform threw, by resource. */
  skippedObjects?: { inc(labels: { resource: string }): void };
  reads?: WatchDeliveries;
}

export class CacheApplier<T extends KubeObject> {
  readonly store: Store<T>;
  private readonly name: string;
  private isSynced = false;
  private syncWaiters: Array<() => void> = [];
  private lastResourceVersion = '';
  /** The objects of the list (or the watch-list's initial state) being gathered; undefined between lists. */
  private gathering: Map<string, T> | undefined;
  /** Keys whose cached state came from a read ahead of the watch: the watch's older versions of them are skipped. */
  private readonly aheadOfWatch = new Map<string, string>();

  constructor(private readonly options: CacheApplierOptions<T>) {
    this.store = new Store<T>(options.transform);
    this.name = options.resource.resource;
  }

  /** The first list is in the store. */
  get synced(): boolean {
    return this.isSynced;
  }

  /** A list is being gathered: reads wait until it replaced the cache. */
  get listing(): boolean {
    return this.gathering !== undefined;
  }

  /** The last resourceVersion a list or the watch delivered: where the next watch starts. */
  get resourceVersion(): string {
    return this.lastResourceVersion;
  }

  /** Resolves once the first list is in the store; rejects when the signal aborts first. */
  waitForSync(signal: AbortSignal): Promise<void> {
    if (this.isSynced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(abortReason(signal));
      const onAbort = () => {
        this.syncWaiters = this.syncWaiters.filter((w) => w !== done);
        reject(abortReason(signal));
      };
      const done = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      this.syncWaiters.push(done);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** A list (or a watch-list's initial state) begins; what `listed` gathers replaces the cache at `replace`. */
  beginList(): void {
    this.gathering = new Map();
  }

  /** One object of the list being gathered; a later version of the same key replaces it. */
  listed(raw: KubeObject): void {
    // List items come without kind/apiVersion; watched objects have them. Fill them in so both
    // paths produce the same shape (the event recorder needs them for involvedObject).
    const decoded = this.decode(this.withKind(raw));
    if (!decoded || !this.gathering) return;
    if (decoded.obj) this.gathering.set(decoded.key, decoded.obj);
    else this.gathering.delete(decoded.key);
  }

  /** The list being gathered is given up (the informer stopped). */
  endList(): void {
    this.gathering = undefined;
  }

  /**
   * Replace, like client-go's DeltaFIFO.Replace: gone objects fire delete with our last copy,
   * new ones add, surviving ones update(old, new) even when unchanged.
   */
  replace(resourceVersion: string): void {
    const fresh = this.gathering ?? new Map<string, T>();
    this.gathering = undefined;
    // Reads merged ahead of the old watch: the list is the new base; read them again after it.
    const readAhead = [...this.aheadOfWatch.keys()];
    this.aheadOfWatch.clear();
    const { processor } = this.options;
    const previous = new Map(this.store.entries());
    for (const [key, old] of previous) {
      if (!fresh.has(key)) {
        this.store.delete(key);
        processor.delete(old);
      }
    }
    for (const [key, obj] of fresh) {
      const old = previous.get(key);
      this.store.set(key, obj);
      if (old) processor.update(old, obj);
      else processor.add(obj);
    }
    this.lastResourceVersion = resourceVersion;
    if (!this.isSynced) {
      this.isSynced = true;
      for (const wake of this.syncWaiters.splice(0)) wake();
      this.options.log.v(2).info('Informer synced', { resource: this.name, objects: fresh.size });
    }
    this.options.reads?.relisted(readAhead);
  }

  /** One watch event after the list. */
  apply(event: ChangeEvent): void {
    const rv = resourceVersionOf(event.object);
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED':
        this.applyChange(event.object, rv);
        break;
      case 'DELETED':
        this.applyDelete(event.object, rv);
        break;
      case 'BOOKMARK':
        break;
      default: {
        const unknown: never = event.type;
        throw new Error(`unknown watch event type ${String(unknown)}`);
      }
    }
    if (rv) this.lastResourceVersion = rv;
  }

  /**
   * Caches `raw`, read outside the watch, as the watch would have delivered it, unless the watch
   * has delivered that version or a newer one meanwhile (`newestDelivered`, since the read was sent).
   */
  mergeRead(key: string, raw: KubeObject, newestDelivered: string | undefined): void {
    const rv = resourceVersionOf(raw);
    if (newestDelivered !== undefined && compareResourceVersions(rv, newestDelivered) <= 0) return;
    const old = this.store.get(key);
    if (old && compareResourceVersions(rv, old.metadata?.resourceVersion) <= 0) return;
    const decoded = this.decode(this.withKind(raw));
    if (!decoded) return;
    // The watch has yet to deliver this version: its older ones of this key must not undo the read.
    if (rv !== undefined && compareResourceVersions(rv, this.lastResourceVersion) > 0) this.aheadOfWatch.set(key, rv);
    this.put(key, old, decoded.obj);
  }

  /**
   * Runs the transform again on the cached objects `match` selects (the transform must accept its
   * own output): an object it no longer keeps leaves the cache and handlers see a delete. A list
   * being gathered is filtered too.
   */
  refilter(match: (obj: T) => boolean): void {
    if (this.gathering) {
      for (const [key, obj] of [...this.gathering]) {
        if (match(obj) && !this.decode(obj)?.obj) this.gathering.delete(key);
      }
    }
    for (const [key, obj] of [...this.store.entries()]) {
      if (!match(obj) || this.decode(obj)?.obj) continue;
      this.store.delete(key);
      this.aheadOfWatch.delete(key);
      this.options.processor.delete(obj);
    }
  }

  private applyChange(raw: KubeObject, rv: string | undefined): void {
    const decoded = this.decode(raw);
    if (!decoded) return; // no key at all: nothing we hold can be meant
    const { key, obj } = decoded;
    this.options.reads?.delivered(key, rv);
    const ahead = this.aheadOfWatch.get(key);
    if (ahead !== undefined) {
      // A version older than the one a refetch cached: the watch is catching up.
      if (compareResourceVersions(rv, ahead) < 0) return;
      this.aheadOfWatch.delete(key);
    }
    // An object the transform now filters out is, to handlers, as good as deleted.
    this.put(key, this.store.get(key), obj);
  }

  private applyDelete(raw: KubeObject, rv: string | undefined): void {
    const key = safeKey(raw);
    if (key !== undefined) {
      this.options.reads?.delivered(key, rv);
      const ahead = this.aheadOfWatch.get(key);
      // The deletion of an older incarnation than the one a refetch cached (made again since).
      if (ahead !== undefined && compareResourceVersions(rv, ahead) < 0) return;
      this.aheadOfWatch.delete(key);
    }
    const old = key === undefined ? undefined : this.store.get(key);
    if (key !== undefined) this.store.delete(key);
    const last = old ?? this.decode(raw)?.obj;
    if (last) this.options.processor.delete(last);
  }

  /** Caches `obj` in place of `old` (add or update), or, when the transform dropped it, removes `old` (delete). */
  private put(key: string, old: T | undefined, obj: T | undefined): void {
    const { processor } = this.options;
    if (obj) {
      this.store.set(key, obj);
      if (old) processor.update(old, obj);
      else processor.add(obj);
    } else if (old) {
      this.store.delete(key);
      processor.delete(old);
    }
  }

  private withKind(raw: KubeObject): KubeObject {
    const { resource } = this.options;
    return { apiVersion: apiVersionOf(resource), kind: resource.kind, ...raw };
  }

  /**
   * The cache key and transformed object, `obj` undefined when the transform drops it; undefined
   * when the object can't be handled at all: then it is logged and counted, never thrown.
   */
  private decode(raw: KubeObject): { key: string; obj: T | undefined } | undefined {
    const key = safeKey(raw);
    try {
      if (key === undefined) throw new Error('object has no usable metadata.name');
      const obj = this.options.transform(raw, key);
      // The cache key comes from the raw object; a transform that renames it is refused.
      if (obj && objectKey(obj) !== key) throw new Error(`transform changed the object's key to ${JSON.stringify(objectKey(obj))}`);
      return { key, obj };
    } catch (err) {
      try {
        this.options.skippedObjects?.inc({ resource: this.name });
      } catch {
        // a metric must not stop the informer
      }
      this.options.log.error('Skipping an object the informer cannot handle', { resource: this.name, key, err });
      return key === undefined ? undefined : { key, obj: undefined };
    }
  }
}
