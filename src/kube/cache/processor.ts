// The informer's processor, as client-go's sharedProcessor: the registered handlers, every change
// of the cache handed to each of them in order, and the periodic resync. A handler that throws is
// logged and skipped: a handler bug never stops the informer or the process.
import type { Clock, TimerHandle } from '../../base/clock.js';
import type { KubeObject } from '../../model/objects.js';
import type { Logger } from '../../observability/log/logger.js';
import { safeKey } from './keys.js';

export interface InformerHandlers<T extends KubeObject> {
  add?(obj: T): void;
  /** Also called with old === new content on resync and for every surviving object after a relist. */
  update?(oldObj: T, newObj: T): void;
  /** Gets the last object we knew. */
  delete?(obj: T): void;
}

export class HandlerProcessor<T extends KubeObject> {
  private readonly handlers: InformerHandlers<T>[] = [];

  /** `resource` names the informer in the log line of a failed handler. */
  constructor(
    private readonly log: Logger,
    private readonly resource: string,
  ) {}

  /** `existing`: the cached objects a handler registered after the first sync gets add() for first, as in client-go. */
  register(handlers: InformerHandlers<T>, existing: Iterable<T> | undefined): void {
    this.handlers.push(handlers);
    if (existing) for (const obj of existing) this.call(handlers, 'add', obj);
  }

  add(obj: T): void {
    for (const h of this.handlers) this.call(h, 'add', obj);
  }

  update(oldObj: T, newObj: T): void {
    for (const h of this.handlers) this.call(h, 'update', oldObj, newObj);
  }

  delete(obj: T): void {
    for (const h of this.handlers) this.call(h, 'delete', obj);
  }

  /** update(obj, obj) for each object: a resync. */
  resync(objects: Iterable<T>): void {
    for (const obj of objects) this.update(obj, obj);
  }

  private call(h: InformerHandlers<T>, kind: keyof InformerHandlers<T>, a: T, b?: T): void {
    try {
      if (kind === 'update') h.update?.(a, b as T);
      else h[kind]?.(a);
    } catch (err) {
      this.log.error('Informer event handler failed', { resource: this.resource, event: kind, key: safeKey(a), err });
    }
  }
}

/** Runs `tick` every periodMs on the clock until cancelled; undefined (nothing runs) when periodMs is not positive. */
export function startResync(clock: Clock, periodMs: number, tick: () => void): TimerHandle | undefined {
  if (!(periodMs > 0)) return undefined;
  let handle: TimerHandle;
  const fire = () => {
    tick();
    handle = clock.setTimer(fire, periodMs);
  };
  handle = clock.setTimer(fire, periodMs);
  return { cancel: () => handle.cancel() };
}
