// The auto-grow controller's PVC handlers. They keep the claim memory current (when each claim
// with a limit was first seen at its capacity) and queue a claim again when its request or
// annotations change, so a write refused for a conflict is decided again from the new version.
// The poll queues every claim whose usage it read; a handler never decides anything.
import type { InformerHandlers } from '../kube/cache/informer.js';
import type { Pvc } from '../model/objects.js';
import { pvcKey } from '../model/pvc.js';
import type { RateLimitingQueue } from '../queue/rate-limiters.js';
import { mayOptIn, type ClaimMemory } from './claim-memory.js';

export interface AutoGrowHandlerOptions {
  memory: ClaimMemory;
  queue: Pick<RateLimitingQueue<string>, 'add' | 'forget'>;
  /** Drops what the reconciler remembers of a deleted claim. */
  forget(key: string): void;
  now(): number;
}

export function autoGrowPvcHandlers(o: AutoGrowHandlerOptions): InformerHandlers<Pvc> {
  return {
    add: (pvc) => o.memory.observe(pvc, o.now()),
    update: (before, after) => {
      o.memory.observe(after, o.now());
      if (mayOptIn(after) && userEdited(before, after)) o.queue.add(pvcKey(after));
    },
    delete: (pvc) => {
      o.queue.forget(pvcKey(pvc));
      o.forget(pvcKey(pvc));
    },
  };
}

/** The request or an annotation changed: what a user (or another tool) edits on a claim. */
function userEdited(before: Pvc, after: Pvc): boolean {
  if (before.metadata.resourceVersion === after.metadata.resourceVersion) return false;
  if (before.spec.resources?.requests?.['storage'] !== after.spec.resources?.requests?.['storage']) return true;
  const a = before.metadata.annotations ?? {};
  const b = after.metadata.annotations ?? {};
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) if (a[key] !== b[key]) return true;
  return false;
}
