// Volume usage from Prometheus, for clusters where the controller cannot reach the kubelets
// (docs/auto-grow.md, "Where usage comes from"): instant queries of the series kubelet exports
// and pvc-autoresizer reads, kubelet_volume_stats_{available_bytes,capacity_bytes,inodes_free,
// inodes}, labelled by `namespace` and `persistentvolumeclaim`. Beside each, `timestamp()` of it:
// an instant query stamps every value with the evaluation time, and the decision needs when the
// sample was scraped. A claim's sample time is the oldest of its series' timestamps, so a new
// capacity beside an old available-bytes value reads as old. One failed query makes every claim
// "usage unavailable" for this poll: the four series only mean something together.
import type http from 'node:http';
import { forEachBounded } from '../base/bounded-concurrency.js';
import { messageOf } from '../base/errors.js';
import { linkedSignal, TimeoutError } from '../base/signals.js';
import { HttpGetError, httpGet, keepAliveAgent, unavailableBecause } from './http-get.js';
import { PrometheusAnswerError, seriesKey, vectorOf, type PromSample } from './prometheus-response.js';
import { claimKey, UsageUnavailable, type ClaimUsage, type NodeClaims, type UsageReport, type VolumeUsage, type VolumeUsageSource } from './volume-usage.js';

export const KubeletVolumeMetric = {
  AvailableBytes: 'kubelet_volume_stats_available_bytes',
  CapacityBytes: 'kubelet_volume_stats_capacity_bytes',
  InodesFree: 'kubelet_volume_stats_inodes_free',
  Inodes: 'kubelet_volume_stats_inodes',
} as const;
type Metric = (typeof KubeletVolumeMetric)[keyof typeof KubeletVolumeMetric];
const METRICS: readonly Metric[] = Object.values(KubeletVolumeMetric);

/** Above this many namespaces the queries are not narrowed to them (the URL would grow long). */
const MAX_NAMESPACE_FILTER = 200;
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
const QUERIES_AT_ONCE = 4;

export interface PrometheusSourceOptions {
  /** Prometheus's base URL (http or https), e.g. http://prometheus.monitoring:9090; a path prefix is kept. */
  readonly url: string;
  /** Bound on each query. */
  readonly timeoutMs: number;
}

interface Series {
  namespace: string;
  claim: string;
  values: Partial<Record<Metric, number>>;
  timesMs: Partial<Record<Metric, number>>;
}

export class PrometheusUsageSource implements VolumeUsageSource {
  private readonly base: URL;
  private readonly agent: http.Agent;

  /** Throws for a URL that is not http(s). */
  constructor(private readonly options: PrometheusSourceOptions) {
    this.base = new URL(options.url);
    if (this.base.protocol !== 'http:' && this.base.protocol !== 'https:') throw new Error(`Prometheus URL ${options.url}: only http and https are supported`);
    this.agent = keepAliveAgent(this.base.protocol);
  }

  async readUsage(nodes: readonly NodeClaims[], signal: AbortSignal): Promise<UsageReport> {
    const wanted = new Set(nodes.flatMap((n) => n.claims.map(claimKey)));
    const claims = new Map<string, ClaimUsage>();
    if (wanted.size === 0) return { claims, failures: [] };
    const namespaces = [...new Set(nodes.flatMap((n) => n.claims.map((c) => c.namespace)))].sort();
    // Namespaces are DNS labels: nothing in them is special to a regular expression.
    const selector = namespaces.length <= MAX_NAMESPACE_FILTER ? `{namespace=~"${namespaces.join('|')}"}` : '';

    const series = new Map<string, Series>();
    const queries = METRICS.flatMap((metric) => [
      { metric, query: `${metric}${selector}`, part: 'value' as const },
      { metric, query: `timestamp(${metric}${selector})`, part: 'time' as const },
    ]);
    try {
      await forEachBounded(queries, QUERIES_AT_ONCE, async ({ metric, query, part }) => {
        for (const sample of await this.query(query, signal)) {
          const s = seriesOf(series, sample);
          if (s === undefined) continue;
          if (part === 'value') s.values[metric] = sample.value;
          else s.timesMs[metric] = sample.value * 1000;
        }
      });
    } catch (err) {
      signal.throwIfAborted();
      const { reason, message } = unavailable(err, this.base);
      for (const key of wanted) claims.set(key, { kind: 'unavailable', reason, message });
      return { claims, failures: [{ source: `Prometheus ${shownBase(this.base)}`, reason, message }] };
    }

    for (const s of series.values()) {
      const key = `${s.namespace}/${s.claim}`;
      if (!wanted.has(key)) continue;
      const usage = usageOf(s);
      if (usage === undefined) continue;
      const known = claims.get(key);
      if (known?.kind !== 'sampled' || usage.sampledAtMs > known.usage.sampledAtMs) claims.set(key, { kind: 'sampled', usage });
    }
    for (const key of wanted) {
      if (!claims.has(key)) {
        claims.set(key, {
          kind: 'unavailable',
          reason: UsageUnavailable.NotReported,
          message: `Prometheus has no kubelet_volume_stats series of ${key} (not mounted, or not scraped)`,
        });
      }
    }
    return { claims, failures: [] };
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  private async query(query: string, signal: AbortSignal): Promise<PromSample[]> {
    const url = new URL(`${this.base.pathname.replace(/\/+$/, '')}/api/v1/query`, this.base);
    url.searchParams.set('query', query);
    const call = linkedSignal(signal, this.options.timeoutMs);
    try {
      const answer = await httpGet({ url, agent: this.agent, maxBytes: MAX_ANSWER_BYTES }, call.signal);
      let body: unknown;
      try {
        body = JSON.parse(answer.body.toString('utf8'));
      } catch {
        throw new PrometheusAnswerError(`answered ${answer.statusCode} with a body that is not JSON`);
      }
      return vectorOf(body);
    } catch (err) {
      if (!signal.aborted && call.signal.reason instanceof TimeoutError) throw new PrometheusAnswerError(`no answer within ${this.options.timeoutMs}ms`, true);
      throw err;
    } finally {
      call.dispose();
    }
  }
}

function seriesOf(series: Map<string, Series>, sample: PromSample): Series | undefined {
  const namespace = sample.labels['namespace'];
  const claim = sample.labels['persistentvolumeclaim'];
  if (namespace === undefined || claim === undefined) return undefined;
  const key = seriesKey(sample.labels);
  let s = series.get(key);
  if (s === undefined) {
    s = { namespace, claim, values: {}, timesMs: {} };
    series.set(key, s);
  }
  return s;
}

/** A series set with at least the bytes (inodes when both are there), stamped with its oldest sample. */
function usageOf(s: Series): VolumeUsage | undefined {
  const available = s.values[KubeletVolumeMetric.AvailableBytes];
  const capacity = s.values[KubeletVolumeMetric.CapacityBytes];
  if (available === undefined || capacity === undefined || available < 0 || capacity < 0) return undefined;
  const inodes = s.values[KubeletVolumeMetric.Inodes];
  const inodesFree = s.values[KubeletVolumeMetric.InodesFree];
  const withInodes = inodes !== undefined && inodesFree !== undefined && inodes >= 0 && inodesFree >= 0;
  const used: Metric[] = withInodes ? [...METRICS] : [KubeletVolumeMetric.AvailableBytes, KubeletVolumeMetric.CapacityBytes];
  const times = used.map((m) => s.timesMs[m]);
  if (times.some((t) => t === undefined)) return undefined;
  return {
    capacityBytes: BigInt(Math.round(capacity)),
    availableBytes: BigInt(Math.round(available)),
    ...(withInodes ? { inodes: BigInt(Math.round(inodes)), inodesFree: BigInt(Math.round(inodesFree)) } : {}),
    sampledAtMs: Math.min(...(times as number[])),
  };
}

function shownBase(base: URL): string {
  return `${base.protocol}//${base.host}${base.pathname.replace(/\/+$/, '')}`;
}

function unavailable(err: unknown, base: URL): { reason: UsageUnavailable; message: string } {
  const where = `Prometheus ${shownBase(base)}`;
  if (err instanceof PrometheusAnswerError)
    return { reason: err.timedOut ? UsageUnavailable.Timeout : UsageUnavailable.BadResponse, message: `${where}: ${err.message}` };
  if (err instanceof HttpGetError) {
    return { reason: unavailableBecause(err.failure), message: `${where}: ${err.message}` };
  }
  return { reason: UsageUnavailable.BadResponse, message: `${where}: ${messageOf(err)}` };
}
