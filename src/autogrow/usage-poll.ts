// The auto-grow poll (docs/auto-grow.md, "The controller"): every interval, the claims that could
// grow now (opted in, idle, not held back) are grouped by the node whose pods mount them, their
// usage is read through the VolumeUsageSource port, each answer is kept until the next poll, and
// the claims' keys go to the controller's queue. The reconcile decides from what is kept; the
// poll decides nothing. Only nodes that mount such a claim are asked, and a Node object is read
// (GET by name, no Node cache of the cluster) only for those, then kept a few minutes.
import { forEachBounded } from '../base/bounded-concurrency.js';
import type { Clock } from '../base/clock.js';
import { messageOf } from '../base/errors.js';
import { sleep } from '../base/signals.js';
import { isNotFound } from '../kube/api/errors.js';
import type { Node } from '../model/objects.js';
import type { Logger } from '../observability/log/logger.js';
import { UsageUnavailable, type ClaimUsage, type NodeClaims, type VolumeUsageSource } from '../usage/volume-usage.js';
import { claimsByNode, type PodMount } from './mounts.js';

/** A Node read by name (the kubelet source needs its addresses and port). */
export interface NodeReader {
  getNode(name: string, signal: AbortSignal): Promise<Node>;
}

/** What the poll asks the reconciler about each candidate. */
export type Triage = 'measure' | 'evaluate' | 'skip';

export interface UsagePollOptions {
  source: VolumeUsageSource;
  /** Undefined when the source needs no Node (Prometheus). */
  nodes: NodeReader | undefined;
  /** The pod cache's records. */
  pods: { list(): readonly PodMount[] };
  /** The claims that may be opted in (keys). */
  candidates(): Iterable<string>;
  /** measure: read its usage, then evaluate; evaluate: no usage needed (a Warning to give); skip. */
  triage(key: string): Triage;
  enqueue(key: string): void;
  intervalMs: number;
  /** Node objects asked at once. */
  concurrency: number;
  clock: Clock;
  log: Logger;
}

/** A Node object is read again after this, and at once after its kubelet could not be reached. */
const NODE_TTL_MS = 10 * 60_000;
type Failure = { readonly source: string; readonly reason: string; readonly message: string };

const REREAD_NODE_AFTER: ReadonlySet<string> = new Set([
  UsageUnavailable.Unreachable,
  UsageUnavailable.NoAddress,
  UsageUnavailable.Tls,
  UsageUnavailable.Timeout,
]);

export class UsagePoll {
  /** The answer of the last poll for each claim it read; a claim not here was not mounted. */
  private usage = new Map<string, ClaimUsage>();
  private readonly nodes = new Map<string, { node: Node; readAtMs: number }>();
  /** Sources failing at the last poll and why, so a failure is a warning once, not every poll. */
  private failing = new Map<string, string>();
  private polls = 0;

  constructor(private readonly o: UsagePollOptions) {}

  /** The usage the last poll read for a claim (undefined: no pod mounted it). */
  usageOf(key: string): ClaimUsage | undefined {
    return this.usage.get(key);
  }

  /** Completed polls, for tests and logs. */
  get count(): number {
    return this.polls;
  }

  /** Polls every interval until `signal` aborts. A failed poll is logged and the next one comes on time. */
  async run(signal: AbortSignal): Promise<void> {
    const { clock, log, intervalMs } = this.o;
    while (!signal.aborted) {
      const startedMs = clock.now();
      try {
        await this.pollOnce(signal);
      } catch (err) {
        if (signal.aborted) return;
        log.error('Auto-grow poll failed', { err });
      }
      try {
        await sleep(Math.max(0, startedMs + intervalMs - clock.now()), signal, clock);
      } catch {
        return;
      }
    }
  }

  /** One poll: measure the claims that could grow, keep the answers, queue the claims. */
  async pollOnce(signal: AbortSignal): Promise<void> {
    const { o } = this;
    const startedMs = o.clock.now();
    const measure = new Set<string>();
    const evaluate: string[] = [];
    for (const key of o.candidates()) {
      const t = o.triage(key);
      if (t === 'measure') measure.add(key);
      else if (t === 'evaluate') evaluate.push(key);
    }
    const byNode = claimsByNode(o.pods.list(), measure);
    const usage = new Map<string, ClaimUsage>();
    const failures: Failure[] = [];
    const asked = await this.nodeClaims(byNode, usage, failures, signal);
    const report = await o.source.readUsage(asked, signal);
    for (const [key, result] of report.claims) usage.set(key, result);
    this.usage = usage;
    failures.push(...report.failures);
    this.noteFailures(failures);
    for (const failure of report.failures) {
      if (failure.source.startsWith('node ') && REREAD_NODE_AFTER.has(failure.reason)) this.nodes.delete(failure.source.slice('node '.length));
    }
    this.polls++;
    o.log.v(4).info('Auto-grow poll', {
      candidates: measure.size + evaluate.length,
      measured: usage.size,
      nodes: byNode.size,
      notMounted: measure.size - usage.size,
      durationMs: o.clock.now() - startedMs,
    });
    // Only mounted claims are evaluated: without a pod there is no usage, and nothing to say.
    for (const key of usage.keys()) o.enqueue(key);
    for (const key of evaluate) o.enqueue(key);
  }

  /** Each node's Node object (kept up to NODE_TTL_MS); a node that cannot be read makes its claims unavailable. */
  private async nodeClaims(byNode: Map<string, Set<string>>, usage: Map<string, ClaimUsage>, failures: Failure[], signal: AbortSignal): Promise<NodeClaims[]> {
    const { o } = this;
    const asked: NodeClaims[] = [];
    const refs = (keys: Set<string>) => [...keys].map((k) => ({ namespace: k.slice(0, k.indexOf('/')), name: k.slice(k.indexOf('/') + 1) }));
    for (const name of this.nodes.keys()) if (!byNode.has(name)) this.nodes.delete(name);
    await forEachBounded([...byNode], o.concurrency, async ([name, keys]) => {
      if (o.nodes === undefined) {
        asked.push({ node: { metadata: { name } }, claims: refs(keys) });
        return;
      }
      const kept = this.nodes.get(name);
      let node = kept !== undefined && o.clock.now() - kept.readAtMs < NODE_TTL_MS ? kept.node : undefined;
      if (node === undefined) {
        try {
          node = reachability(await o.nodes.getNode(name, signal));
          this.nodes.set(name, { node, readAtMs: o.clock.now() });
        } catch (err) {
          signal.throwIfAborted();
          const message = isNotFound(err) ? `node ${name} does not exist` : `cannot read node ${name}: ${messageOf(err)}`;
          for (const key of keys) usage.set(key, { kind: 'unavailable', reason: UsageUnavailable.NoAddress, message });
          failures.push({ source: `node ${name}`, reason: UsageUnavailable.NoAddress, message });
          return;
        }
      }
      asked.push({ node, claims: refs(keys) });
    });
    return asked;
  }

  /** Logs each failing source when it starts failing or fails differently, not at every poll. */
  private noteFailures(failures: readonly Failure[]): void {
    const now = new Map<string, string>();
    for (const f of failures) {
      if (this.failing.get(f.source) !== f.reason) this.o.log.warn('Cannot read volume usage', { source: f.source, reason: f.reason, message: f.message });
      now.set(f.source, f.reason);
    }
    this.failing = now;
  }
}

/** The fields of a Node the kubelet source reads: a few hundred bytes kept instead of the whole object. */
function reachability(node: Node): Node {
  return {
    metadata: { name: node.metadata.name },
    status: {
      ...(node.status?.addresses ? { addresses: node.status.addresses.map((a) => ({ type: a.type, address: a.address })) } : {}),
      ...(node.status?.daemonEndpoints?.kubeletEndpoint?.Port !== undefined
        ? { daemonEndpoints: { kubeletEndpoint: { Port: node.status.daemonEndpoints.kubeletEndpoint.Port } } }
        : {}),
    },
  };
}
