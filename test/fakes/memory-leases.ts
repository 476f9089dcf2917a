// The Lease API in memory, for elector tests without an API server: one Lease, optimistic
// concurrency on resourceVersion (409 on a stale update, 404 before it exists), a count of writes
// and each write's holder with the time it was stored, reads that take time on the clock (the
// Lease is read when the answer leaves, as a server would) or hang, and updates that can be made
// to hang until their signal aborts.
import type { Clock } from '../../src/base/clock.js';
import { realClock } from '../../src/base/clock.js';
import { KubeApiError } from '../../src/kube/api/errors.js';
import type { KubeObject } from '../../src/model/objects.js';

export class MemoryLeases {
  private lease: KubeObject | undefined;
  private version = 0;
  /** Every stored write: the holder it names and when (by the clock) it was stored. */
  readonly history: Array<{ holder: string; atMs: number }> = [];
  hangUpdates = false;
  /** How long each read takes, on the clock. */
  getDelayMs = 0;
  /** How many of the next reads hang until their signal aborts. */
  hangGets = 0;
  /** Each read: when it was asked and answered (by the clock), and how many writes its answer carried. */
  readonly reads: Array<{ askedMs: number; answeredMs?: number; writesSeen?: number }> = [];

  constructor(private readonly clock: Clock = realClock) {}

  get writes(): number {
    return this.history.length;
  }

  async getLease(_namespace: string, _name: string, signal: AbortSignal): Promise<KubeObject> {
    const read: { askedMs: number; answeredMs?: number; writesSeen?: number } = { askedMs: this.clock.now() };
    this.reads.push(read);
    if (this.hangGets > 0) {
      this.hangGets--;
      await untilAbortedRejecting(signal);
    }
    if (this.getDelayMs > 0) await new Promise<void>((resolve) => this.clock.setTimer(resolve, this.getDelayMs));
    read.answeredMs = this.clock.now();
    read.writesSeen = this.history.length;
    if (!this.lease) throw new KubeApiError(404, 'NotFound', 'lease not found');
    return structuredClone(this.lease);
  }

  async createLease(_namespace: string, lease: KubeObject): Promise<KubeObject> {
    if (this.lease) throw new KubeApiError(409, 'AlreadyExists', 'lease exists');
    return this.store(lease);
  }

  async updateLease(_namespace: string, lease: KubeObject, signal: AbortSignal): Promise<KubeObject> {
    if (this.hangUpdates) await untilAbortedRejecting(signal);
    if (lease.metadata?.resourceVersion !== this.lease?.metadata?.resourceVersion) throw new KubeApiError(409, 'Conflict', 'lease changed');
    return this.store(lease);
  }

  private store(lease: KubeObject): KubeObject {
    this.history.push({ holder: String((lease['spec'] as { holderIdentity?: string } | undefined)?.holderIdentity ?? ''), atMs: this.clock.now() });
    this.lease = { ...structuredClone(lease), metadata: { ...lease.metadata!, resourceVersion: String(++this.version) } };
    return structuredClone(this.lease);
  }
}

function untilAbortedRejecting(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_resolve, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
