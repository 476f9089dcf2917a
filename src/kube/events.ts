// Kubernetes Events for what the controllers did (Resizing, VolumeResizeFailed...). core/v1 Events
// as the Go sidecar writes them through client-go's recorder, with its aggregation: the same event
// (object, type, reason, message) again within 10 minutes bumps count and lastTimestamp on the
// existing Event (PATCH) instead of creating a new one. client-node has no recorder at all.
//
// Recording never blocks the caller and never throws: events go into a bounded queue drained by one
// background loop; when the queue is full the newest event is dropped and counted, and API errors
// are logged. Events are best effort, exactly as in client-go.
import { metaTime } from '../base/clock.js';
import { kRef, type Logger } from '../observability/logger.js';
import { linkedSignal } from '../base/signals.js';
import type { KubeClient } from './client.js';
import { isNotFound } from './errors.js';
import type { KubeObject } from './keys.js';
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
  /** Identical events within this window are aggregated; default 10 min like client-go. */
  aggregateWindowMs?: number;
  /** How many distinct events we remember for aggregation. */
  cacheSize?: number;
}

interface Pending {
  obj: KubeObject;
  type: EventType;
  reason: string;
  message: string;
  atMs: number;
}

interface Seen {
  namespace: string;
  name: string;
  count: number;
  firstTimestamp: string;
  lastMs: number;
}

const DEFAULT_WINDOW_MS = 10 * 60_000;

/** The object reference, as client-go's GetReference builds it (kind and apiVersion come from the object). */
function involvedObject(obj: KubeObject) {
  const m = obj.metadata ?? {};
  return {
    kind: obj.kind,
    apiVersion: obj.apiVersion,
    namespace: m.namespace,
    name: m.name,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
  };
}

export class ApiEventRecorder implements EventRecorder {
  private readonly queue: Pending[] = [];
  private readonly seen = new Map<string, Seen>();
  private readonly stopController = new AbortController();
  private draining: Promise<void> | undefined;
  private nameCounter = 0;
  private closed = false;
  /** Events dropped because the queue was full or the recorder closed. */
  dropped = 0;

  constructor(private readonly options: ApiEventRecorderOptions) {}

  event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    const log = this.options.log;
    // client-go's StartStructuredLogging(0), as upstream starts it: every event at level 0.
    log.info('Event occurred', {
      object: kRef(obj.metadata?.namespace ?? '', obj.metadata?.name ?? ''), fieldPath: '', kind: obj.kind ?? '', apiVersion: obj.apiVersion ?? '', type, reason, message,
    });
    if (this.closed || this.queue.length >= (this.options.maxQueue ?? 1000)) {
      this.dropped++;
      return;
    }
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
    this.dropped += this.queue.length;
    this.queue.length = 0;
    this.stopController.abort();
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private async drain(): Promise<void> {
    for (let next = this.queue.shift(); next; next = this.queue.shift()) {
      const call = linkedSignal(this.stopController.signal, this.options.requestTimeoutMs ?? 10_000);
      try {
        await this.write(next, call.signal);
      } catch (err) {
        if (!this.closed) {
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
    const key = JSON.stringify([ref.kind, ref.namespace, ref.name, ref.uid, p.type, p.reason, p.message]);
    const windowMs = this.options.aggregateWindowMs ?? DEFAULT_WINDOW_MS;
    const prior = this.seen.get(key);
    const lastTimestamp = metaTime(p.atMs);

    // Aggregate: the same event again within the window updates the existing Event.
    if (prior && p.atMs - prior.lastMs <= windowMs) {
      const count = prior.count + 1;
      try {
        await this.options.client.patchEvent(prior.namespace, prior.name, { count, lastTimestamp },
          { type: PatchType.StrategicMerge }, signal);
        this.remember(key, { ...prior, count, lastMs: p.atMs });
        return;
      } catch (err) {
        // Someone deleted it (or the TTL did): fall through and create a fresh one.
        if (!isNotFound(err)) throw err;
      }
    }
    const name = `${ref.name ?? 'unknown'}.${this.uniqueSuffix(p.atMs)}`;
    const event: KubeObject = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: ref,
      reason: p.reason,
      message: p.message,
      type: p.type,
      source: { component: this.options.component, ...(this.options.host ? { host: this.options.host } : {}) },
      firstTimestamp: lastTimestamp,
      lastTimestamp,
      count: 1,
      reportingComponent: this.options.component,
      reportingInstance: this.options.host ?? '',
    };
    await this.options.client.createEvent(namespace, event, signal);
    this.remember(key, { namespace, name, count: 1, firstTimestamp: lastTimestamp, lastMs: p.atMs });
  }

  /** client-go names events `<object>.<hex unix nanos>`; a counter keeps same-ms names distinct. */
  private uniqueSuffix(atMs: number): string {
    const nanos = BigInt(Math.floor(atMs)) * 1_000_000n + BigInt(this.nameCounter++ % 1_000_000);
    return nanos.toString(16);
  }

  private remember(key: string, entry: Seen): void {
    this.seen.delete(key); // re-insert to keep Map order = least recently used first
    this.seen.set(key, entry);
    const max = this.options.cacheSize ?? 4096;
    while (this.seen.size > max) {
      const oldest = this.seen.keys().next().value;
      if (oldest === undefined) break;
      this.seen.delete(oldest);
    }
  }
}
