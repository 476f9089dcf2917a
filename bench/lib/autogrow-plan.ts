// The auto-grow scenario's pure parts: which claims each kubelet stand-in's node mounts, which
// claims cross their threshold in a run and when, and the figures read from what was seen (the
// crossing, the stand-in's requests, the write of the new request). No I/O: the scenario
// (scenarios/autogrow.ts) does the creating, serving and watching.
import { quantile, median } from './figures.js';

export interface AutoGrowShape {
  /** Opted-in claims, each mounted by one pod. */
  claims: number;
  /** Kubelet stand-ins, one per node. */
  kubelets: number;
  /** Every `emptyEvery`-th node mounts no opted-in claim (only plain ones): it must get no request. */
  emptyEvery: number;
  /** Claims of a class that is not opted in, mounted on every node. */
  plainPerNode: number;
}

export interface NodePlan {
  name: string;
  /** Indexes of the opted-in claims its pods mount. */
  optedIn: number[];
  /** Indexes of the plain claims its pods mount. */
  plain: number[];
}

export function nodeName(i: number): string {
  return `bench-ag-node-${i}`;
}

/** Whether node i is one of the nodes with no opted-in claim. */
export function isEmptyNode(shape: Pick<AutoGrowShape, 'emptyEvery'>, i: number): boolean {
  return shape.emptyEvery > 0 && i % shape.emptyEvery === shape.emptyEvery - 1;
}

/**
 * The nodes and what they mount. Opted-in claim j goes to the (j mod N)-th of the N nodes that
 * take opted-in claims, so consecutive claims are on different nodes; plain claims are
 * `plainPerNode` per node, in node order.
 */
export function planNodes(shape: AutoGrowShape): NodePlan[] {
  if (!Number.isInteger(shape.kubelets) || shape.kubelets < 1) throw new Error(`kubelets must be a positive integer, got ${shape.kubelets}`);
  const nodes: NodePlan[] = Array.from({ length: shape.kubelets }, (_, i) => ({ name: nodeName(i), optedIn: [], plain: [] }));
  const takers = nodes.filter((_, i) => !isEmptyNode(shape, i));
  if (takers.length === 0 && shape.claims > 0)
    throw new Error(`with ${shape.kubelets} kubelets and every ${shape.emptyEvery}-th empty, no node takes opted-in claims`);
  for (let j = 0; j < shape.claims; j++) takers[j % takers.length]!.optedIn.push(j);
  let plain = 0;
  for (const node of nodes) for (let k = 0; k < shape.plainPerNode; k++) node.plain.push(plain++);
  return nodes;
}

export interface Crossing {
  /** The opted-in claim's index. */
  claim: number;
  /** When its free space drops below the threshold, ms after the schedule starts. */
  atMs: number;
}

/**
 * The crossings of run `run` (0-based): `count` claims not used by an earlier run (a grown claim
 * waits out its cooldown), spread evenly over `spanMs` (each at the middle of its slot), so the
 * crossings meet every phase of the poll interval alike. Claims run*count .. run*count+count-1 are
 * on `count` different nodes as long as count does not exceed the nodes that take claims.
 */
export function crossingSchedule(o: { run: number; count: number; spanMs: number; claims: number }): Crossing[] {
  const first = o.run * o.count;
  if (first + o.count > o.claims) throw new Error(`run ${o.run + 1} needs claims ${first}..${first + o.count - 1}, but there are ${o.claims}`);
  return Array.from({ length: o.count }, (_, i) => ({ claim: first + i, atMs: ((i + 0.5) * o.spanMs) / o.count }));
}

/** What the harness saw of one crossing, in ms since the epoch. */
export interface CrossingSeen {
  crossedAtMs: number;
  /** The new request arrived through the watch (undefined: not within the deadline). */
  writtenAtMs?: number;
  /** Arrivals of requests at the stand-in of the claim's node. */
  requestsAtMs: readonly number[];
}

export interface Reaction {
  /** Crossing to the new request written. */
  totalMs: number;
  /** The request whose answer led to the write (the last one before it) to the write: what is ours beyond the wait for the next poll. */
  fromPollMs: number;
}

/** The reaction of a crossing that was written; undefined when it was not, or no request came between the crossing and the write. */
export function reaction(seen: CrossingSeen): Reaction | undefined {
  if (seen.writtenAtMs === undefined) return undefined;
  const written = seen.writtenAtMs;
  let asked: number | undefined;
  for (const at of seen.requestsAtMs) if (at <= written && (asked === undefined || at > asked)) asked = at;
  if (asked === undefined || asked < seen.crossedAtMs - 1000) return undefined;
  return { totalMs: written - seen.crossedAtMs, fromPollMs: written - asked };
}

/**
 * Poll cycles seen by a stand-in set: a poll asks every node with an opted-in claim once, so the
 * count is the fewest requests any such node got (a node asked less was missed by some poll).
 */
export function pollsSeen(requestsPerNode: ReadonlyMap<string, number>, optedInNodes: readonly string[]): number {
  if (optedInNodes.length === 0) return 0;
  return Math.min(...optedInNodes.map((n) => requestsPerNode.get(n) ?? 0));
}

/** The requests that reached nodes with no opted-in claim: the target is none. */
export function requestsToEmptyNodes(requestsPerNode: ReadonlyMap<string, number>, emptyNodes: readonly string[]): number {
  return emptyNodes.reduce((sum, n) => sum + (requestsPerNode.get(n) ?? 0), 0);
}

/** The mean of samples taken at a fixed period: over whole poll intervals it averages the sawtooth a poll makes. */
export function mean(values: readonly number[]): number {
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** p50 and p99 (nearest rank) of the reactions' totals and their poll-to-write parts, in seconds. */
export function reactionSummary(reactions: readonly Reaction[]): { p50: number; p99: number; fromPollP50: number; fromPollP99: number } {
  const s = (ms: readonly number[]) => ms.map((v) => v / 1000);
  const totals = s(reactions.map((r) => r.totalMs));
  const fromPoll = s(reactions.map((r) => r.fromPollMs));
  return { p50: median(totals), p99: quantile(totals, 0.99), fromPollP50: median(fromPoll), fromPollP99: quantile(fromPoll, 0.99) };
}

/** Free bytes a stand-in reports for an opted-in claim before its crossing: 25 to 74 % of the filesystem, spread over the claims. */
export function healthyAvailable(capacityBytes: bigint, claim: number): bigint {
  return (capacityBytes * BigInt(25 + ((claim * 37) % 50))) / 100n;
}

/** Free bytes after the crossing: 5 % of the filesystem, below the default 10 % threshold. */
export function crossedAvailable(capacityBytes: bigint): bigint {
  return (capacityBytes * 5n) / 100n;
}

/** The filesystem kubelet reports on a claim of `claimBytes`: a little less, as ext4's metadata takes its share. */
export function filesystemBytes(claimBytes: bigint): bigint {
  return (claimBytes * 97n) / 100n;
}

/** Parses `--autogrow CLAIMS:KUBELETS`. */
export function parseAutoGrowShape(value: string): { claims: number; kubelets: number } {
  const m = /^(\d+):(\d+)$/.exec(value.trim());
  const claims = Number(m?.[1]);
  const kubelets = Number(m?.[2]);
  if (!m || claims < 1 || claims > 20_000 || kubelets < 1 || kubelets > 500) {
    throw new Error(`--autogrow ${value}: want CLAIMS:KUBELETS with claims in [1, 20000] and kubelets in [1, 500]`);
  }
  return { claims, kubelets };
}

/** Parses `--autogrow-interval`: whole seconds or minutes, as a Go duration spells them (`30s`, `1m`). */
export function parseIntervalSeconds(value: string): number {
  const m = /^(\d+)(s|m)$/.exec(value.trim());
  const s = m ? Number(m[1]) * (m[2] === 'm' ? 60 : 1) : NaN;
  if (!(s >= 5 && s <= 600)) throw new Error(`--autogrow-interval ${value}: want a duration from 5s to 10m, in whole seconds or minutes (30s, 1m)`);
  return s;
}
