// The informer's reflector, as client-go's: list and watch one resource and hand what arrives to
// the cache side (ReflectorTarget), which it never reads from but for the resourceVersion to watch
// from. The loop:
//   list (paginated, consistent read) → replace the cache → watch from the list's resourceVersion
//   (bookmarks on, server timeout 5–10 min at random) → on a clean end, watch again from the last
//   resourceVersion seen → on 410 Gone (HTTP status or ERROR event) relist → on any other error,
//   wait with jittered exponential backoff and resume. A watchdog restarts a watch that delivered
//   nothing (not even a bookmark) for inactivityTimeoutMs. The initial state comes from one
//   streamed watch-list where the server supports it, from paginated lists where not.
//
// A list or watch the server refuses (403: the identity lacks the rule) is said once, then retried
// with the same backoff without a word until the server accepts one, which is said too: a rule
// missing for hours is one line, not one per retry, and granting it needs no restart. The owner
// may say both in its own words (`access`); without it the reflector logs them.
import { Backoff, type BackoffOptions } from '../../base/backoff.js';
import { realClock, type Clock, type TimerHandle } from '../../base/clock.js';
import { AbortError, sleep } from '../../base/signals.js';
import type { KubeObject } from '../../model/objects.js';
import type { Logger } from '../../observability/log/logger.js';
import type { KubeList, ListWatcher, WatchOptions } from '../api/client.js';
import { RefusalRun, type AccessListener } from '../api/refusals.js';
import { isForbidden, isGone, KubeApiError } from '../api/errors.js';
import type { WatchEvent } from '../api/watch.js';
import type { ChangeEvent } from './applier.js';

/** Told when the server refuses the informer's list or watch (403) and when it accepts one again. */
export type InformerAccessListener = AccessListener;

/** Where the reflector puts what it lists and watches (the informer's CacheApplier). */
export interface ReflectorTarget {
  /** The last resourceVersion delivered: the next watch starts there. */
  readonly resourceVersion: string;
  beginList(): void;
  listed(raw: KubeObject): void;
  /** The list is complete at `resourceVersion`: it replaces the cache. */
  replace(resourceVersion: string): void;
  apply(event: ChangeEvent): void;
}

export interface ReflectorOptions {
  listWatcher: ListWatcher;
  log: Logger;
  /** Watch one namespace only; all namespaces when unset. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
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
  /** Who says that the list or watch is refused and accepted again; default: the reflector's own log lines. */
  access?: InformerAccessListener;
  /** Counts every refused (403) list or watch, by resource. */
  refusals?: { inc(labels: { resource: string }): void };
}

/** The backoff between failed lists and watches (and failed reads of the refetcher). */
export const INFORMER_BACKOFF = { initialMs: 800, maxMs: 30_000, factor: 2, jitter: 1 };

const DEFAULTS = {
  pageSize: 500,
  watchTimeoutSeconds: { min: 300, max: 600 },
  inactivityTimeoutMs: 11 * 60_000,
};

/** A watch shorter than this that delivered nothing counts as a failure for backoff purposes. */
const MIN_HEALTHY_WATCH_MS = 1_000;

/** The bookmark annotation that ends the initial events of a watch-list. */
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/** Raised inside the loop when the resourceVersion we hold is too old for the server. */
class ResourceVersionGone extends Error {}

export class Reflector {
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly name: string;
  /** Cleared for good when the server refuses a watch-list request. */
  private watchListSupported: boolean;
  /** The last watch-list reached its initial-events-end bookmark (the cache is complete). */
  private initialStateDelivered = false;
  /** The refusals since the server last accepted a list or watch, said once. */
  private readonly refusals: RefusalRun;
  /** The cache needs the whole state again (at the start, and after 410 Gone). */
  private needList = true;

  constructor(
    private readonly options: ReflectorOptions,
    private readonly target: ReflectorTarget,
  ) {
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.name = options.listWatcher.resource.resource;
    this.watchListSupported = options.watchList ?? true;
    this.refusals = new RefusalRun(
      options.access ?? {
        refused: (err) => options.log.warn('List/watch forbidden, retrying quietly until it is allowed', { resource: this.name, err }),
        allowed: () => options.log.info('List/watch allowed again', { resource: this.name }),
      },
    );
  }

  /** Runs until the signal aborts; never rejects for API errors (they are logged and retried). */
  async run(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff({ ...INFORMER_BACKOFF, ...this.options.backoff, random: this.random });
    this.needList = true;
    while (!signal.aborted) {
      try {
        await this.syncOnce(backoff, signal);
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof ResourceVersionGone || isGone(err)) {
          // The server compacted past our resourceVersion: only a fresh list can catch us up.
          this.options.log.v(2).info('Watch resourceVersion too old, relisting', { resource: this.name });
          this.needList = true;
          continue;
        }
        // A watch-list that broke after its initial state: the cache is current up to the last
        // resourceVersion seen, so resume with a plain watch from there (as after any dropped
        // watch) instead of streaming the whole state again.
        if (this.needList && this.initialStateDelivered) this.needList = false;
        const delayMs = backoff.next();
        if (isForbidden(err)) this.countRefusal();
        if (!this.refusals.noteError(err)) this.options.log.warn('List/watch failed, retrying', { resource: this.name, err, delayMs: Math.round(delayMs) });
        await sleep(delayMs, signal).catch(() => {});
      }
    }
  }

  /** One turn of the loop: the initial state when a list is needed, then one watch. */
  private async syncOnce(backoff: Backoff, signal: AbortSignal): Promise<void> {
    if (this.needList && this.watchListSupported) {
      // One streamed request instead of a page per 500 objects, each waiting for a token of
      // the client's QPS bucket; the stream then goes on as the ordinary watch.
      this.initialStateDelivered = false;
      const outcome = await this.watchListOnce(signal);
      if (outcome !== 'unsupported') {
        this.needList = false;
        if (outcome === 'healthy') backoff.reset();
        else await sleep(backoff.next(), signal);
        return;
      }
      this.watchListSupported = false;
      this.options.log.v(2).info('Server does not stream initial events; listing instead', { resource: this.name });
    }
    if (this.needList) {
      await this.listAndReplace(signal);
      this.needList = false;
      backoff.reset();
    }
    const healthy = await this.watchOnce(signal);
    if (healthy) backoff.reset();
    else await sleep(backoff.next(), signal);
  }

  /** Every refusal is counted; only the first of a run is said (refusals). */
  private countRefusal(): void {
    try {
      this.options.refusals?.inc({ resource: this.name });
    } catch {
      // a metric must not stop the informer
    }
  }

  private async listAndReplace(signal: AbortSignal): Promise<void> {
    this.target.beginList();
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
      this.refusals.noteAccepted();
      for (const raw of page.items ?? []) this.target.listed(raw);
      cont = page.metadata?.continue || undefined;
      listRv = page.metadata?.resourceVersion ?? listRv;
    } while (cont);
    this.target.replace(listRv);
  }

  /**
   * One watch from the last resourceVersion. Returns true if it was healthy (delivered something or
   * lasted a while) and ended normally; throws ResourceVersionGone or the API error otherwise.
   */
  private async watchOnce(signal: AbortSignal): Promise<boolean> {
    const outcome = await this.stream(signal, { resourceVersion: this.target.resourceVersion }, (event) => this.target.apply(this.changeOf(event)));
    return outcome.healthy;
  }

  /**
   * A watch-list: the initial state streamed as ADDED events up to the initial-events-end bookmark
   * (then the cache is replaced, as after a list), and changes after that as in watchOnce.
   * 'unsupported' when the server refuses the request or never marks the end of the initial events.
   */
  private async watchListOnce(signal: AbortSignal): Promise<'healthy' | 'unhealthy' | 'unsupported'> {
    this.target.beginList();
    let initial = true;
    let outcome: { healthy: boolean };
    try {
      outcome = await this.stream(signal, { resourceVersion: '', sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' }, (event) => {
        const change = this.changeOf(event);
        if (!initial) return this.target.apply(change);
        if (change.type === 'BOOKMARK') {
          if (change.object.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true') {
            this.target.replace(change.object.metadata?.resourceVersion ?? '');
            initial = false;
            this.initialStateDelivered = true;
          }
          return;
        }
        if (change.type === 'ADDED' || change.type === 'MODIFIED') return this.target.listed(change.object);
        // DELETED before the end of the initial state: handle as a watch would.
        this.target.apply(change);
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

  /** The event as a change of the cache; an ERROR event is thrown as the error it reports. */
  private changeOf(event: WatchEvent): ChangeEvent {
    if (event.type !== 'ERROR') return event as ChangeEvent;
    const status = event.object as { code?: number; reason?: string; message?: string };
    if (status.code === 410 || status.reason === 'Expired' || status.reason === 'Gone') throw new ResourceVersionGone();
    throw KubeApiError.fromStatus(status.code ?? 500, status, `watch ${this.name}`);
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
      this.refusals.noteAccepted();
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
}
