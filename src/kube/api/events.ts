// Kubernetes Events for what the controllers did (Resizing, VolumeResizeFailed...). core/v1 Events
// as the Go sidecar writes them through client-go's recorder, with its EventCorrelator:
//   - the same event (object, type, reason, message) again bumps count and lastTimestamp on the
//     existing Event (PATCH `{count, lastTimestamp, message}`) instead of creating a new one;
//   - from the 10th distinct message with the same object, type and reason within 10 minutes, the
//     messages are combined into one Event, `(combined from similar events): <latest message>`;
//   - a token bucket per object and type (25 events, then one per 5 minutes) drops the rest, so
//     an object that fails forever doesn't flood the API server. A dropped event still counts.
// client-node has no recorder at all.
//
// Recording never blocks the caller and never throws: events go into a bounded queue drained by one
// background loop, which starts on the next turn of the event loop; when the queue is full the newest event is dropped (it was logged), and API errors
// are logged. Events are best effort, exactly as in client-go. A write refused for want of the
// events rule (403) is said once (`access`), not once per event, until a write is accepted again.
import { metaTime } from '../../model/time.js';
import { kRef, type Logger } from '../../observability/log/logger.js';
import { linkedSignal } from '../../base/signals.js';
import type { KubeClient } from './client.js';
import { isNotFound } from './errors.js';
import { RefusalRun, type AccessListener } from './refusals.js';
import type { KubeObject } from '../../model/objects.js';
import { PatchType } from './patch.js';

export const EventType = { Normal: 'Normal', Warning: 'Warning' } as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

export interface EventRecorder {
  event(obj: KubeObject, type: EventType, reason: string, message: string): void;
}

export interface ApiEventRecorderOptions {
  client: Pick<KubeClient, 'createEvent' | 'patchEvent'>;
  /** source.component, e.g. `external-resizer hostpath.csi.k8s.io`. */
  component: string;
  /** source.host and reportingInstance (the hostname); optional. */
  host?: string;
  log: Logger;
  now?: () => number;
  maxQueue?: number;
  /** Per-request timeout. */
  requestTimeoutMs?: number;
  /** Distinct messages of one reason within this window are combined; default 10 min like client-go. */
  aggregateWindowMs?: number;
  /** How many objects, reasons and events the correlation caches remember (client-go: 4096 each). */
  cacheSize?: number;
  /** Who says that writes are refused (403) and accepted again; default: the recorder's own log lines. */
  access?: AccessListener;
}

interface Pending {
  obj: KubeObject;
  type: EventType;
  reason: string;
  message: string;
  atMs: number;
}

/** The last observation of one event (client-go's eventLog). */
interface Seen {
  namespace: string;
  name: string;
  count: number;
  firstTimestamp: string;
}

/** Distinct messages of one object, type and reason (client-go's aggregateRecord). */
interface Similar {
  messages: Set<string>;
  lastMs: number;
}

/** A passive token bucket per object and type (client-go's spamRecord). */
interface Bucket {
  tokens: number;
  lastMs: number;
}

const DEFAULT_WINDOW_MS = 10 * 60_000;
const AGGREGATE_MAX_EVENTS = 10;
const SPAM_BURST = 25;
const SPAM_REFILL_PER_MS = 1 / 300_000;
const COMBINED_PREFIX = '(combined from similar events): ';

/** The object reference, as client-go's GetReference builds it (kind and apiVersion come from the object). */
function involvedObject(obj: KubeObject) {
  const m = obj.metadata;
  return {
    kind: obj.kind,
    apiVersion: obj.apiVersion,
    namespace: m?.namespace,
    name: m?.name,
    uid: m?.uid,
    resourceVersion: m?.resourceVersion,
  };
}

export class ApiEventRecorder implements EventRecorder {
  private readonly queue: Pending[] = [];
  private readonly seen = new Map<string, Seen>();
  private readonly similar = new Map<string, Similar>();
  private readonly buckets = new Map<string, Bucket>();
  private readonly stopController = new AbortController();
  private draining: Promise<void> | undefined;
  private nameCounter = 0;
  private readonly refusals: RefusalRun;
  private closed = false;

  constructor(private readonly options: ApiEventRecorderOptions) {
    const { log } = options;
    this.refusals = new RefusalRun(
      options.access ?? {
        refused: (err) => log.warn('Event writes forbidden, dropping events quietly until they are allowed', { err }),
        allowed: () => log.info('Event writes allowed again'),
      },
    );
  }

  event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    const log = this.options.log;
    // client-go's StartStructuredLogging(0), as upstream starts it: every event at level 0.
    log.info('Event occurred', {
      object: kRef(obj.metadata?.namespace ?? '', obj.metadata?.name ?? ''),
      fieldPath: '',
      kind: obj.kind ?? '',
      apiVersion: obj.apiVersion ?? '',
      type,
      reason,
      message,
    });
    if (this.closed || this.queue.length >= (this.options.maxQueue ?? 1000)) return;
    this.queue.push({ obj, type, reason, message, atMs: this.now() });
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
    });
  }

  /** Resolves when everything queued so far has been written (or has failed). */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Drops what is queued and aborts the write in flight; later events are dropped. */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.stopController.abort();
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private async drain(): Promise<void> {
    // Start writing only after the I/O the caller starts next: the `Resizing` event is recorded
    // just before the driver call, and its POST (request set-up, TLS write) would otherwise go out
    // first and hold up the call, and the PV and PVC writes after it, on our one thread. client-go
    // sends events from a goroutine of their own, also off the caller's path.
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (let next = this.queue.shift(); next; next = this.queue.shift()) {
      const call = linkedSignal(this.stopController.signal, this.options.requestTimeoutMs ?? 10_000);
      try {
        await this.write(next, call.signal);
        this.refusals.noteAccepted();
      } catch (err) {
        if (!this.closed && !this.refusals.noteError(err)) {
          this.options.log.warn('Failed to write event', { reason: next.reason, object: next.obj.metadata?.name, err });
        }
      } finally {
        call.dispose();
      }
    }
  }

  private async write(p: Pending, signal: AbortSignal): Promise<void> {
    const ref = involvedObject(p.obj);
    const namespace = ref.namespace || 'default';
    const objectKey = [ref.kind, ref.namespace, ref.name, ref.uid, ref.apiVersion, p.type];
    const atTime = metaTime(p.atMs);

    // Aggregate: similar events (same object, type and reason) with many messages become one.
    const similarKey = JSON.stringify([...objectKey, p.reason]);
    const windowMs = this.options.aggregateWindowMs ?? DEFAULT_WINDOW_MS;
    let similar = this.similar.get(similarKey);
    if (!similar || p.atMs - similar.lastMs > windowMs) similar = { messages: new Set(), lastMs: p.atMs };
    similar.messages.add(p.message);
    similar.lastMs = p.atMs;
    this.remember(this.similar, similarKey, similar);
    let message = p.message;
    let key = JSON.stringify([...objectKey, p.reason, p.message]);
    if (similar.messages.size >= AGGREGATE_MAX_EVENTS) {
      similar.messages.delete(similar.messages.values().next().value as string);
      message = COMBINED_PREFIX + p.message;
      key = similarKey;
    }

    // Observe: the count goes up even when the spam filter then drops the event (as client-go's).
    const prior = this.seen.get(key);
    const seen: Seen = prior
      ? { ...prior, count: prior.count + 1 }
      : { namespace, name: `${ref.name ?? 'unknown'}.${this.uniqueSuffix(p.atMs)}`, count: 1, firstTimestamp: atTime };
    this.remember(this.seen, key, seen);
    if (!this.takeToken(JSON.stringify(objectKey), p.atMs)) return;

    if (prior) {
      try {
        await this.options.client.patchEvent(
          seen.namespace,
          seen.name,
          { count: seen.count, lastTimestamp: atTime, message },
          { type: PatchType.StrategicMerge },
          signal,
        );
        return;
      } catch (err) {
        // Someone deleted it (or the TTL did): create it again, with its count.
        if (!isNotFound(err)) throw err;
      }
    }
    const event: KubeObject = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: seen.name, namespace: seen.namespace },
      involvedObject: ref,
      reason: p.reason,
      message,
      type: p.type,
      source: { component: this.options.component, ...(this.options.host ? { host: this.options.host } : {}) },
      firstTimestamp: seen.firstTimestamp,
      lastTimestamp: atTime,
      count: seen.count,
      reportingComponent: this.options.component,
      reportingInstance: this.options.host ?? '',
    };
    await this.options.client.createEvent(seen.namespace, event, signal);
  }

  /** client-go's EventSourceObjectSpamFilter: 25 events per object and type, then one per 5 minutes. */
  private takeToken(key: string, atMs: number): boolean {
    const bucket = this.buckets.get(key) ?? { tokens: SPAM_BURST, lastMs: atMs };
    bucket.tokens = Math.min(SPAM_BURST, bucket.tokens + Math.max(0, atMs - bucket.lastMs) * SPAM_REFILL_PER_MS);
    bucket.lastMs = atMs;
    const accepted = bucket.tokens >= 1;
    if (accepted) bucket.tokens -= 1;
    this.remember(this.buckets, key, bucket);
    return accepted;
  }

  /** client-go names events `<object>.<hex unix nanos>`; a counter keeps same-ms names distinct. */
  private uniqueSuffix(atMs: number): string {
    const nanos = BigInt(Math.floor(atMs)) * 1_000_000n + BigInt(this.nameCounter++ % 1_000_000);
    return nanos.toString(16);
  }

  /** An LRU insert: re-inserting keeps Map order = least recently used first. */
  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
    const max = this.options.cacheSize ?? 4096;
    while (map.size > max) {
      const oldest = map.keys().next().value;
      if (oldest === undefined) break;
      map.delete(oldest);
    }
  }
}
