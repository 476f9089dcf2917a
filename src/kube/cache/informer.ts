// Our own reflector + informer: list and watch one resource into a Store and tell handlers what
// changed. Written instead of client-node 1.4.0's makeInformer because that one stops for good on
// any error, reconnects without backoff, never asks for bookmarks or a watch timeout (so a half-open
// connection goes unnoticed for minutes), has no resync, gives listed and watched objects different
// shapes, doesn't paginate, and lets a throwing handler crash the process (unhandled rejection).
//
// The loop, like client-go's reflector:
//   list (paginated, consistent read) → replace the store → watch from the list's resourceVersion
//   (bookmarks on, server timeout 5–10 min at random) → on a clean end, watch again from the last
//   resourceVersion seen → on 410 Gone (HTTP status or ERROR event) relist → on any other error,
//   wait with jittered exponential backoff and resume. A watchdog restarts a watch that delivered
//   nothing (not even a bookmark) for inactivityTimeoutMs.
//
// An object that the key function or the transform cannot handle (fuzzed or malformed JSON: no
// name, a field of the wrong type) is skipped, logged and counted in
// csi_resizer_informer_objects_skipped_total{resource}; the list or watch goes on without it. A
// known object whose new version can't be handled is dropped from the cache (handlers see a
// delete), so no controller acts on a stale copy.
//
// A transform may keep or drop an object by state outside it (--node-deployment keeps the claims
// bound to the PVs of another cache). When that state changes, `refilter` drops cached objects the
// transform no longer keeps, and `refetch` reads one object again (the watch will not resend an
// object it sent while it was dropped) and merges it in resourceVersion order with the watch.
//
// A list or watch the server refuses (403: the identity lacks the rule) is said once, then retried
// with the same backoff without a word until the server accepts one, which is said too: a rule
// missing for hours is one line, not one per retry, and granting it needs no restart. The owner
// may say both in its own words (`access`); without it the informer logs them.
import { Backoff, type BackoffOptions } from '../../base/backoff.js';
import { realClock, type Clock, type TimerHandle } from '../../base/clock.js';
import { abortReason, AbortError, sleep } from '../../base/signals.js';
import type { Logger } from '../../observability/log/logger.js';
import type { KubeList, ListWatcher, WatchOptions } from '../api/client.js';
import { isForbidden, isGone, KubeApiError } from '../api/errors.js';
import type { KubeObject } from '../../model/objects.js';
import { objectKey } from './keys.js';
import { apiVersionOf } from '../api/resources.js';
import { compareResourceVersions, Store, type WritableStore } from './store.js';
import type { WatchEvent } from '../api/watch.js';

export interface InformerHandlers<T extends KubeObject> {
  add?(obj: T): void;
  /** Also called with old === new content on resync and for every surviving object after a relist. */
  update?(oldObj: T, newObj: T): void;
  /** Gets the last object we knew. */
  delete?(obj: T): void;
}

/** Told when the server refuses the informer's list or watch (403) and when it accepts one again. Must not throw. */
export interface InformerAccessListener {
  /** The first refusal since the informer started or was last accepted; the retries after it are silent. */
  refused(err: KubeApiError): void;
  /** The first list or watch the server accepted after a refusal. */
  allowed(): void;
}

export interface InformerOptions<T extends KubeObject> {
  listWatcher: ListWatcher;
  log: Logger;
  /** Watch one namespace only; all namespaces when unset. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Keep only what the controller needs; undefined drops the object (treated as absent). `key` is the cache key. */
  transform?: (obj: KubeObject, key: string) => T | undefined;
  /** Periodic update(obj, obj) for every cached object; 0 disables. */
  resyncPeriodMs?: number;
  pageSize?: number;
  /** Server-side watch timeout is drawn from [min, max] seconds for every watch. */
  watchTimeoutSeconds?: { min: number; max: number };
  /** Restart a watch that delivered no event or bookmark for this long. */
  inactivityTimeoutMs?: number;
  backoff?: BackoffOptions;
  /**
   * Take the initial state from one streamed watch (sendInitialEvents) instead of paginated
   * lists; default true. Falls back to lists by itself when the server does not support it.
   */
  watchList?: boolean;
  clock?: Clock;
  random?: () => number;
  /** Counts objects skipped because the key function or the transform threw, by resource. */
  skippedObjects?: { inc(labels: { resource: string }): void };
  /** Who says that the list or watch is refused and accepted again; default: the informer's own log lines. */
  access?: InformerAccessListener;
  /** Counts every refused (403) list or watch, by resource. */
  refusals?: { inc(labels: { resource: string }): void };
}

/** Raised inside the loop when the resourceVersion we hold is too old for the server. */
class ResourceVersionGone extends Error {}

/** The bookmark annotation that ends the initial events of a watch-list. */
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

const DEFAULTS = {
  pageSize: 500,
  watchTimeoutSeconds: { min: 300, max: 600 },
  inactivityTimeoutMs: 11 * 60_000,
  backoff: { initialMs: 800, maxMs: 30_000, factor: 2, jitter: 1 },
};

/** A watch shorter than this that delivered nothing counts as a failure for backoff purposes. */
const MIN_HEALTHY_WATCH_MS = 1_000;

export class Informer<T extends KubeObject = KubeObject> {
  readonly store: WritableStore<T>;
  private readonly items: Store<T>;
  private readonly handlers: InformerHandlers<T>[] = [];
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly transform: (obj: KubeObject, key: string) => T | undefined;
  private readonly name: string;
  private synced = false;
  private syncWaiters: Array<() => void> = [];
  private lastResourceVersion = '';
  private running = false;
  /** Cleared for good when the server refuses a watch-list request. */
  private watchListSupported: boolean;
  /** The last watch-list reached its initial-events-end bookmark (the store is complete). */
  private initialStateDelivered = false;
  /** The objects of the list (or the watch-list's initial state) being gathered; undefined between lists. */
  private gathering: Map<string, T> | undefined;
  /** Keys waiting to be read again (refetch): read while the informer watches, never during a list. */
  private readonly refetchKeys = new Set<string>();
  /** Reads in flight: per key, the newest resourceVersion the watch has delivered for it since the read was sent. */
  private readonly refetchesInFlight = new Map<string, { newestDelivered?: string }>();
  /** Keys whose cached state came from a read ahead of the watch: the watch's older versions of them are skipped. */
  private readonly aheadOfWatch = new Map<string, string>();
  private wakeRefetcher: (() => void) | undefined;
  /** The server's last answer to a list or watch was a refusal (403), already reported. */
  private refused = false;
  private readonly access: InformerAccessListener;

  constructor(private readonly options: InformerOptions<T>) {
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.transform = options.transform ?? ((o) => o as T);
    this.items = new Store<T>(this.transform);
    this.store = this.items;
    this.name = options.listWatcher.resource.resource;
    this.watchListSupported = options.watchList ?? true;
    this.access = options.access ?? {
      refused: (err) => options.log.warn('List/watch forbidden, retrying quietly until it is allowed', { resource: this.name, err }),
      allowed: () => options.log.info('List/watch allowed again', { resource: this.name }),
    };
  }

  /** Handlers registered after the initial sync get add() for every cached object first, as in client-go. */
  addEventHandler(handlers: InformerHandlers<T>): void {
    this.handlers.push(handlers);
    if (this.synced) for (const obj of this.items.list()) this.callHandler(handlers, 'add', obj);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list is in the store; rejects when the signal aborts first. */
  waitForSync(signal: AbortSignal): Promise<void> {
    if (this.synced) return Promise.resolve();
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

  get resourceVersion(): string {
    return this.lastResourceVersion;
  }

  /**
   * Reads `key` again outside the watch (a list of that one name, with the informer's selectors)
   * and caches it as the watch would have delivered it, unless the watch has delivered that
   * version or a newer one meanwhile. For a transform whose verdict depends on other state: an
   * object dropped earlier may be kept now. Reads run while run() runs, after the first sync and
   * never during a list (a read after the list sees all the list saw); failures are retried.
   */
  refetch(key: string): void {
    this.refetchKeys.add(key);
    this.wakeRefetcher?.();
  }

  /**
   * Runs the transform again on the cached objects `match` selects (the transform must accept its
   * own output), for a transform whose verdict depends on other state: an object it no longer
   * keeps leaves the cache and handlers see a delete. A list being gathered is filtered too.
   */
  refilter(match: (obj: T) => boolean): void {
    if (this.gathering) {
      for (const [key, obj] of [...this.gathering]) {
        if (match(obj) && !this.decode(obj)?.obj) this.gathering.delete(key);
      }
    }
    for (const [key, obj] of [...this.items.entries()]) {
      if (!match(obj) || this.decode(obj)?.obj) continue;
      this.items.delete(key);
      this.aheadOfWatch.delete(key);
      this.emit('delete', obj);
    }
  }

  /** Runs until the signal aborts; never rejects for API errors (they are logged and retried). */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error(`informer for ${this.name} is already running`);
    this.running = true;
    const backoff = new Backoff({ ...DEFAULTS.backoff, ...this.options.backoff, random: this.random });
    const resync = this.startResync();
    const refetching = this.refetchLoop(signal);
    let needList = true;
    try {
      while (!signal.aborted) {
        try {
          if (needList && this.watchListSupported) {
            // One streamed request instead of a page per 500 objects, each waiting for a token of
            // the client's QPS bucket; the stream then goes on as the ordinary watch.
            this.initialStateDelivered = false;
            const outcome = await this.watchListOnce(signal);
            if (outcome !== 'unsupported') {
              needList = false;
              if (outcome === 'healthy') backoff.reset();
              else await sleep(backoff.next(), signal);
              continue;
            }
            this.watchListSupported = false;
            this.options.log.v(2).info('Server does not stream initial events; listing instead', { resource: this.name });
          }
          if (needList) {
            await this.listAndReplace(signal);
            needList = false;
            backoff.reset();
          }
          const healthy = await this.watchOnce(signal);
          if (healthy) backoff.reset();
          else await sleep(backoff.next(), signal);
        } catch (err) {
          if (signal.aborted) break;
          if (err instanceof ResourceVersionGone || isGone(err)) {
            // The server compacted past our resourceVersion: only a fresh list can catch us up.
            this.options.log.v(2).info('Watch resourceVersion too old, relisting', { resource: this.name });
            needList = true;
            continue;
          }
          // A watch-list that broke after its initial state: the store is current up to the last
          // resourceVersion seen, so resume with a plain watch from there (as after any dropped
          // watch) instead of streaming the whole state again.
          if (needList && this.initialStateDelivered) needList = false;
          const delayMs = backoff.next();
          if (err instanceof KubeApiError && isForbidden(err)) this.noteRefused(err);
          else this.options.log.warn('List/watch failed, retrying', { resource: this.name, err, delayMs: Math.round(delayMs) });
          await sleep(delayMs, signal).catch(() => {});
        }
      }
    } finally {
      resync?.cancel();
      this.gathering = undefined;
      this.wakeRefetcher?.();
      await refetching;
      this.running = false;
    }
  }

  /** A refusal: reported when it is the first since the server last accepted a request. */
  private noteRefused(err: KubeApiError): void {
    try {
      this.options.refusals?.inc({ resource: this.name });
    } catch {
      // a metric must not stop the informer
    }
    if (this.refused) return;
    this.refused = true;
    this.access.refused(err);
  }

  /** The server accepted a list or watch: after a refusal, that is reported once. */
  private noteAccepted(): void {
    if (!this.refused) return;
    this.refused = false;
    this.access.allowed();
  }

  private async listAndReplace(signal: AbortSignal): Promise<void> {
    const { resource } = this.options.listWatcher;
    const fresh = (this.gathering = new Map<string, T>());
    let cont: string | undefined;
    let listRv = '';
    do {
      const page: KubeList = await this.options.listWatcher.list(
        {
          namespace: this.options.namespace,
          labelSelector: this.options.labelSelector,
          fieldSelector: this.options.fieldSelector,
          limit: this.options.pageSize ?? DEFAULTS.pageSize,
          continue: cont,
        },
        signal,
      );
      this.noteAccepted();
      for (const raw of page.items ?? []) {
        // List items come without kind/apiVersion; watched objects have them. Fill them in so both
        // paths produce the same shape (the event recorder needs them for involvedObject).
        const decoded = this.decode({ apiVersion: apiVersionOf(resource), kind: resource.kind, ...raw });
        if (decoded?.obj) fresh.set(decoded.key, decoded.obj);
      }
      cont = page.metadata?.continue || undefined;
      listRv = page.metadata?.resourceVersion ?? listRv;
    } while (cont);

    this.replaceAll(fresh, listRv);
  }

  /**
   * Replace, like client-go's DeltaFIFO.Replace: gone objects fire delete with our last copy,
   * new ones add, surviving ones update(old, new) even when unchanged.
   */
  private replaceAll(fresh: ReadonlyMap<string, T>, resourceVersion: string): void {
    this.gathering = undefined;
    // Reads merged ahead of the old watch: the list is the new base; read them again after it.
    for (const key of this.aheadOfWatch.keys()) this.refetchKeys.add(key);
    this.aheadOfWatch.clear();
    const previous = new Map(this.items.entries());
    for (const [key, old] of previous) {
      if (!fresh.has(key)) {
        this.items.delete(key);
        this.emit('delete', old);
      }
    }
    for (const [key, obj] of fresh) {
      const old = previous.get(key);
      this.items.set(key, obj);
      if (old) this.emit('update', old, obj);
      else this.emit('add', obj);
    }
    this.lastResourceVersion = resourceVersion;
    if (!this.synced) {
      this.synced = true;
      for (const wake of this.syncWaiters.splice(0)) wake();
      this.options.log.v(2).info('Informer synced', { resource: this.name, objects: fresh.size });
    }
    this.wakeRefetcher?.();
  }

  /**
   * One watch from the last resourceVersion. Returns true if it was healthy (delivered something or
   * lasted a while) and ended normally; throws ResourceVersionGone or the API error otherwise.
   */
  private async watchOnce(signal: AbortSignal): Promise<boolean> {
    const outcome = await this.stream(signal, { resourceVersion: this.lastResourceVersion }, (event) => this.apply(event));
    return outcome.healthy;
  }

  /**
   * A watch-list: the initial state streamed as ADDED events up to the initial-events-end bookmark
   * (then the store is replaced, as after a list), and changes after that as in watchOnce.
   * 'unsupported' when the server refuses the request or never marks the end of the initial events.
   */
  private async watchListOnce(signal: AbortSignal): Promise<'healthy' | 'unhealthy' | 'unsupported'> {
    const { resource } = this.options.listWatcher;
    let initial: Map<string, T> | undefined = (this.gathering = new Map());
    let outcome: { healthy: boolean };
    try {
      outcome = await this.stream(signal, { resourceVersion: '', sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' }, (event) => {
        if (!initial) return this.apply(event);
        if (event.type === 'BOOKMARK') {
          if (event.object.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true') {
            this.replaceAll(initial, event.object.metadata?.resourceVersion ?? '');
            initial = undefined;
            this.initialStateDelivered = true;
          }
          return;
        }
        if (event.type === 'ADDED' || event.type === 'MODIFIED') {
          const decoded = this.decode({ apiVersion: apiVersionOf(resource), kind: resource.kind, ...event.object });
          if (decoded?.obj) initial.set(decoded.key, decoded.obj);
          else if (decoded) initial.delete(decoded.key);
          return;
        }
        // DELETED or ERROR before the end of the initial state: handle as a watch would.
        this.apply(event);
      });
    } catch (err) {
      // A server without watch-list refuses the parameters (400/405/422). A 403 is not that: an API
      // server that has just restarted answers 403 until its RBAC cache is filled, and client-go
      // falls back for that one attempt only; so it is an error to retry, watch-list included.
      if (err instanceof KubeApiError && [400, 405, 422].includes(err.status) && initial) return 'unsupported';
      throw err;
    }
    if (initial) return signal.aborted ? 'unhealthy' : 'unsupported';
    return outcome.healthy ? 'healthy' : 'unhealthy';
  }

  /** Runs one watch request with the inactivity watchdog, handing every event to onEvent. */
  private async stream(
    signal: AbortSignal,
    options: Pick<WatchOptions, 'resourceVersion' | 'sendInitialEvents' | 'resourceVersionMatch'>,
    onEvent: (event: WatchEvent) => void,
  ): Promise<{ healthy: boolean }> {
    const { min, max } = this.options.watchTimeoutSeconds ?? DEFAULTS.watchTimeoutSeconds;
    const timeoutSeconds = Math.floor(min + this.random() * Math.max(0, max - min));
    const inactivityMs = this.options.inactivityTimeoutMs ?? DEFAULTS.inactivityTimeoutMs;
    // A child of the run signal that the watchdog can abort on its own.
    const call = new AbortController();
    const onParentAbort = () => call.abort(signal.reason);
    signal.addEventListener('abort', onParentAbort, { once: true });
    const startedMs = this.clock.now();
    let delivered = false;
    let watchdogFired = false;
    let watchdog: TimerHandle | undefined;
    const armWatchdog = () => {
      watchdog?.cancel();
      watchdog = this.clock.setTimer(() => {
        watchdogFired = true;
        this.options.log.v(2).info('Watch silent too long, restarting it', { resource: this.name, inactivityMs });
        call.abort(new AbortError('watch inactivity timeout'));
      }, inactivityMs);
    };
    try {
      armWatchdog();
      const events = await this.options.listWatcher.watch(
        {
          namespace: this.options.namespace,
          labelSelector: this.options.labelSelector,
          fieldSelector: this.options.fieldSelector,
          timeoutSeconds,
          allowWatchBookmarks: true,
          ...options,
        },
        call.signal,
      );
      this.noteAccepted();
      for await (const event of events) {
        armWatchdog();
        delivered = true;
        onEvent(event);
      }
      if (signal.aborted) return { healthy: true };
      return { healthy: delivered || this.clock.now() - startedMs >= MIN_HEALTHY_WATCH_MS };
    } catch (err) {
      // The watchdog's own abort is a restart, not an error: resume from the last resourceVersion.
      if (watchdogFired && !signal.aborted) return { healthy: true };
      throw err;
    } finally {
      watchdog?.cancel();
      signal.removeEventListener('abort', onParentAbort);
    }
  }

  private apply(event: WatchEvent): void {
    const rv = resourceVersionOf(event.object);
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED': {
        const decoded = this.decode(event.object);
        if (!decoded) break; // no key at all: nothing we hold can be meant
        const { key, obj } = decoded;
        if (this.refetchesInFlight.size > 0) this.noteDelivered(key, rv);
        const ahead = this.aheadOfWatch.get(key);
        if (ahead !== undefined) {
          // A version older than the one a refetch cached: the watch is catching up.
          if (compareResourceVersions(rv, ahead) < 0) break;
          this.aheadOfWatch.delete(key);
        }
        const old = this.items.get(key);
        if (obj) {
          this.items.set(key, obj);
          if (old) this.emit('update', old, obj);
          else this.emit('add', obj);
        } else if (old) {
          // The transform now filters this object out: to handlers it is as good as deleted.
          this.items.delete(key);
          this.emit('delete', old);
        }
        break;
      }
      case 'DELETED': {
        const key = safeKey(event.object);
        if (key !== undefined) {
          if (this.refetchesInFlight.size > 0) this.noteDelivered(key, rv);
          const ahead = this.aheadOfWatch.get(key);
          // The deletion of an older incarnation than the one a refetch cached (made again since).
          if (ahead !== undefined && compareResourceVersions(rv, ahead) < 0) break;
          this.aheadOfWatch.delete(key);
        }
        const old = key === undefined ? undefined : this.items.get(key);
        if (key !== undefined) this.items.delete(key);
        const last = old ?? this.decode(event.object)?.obj;
        if (last) this.emit('delete', last);
        break;
      }
      case 'BOOKMARK':
        break;
      case 'ERROR': {
        const status = event.object as { code?: number; reason?: string; message?: string };
        if (status.code === 410 || status.reason === 'Expired' || status.reason === 'Gone') throw new ResourceVersionGone();
        throw KubeApiError.fromStatus(status.code ?? 500, status, `watch ${this.name}`);
      }
      default: {
        const unknown: never = event.type;
        throw new Error(`unknown watch event type ${String(unknown)}`);
      }
    }
    if (rv) this.lastResourceVersion = rv;
  }

  private noteDelivered(key: string, rv: string | undefined): void {
    const read = this.refetchesInFlight.get(key);
    if (read && rv !== undefined && compareResourceVersions(rv, read.newestDelivered) > 0) read.newestDelivered = rv;
  }

  /** Reads the keys refetch() asked for, one at a time, while the informer is synced and not listing. */
  private async refetchLoop(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff({ ...DEFAULTS.backoff, ...this.options.backoff, random: this.random });
    while (!signal.aborted) {
      const key = this.synced && !this.gathering ? this.refetchKeys.values().next().value : undefined;
      if (key === undefined) {
        await new Promise<void>((resolve) => {
          const wake = () => {
            signal.removeEventListener('abort', wake);
            this.wakeRefetcher = undefined;
            resolve();
          };
          this.wakeRefetcher = wake;
          signal.addEventListener('abort', wake, { once: true });
        });
        continue;
      }
      this.refetchKeys.delete(key);
      try {
        await this.refetchOne(key, signal);
        backoff.reset();
      } catch (err) {
        if (signal.aborted) break;
        this.refetchKeys.add(key);
        const delayMs = backoff.next();
        this.options.log.warn('Reading an object again failed, retrying', { resource: this.name, key, err, delayMs: Math.round(delayMs) });
        await sleep(delayMs, signal).catch(() => {});
      }
    }
  }

  private async refetchOne(key: string, signal: AbortSignal): Promise<void> {
    const { resource } = this.options.listWatcher;
    const slash = key.indexOf('/');
    const namespace = slash < 0 ? undefined : key.slice(0, slash);
    const name = slash < 0 ? key : key.slice(slash + 1);
    const read: { newestDelivered?: string } = {};
    this.refetchesInFlight.set(key, read);
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
      this.refetchesInFlight.delete(key);
    }
    // A relist began meanwhile: read again after it, as for any read asked for during a list.
    if (this.gathering || !this.synced) {
      this.refetchKeys.add(key);
      return;
    }
    const raw = (page.items ?? []).find((item) => safeKey(item) === key);
    // Gone: the watch's DELETED event takes any cached copy.
    if (!raw) return;
    const rv = resourceVersionOf(raw);
    if (read.newestDelivered !== undefined && compareResourceVersions(rv, read.newestDelivered) <= 0) return;
    const old = this.items.get(key);
    if (old && compareResourceVersions(rv, old.metadata?.resourceVersion) <= 0) return;
    const decoded = this.decode({ apiVersion: apiVersionOf(resource), kind: resource.kind, ...raw });
    if (!decoded) return;
    // The watch has yet to deliver this version: its older ones of this key must not undo the read.
    if (rv !== undefined && compareResourceVersions(rv, this.lastResourceVersion) > 0) this.aheadOfWatch.set(key, rv);
    if (decoded.obj) {
      this.items.set(key, decoded.obj);
      if (old) this.emit('update', old, decoded.obj);
      else this.emit('add', decoded.obj);
    } else if (old) {
      this.items.delete(key);
      this.emit('delete', old);
    }
  }

  /**
   * The cache key and transformed object, `obj` undefined when the transform drops it; undefined
   * when the object can't be handled at all: then it is logged and counted, never thrown.
   */
  private decode(raw: KubeObject): { key: string; obj: T | undefined } | undefined {
    const key = safeKey(raw);
    try {
      if (key === undefined) throw new Error('object has no usable metadata.name');
      const obj = this.transform(raw, key);
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

  private startResync(): TimerHandle | undefined {
    const periodMs = this.options.resyncPeriodMs ?? 0;
    if (!(periodMs > 0)) return undefined;
    let handle: TimerHandle;
    const tick = () => {
      if (this.synced) for (const obj of this.items.list()) this.emit('update', obj, obj);
      handle = this.clock.setTimer(tick, periodMs);
    };
    handle = this.clock.setTimer(tick, periodMs);
    return { cancel: () => handle.cancel() };
  }

  private emit(kind: 'add' | 'delete', obj: T): void;
  private emit(kind: 'update', oldObj: T, newObj: T): void;
  private emit(kind: keyof InformerHandlers<T>, a: T, b?: T): void {
    for (const h of this.handlers) this.callHandler(h, kind, a, b);
  }

  /** A throwing handler is logged and skipped; it never stops the informer or the process. */
  private callHandler(h: InformerHandlers<T>, kind: keyof InformerHandlers<T>, a: T, b?: T): void {
    try {
      if (kind === 'update') h.update?.(a, b as T);
      else h[kind]?.(a);
    } catch (err) {
      this.options.log.error('Informer event handler failed', { resource: this.name, event: kind, key: safeKey(a), err });
    }
  }
}

function safeKey(obj: KubeObject): string | undefined {
  try {
    const meta = obj.metadata;
    if (typeof meta?.name !== 'string' || (meta.namespace !== undefined && typeof meta.namespace !== 'string')) return undefined;
    return objectKey(obj);
  } catch {
    return undefined;
  }
}

function resourceVersionOf(obj: KubeObject): string | undefined {
  try {
    const rv = obj.metadata?.resourceVersion;
    return typeof rv === 'string' ? rv : undefined;
  } catch {
    return undefined;
  }
}
