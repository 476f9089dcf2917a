// The REST client port (rest-client.ts) on the registry: client-go's rest_client_* families as
// component-base's restclient adapters feed them, defined in metrics.ts. Every API client of the
// process records into the same families, as client-go's globals do. The labelled children are
// taken once per client and verb (and per status code seen), so a request costs prom-client's
// observe and inc and no label objects of ours.
import type { Counter, Histogram } from 'prom-client';
import type { CaReloadReason, ExecCallStatus, RestClientMetrics, RestClientRecorder, VerbRecorder } from './rest-client.js';

/** The families the recorders write (the exec certificate TTL gauge reads them back at scrape time). */
export interface RestClientFamilies {
  readonly requestLatency: Histogram<'verb' | 'host'>;
  readonly rateLimiterLatency: Histogram<'verb' | 'host'>;
  readonly requestSize: Histogram<'verb' | 'host'>;
  readonly responseSize: Histogram<'verb' | 'host'>;
  readonly requestResult: Counter<'code' | 'method' | 'host'>;
  readonly requestRetry: Counter<'code' | 'verb' | 'host'>;
  readonly execPluginCalls: Counter<'code' | 'call_status'>;
  readonly execPluginCertRotation: Histogram;
  readonly transportCreateCalls: Counter<'result'>;
  readonly transportCaReloads: Counter<'result' | 'reason'>;
}

/** client-go's code label for an attempt that got no answer. */
const NO_ANSWER = '<error>';

/**
 * Every client of ours builds its own connections and shares them with no other client: in
 * client-go's terms a transport "created and not cached" (docs/differences/rest-client-metrics.md).
 */
const TRANSPORT_NOT_SHARED = 'uncacheable';

interface Inc {
  inc(): void;
}
interface Observe {
  observe(value: number): void;
}

export class PromRestClientMetrics implements RestClientMetrics {
  /** Each open client's exec plugin certificate expiry (ms since the epoch), while it has one. */
  private readonly certificateExpiries = new Map<RestClientRecorder, number>();

  constructor(private readonly families: RestClientFamilies) {}

  client(host: string): RestClientRecorder {
    this.families.transportCreateCalls.inc({ result: TRANSPORT_NOT_SHARED });
    return new ClientRecorder(this.families, host, this.certificateExpiries);
  }

  /**
   * rest_client_exec_plugin_ttl_seconds: seconds until the earliest exec plugin certificate of
   * the open clients expires (negative once expired), +Inf when none has one.
   */
  execCertificateTtlSeconds(nowMs = Date.now()): number {
    let earliest = Infinity;
    for (const notAfterMs of this.certificateExpiries.values()) earliest = Math.min(earliest, notAfterMs);
    return earliest === Infinity ? Infinity : (earliest - nowMs) / 1000;
  }
}

class ClientRecorder implements RestClientRecorder {
  private readonly verbs = new Map<string, VerbRecorder>();
  private readonly execCalls = new Map<string, Inc>();

  constructor(
    private readonly families: RestClientFamilies,
    private readonly host: string,
    private readonly certificateExpiries: Map<RestClientRecorder, number>,
  ) {}

  forVerb(verb: string): VerbRecorder {
    let recorder = this.verbs.get(verb);
    if (recorder === undefined) {
      recorder = new VerbRecorderOnFamilies(this.families, verb, this.host);
      this.verbs.set(verb, recorder);
    }
    return recorder;
  }

  execPluginCall(exitCode: number, status: ExecCallStatus): void {
    const key = `${exitCode} ${status}`;
    let child = this.execCalls.get(key);
    if (child === undefined) {
      child = this.families.execPluginCalls.labels(String(exitCode), status);
      this.execCalls.set(key, child);
    }
    child.inc();
  }

  caReload(reason: CaReloadReason): void {
    const result = reason === 'updated' || reason === 'unchanged' ? 'success' : 'failure';
    this.families.transportCaReloads.inc({ result, reason });
  }

  execCertificateRotated(ageSeconds: number): void {
    this.families.execPluginCertRotation.observe(ageSeconds);
  }

  execCertificateExpiry(notAfterMs: number | undefined): void {
    if (notAfterMs === undefined || Number.isNaN(notAfterMs)) this.certificateExpiries.delete(this);
    else this.certificateExpiries.set(this, notAfterMs);
  }

  close(): void {
    this.certificateExpiries.delete(this);
  }
}

class VerbRecorderOnFamilies implements VerbRecorder {
  private readonly limiter: Observe;
  private readonly latencyChild: Observe;
  private readonly requestSizeChild: Observe;
  private readonly responseSizeChild: Observe;
  /** rest_client_requests_total and rest_client_request_retries_total children, by code label. */
  private readonly results = new Map<number | undefined, Inc>();
  private readonly retries = new Map<number | undefined, Inc>();

  constructor(
    private readonly families: RestClientFamilies,
    private readonly verb: string,
    private readonly host: string,
  ) {
    this.limiter = families.rateLimiterLatency.labels(verb, host);
    this.latencyChild = families.requestLatency.labels(verb, host);
    this.requestSizeChild = families.requestSize.labels(verb, host);
    this.responseSizeChild = families.responseSize.labels(verb, host);
  }

  rateLimiterWait(seconds: number): void {
    this.limiter.observe(seconds);
  }

  latency(seconds: number): void {
    this.latencyChild.observe(seconds);
  }

  requestSize(bytes: number): void {
    this.requestSizeChild.observe(bytes);
  }

  responseSize(bytes: number): void {
    this.responseSizeChild.observe(bytes);
  }

  attempt(status: number | undefined, isRetry: boolean): void {
    let result = this.results.get(status);
    if (result === undefined) {
      result = this.families.requestResult.labels(codeLabel(status), this.verb, this.host);
      this.results.set(status, result);
    }
    result.inc();
    if (!isRetry) return;
    let retry = this.retries.get(status);
    if (retry === undefined) {
      retry = this.families.requestRetry.labels(codeLabel(status), this.verb, this.host);
      this.retries.set(status, retry);
    }
    retry.inc();
  }
}

function codeLabel(status: number | undefined): string {
  return status === undefined ? NO_ANSWER : String(status);
}
