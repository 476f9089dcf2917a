// Every metric the resizer exposes, defined once, on one registry per process. Names, help texts,
// buckets and labels are the reference's (csi-lib-utils and client-go), so dashboards written for
// the Go sidecar keep working; help texts start with the stability level component-base prefixes
// ([ALPHA] leader election and REST client, [BETA] work queue). Label values come from closed
// sets: never a PVC name.
import { Registry, Histogram, Gauge, Counter, collectDefaultMetrics } from 'prom-client';
import type { RestClientMetrics } from './rest-client.js';
import { PromRestClientMetrics } from './rest-client-metrics.js';

export const CSI_OPERATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600];

export interface Metrics {
  readonly registry: Registry;
  readonly csiOperations: Histogram<'driver_name' | 'method_name' | 'grpc_status_code'>;
  readonly workqueue: WorkqueueMetrics;
  readonly leaderElectionMasterStatus: Gauge<'name'>;
  readonly leaderElectionSlowpathTotal: Counter<'name'>;
  /** Ours: objects an informer skipped because its key function or transform could not handle them. */
  readonly informerObjectsSkipped: Counter<'resource'>;
  /** Ours: lists and watches of an informer the API server refused (403: a missing RBAC rule). */
  readonly informerRefusals: Counter<'resource'>;
  /** Ours: how long resizes and modifications take, and their failed operations (createOperationMetrics). */
  readonly operations: OperationMetrics;
  /** client-go's rest_client_* families: every API client of the process records here. */
  readonly restClient: RestClientMetrics;
}

export interface WorkqueueMetrics {
  readonly depth: Gauge<'name'>;
  readonly adds: Counter<'name'>;
  readonly queueDuration: Histogram<'name'>;
  readonly workDuration: Histogram<'name'>;
  readonly unfinishedWorkSeconds: Gauge<'name'>;
  readonly longestRunningProcessorSeconds: Gauge<'name'>;
  readonly retries: Counter<'name'>;
}

/** client-go's workqueue buckets: exponential from 1e-8 s by 10, 10 buckets. */
const WORKQUEUE_BUCKETS = Array.from({ length: 10 }, (_, i) => 1e-8 * 10 ** i);

/**
 * How often prom-client's event-loop delay histogram samples (perf_hooks.monitorEventLoopDelay's
 * resolution). Its default, 10 ms, wakes an idle process 100 times a second, most of our CPU at
 * rest (docs/performance.md, "CPU at rest"). Once a second still gives the
 * nodejs_eventloop_lag_* gauges a dozen samples per 15 s scrape.
 */
export const EVENT_LOOP_SAMPLE_MS = 1000;

const PROCESS_START_TIME = 'process_start_time_seconds';

/**
 * The process_* and nodejs_* collectors on `registry` (an event-loop delay monitor, a GC observer,
 * /proc reads), registered on the first scrape. process_start_time_seconds is the one upstream
 * registers through component-base, so it keeps the value prom-client computed and takes
 * component-base's help text, stability prefix included.
 */
export async function registerProcessMetrics(registry: Registry): Promise<void> {
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  const startTime = (await registry.getSingleMetric(PROCESS_START_TIME)?.get())?.values[0]?.value ?? Math.round(Date.now() / 1000 - process.uptime());
  registry.removeSingleMetric(PROCESS_START_TIME);
  new Gauge({ name: PROCESS_START_TIME, help: '[ALPHA] Start time of the process since unix epoch in seconds.', registers: [registry] }).set(startTime);
}

/** The registry and the resizer's own metrics, without the process_* and nodejs_* collectors (registerProcessMetrics). */
export function createMetrics(): Metrics {
  const registry = new Registry();

  const csiOperations = new Histogram({
    name: 'csi_sidecar_operations_seconds',
    help: '[ALPHA] Container Storage Interface operation duration with gRPC error code status total',
    labelNames: ['driver_name', 'method_name', 'grpc_status_code'] as const,
    buckets: CSI_OPERATION_BUCKETS,
    registers: [registry],
  });

  const workqueue = createWorkqueueMetrics(registry);

  const leaderElectionMasterStatus = new Gauge({
    name: 'leader_election_master_status',
    help: "[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    labelNames: ['name'] as const,
    registers: [registry],
  });
  const leaderElectionSlowpathTotal = new Counter({
    name: 'leader_election_slowpath_total',
    help: "[ALPHA] Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
    labelNames: ['name'] as const,
    registers: [registry],
  });

  const informerObjectsSkipped = new Counter({
    name: 'csi_resizer_informer_objects_skipped_total',
    help: "Objects an informer skipped because they could not be keyed or transformed (malformed API data). 'resource' is the resource listed and watched.",
    labelNames: ['resource'] as const,
    registers: [registry],
  });

  const informerRefusals = new Counter({
    name: 'csi_resizer_informer_refusals_total',
    help: "Lists and watches of an informer the API server refused with 403 Forbidden (a missing RBAC rule), each retried with backoff. 'resource' is the resource listed and watched.",
    labelNames: ['resource'] as const,
    registers: [registry],
  });

  const operations = createOperationMetrics(registry);
  const restClient = registerRestClientMetrics(registry);

  return {
    registry,
    csiOperations,
    workqueue,
    leaderElectionMasterStatus,
    leaderElectionSlowpathTotal,
    informerObjectsSkipped,
    informerRefusals,
    operations,
    restClient,
  };
}

/** client-go's workqueue families as component-base registers them, one child per queue name. */
function createWorkqueueMetrics(registry: Registry): WorkqueueMetrics {
  return {
    depth: new Gauge({ name: 'workqueue_depth', help: '[BETA] Current depth of workqueue', labelNames: ['name'] as const, registers: [registry] }),
    adds: new Counter({
      name: 'workqueue_adds_total',
      help: '[BETA] Total number of adds handled by workqueue',
      labelNames: ['name'] as const,
      registers: [registry],
    }),
    queueDuration: new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: '[BETA] How long in seconds an item stays in workqueue before being requested.',
      labelNames: ['name'] as const,
      buckets: WORKQUEUE_BUCKETS,
      registers: [registry],
    }),
    workDuration: new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: '[BETA] How long in seconds processing an item from workqueue takes.',
      labelNames: ['name'] as const,
      buckets: WORKQUEUE_BUCKETS,
      registers: [registry],
    }),
    unfinishedWorkSeconds: new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: "[BETA] How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
      labelNames: ['name'] as const,
      registers: [registry],
    }),
    longestRunningProcessorSeconds: new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: '[BETA] How many seconds has the longest running processor for workqueue been running.',
      labelNames: ['name'] as const,
      registers: [registry],
    }),
    retries: new Counter({
      name: 'workqueue_retries_total',
      help: '[BETA] Total number of retries handled by workqueue',
      labelNames: ['name'] as const,
      registers: [registry],
    }),
  };
}

// Ours (docs/differences/own-metrics.md): how long a resize or modification takes from the
// moment the resizer sees it asked for to the moment the claim has it, and the failed expand and
// modify operations by gRPC code. Only the leader observes (its informers feed
// resize/operation-durations.ts); a standby exports the families empty.

/**
 * Seconds to a day: a controller expansion takes seconds to minutes, node expansion waits for a
 * pod to (re)start, which can take hours. Beyond the CSI operation buckets (which stop at 600 s).
 */
export const OPERATION_DURATION_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400];

/** The operation_name values: kube-controller-manager's spelling of the operations. */
export const OperationName = { Expand: 'expand_volume', Modify: 'modify_volume' } as const;
export type OperationName = (typeof OperationName)[keyof typeof OperationName];

export interface OperationMetrics {
  /** Request seen → the controller's part done (node expansion pending, or the whole resize done). */
  readonly resizeControllerDuration: Histogram;
  /** Request seen → the claim's capacity reached what it asks for, nothing left pending. */
  readonly resizeDuration: Histogram;
  /** New class seen → the class is the claim's current class. */
  readonly modifyDuration: Histogram;
  readonly errors: Counter<'operation_name' | 'grpc_status_code'>;
}

function createOperationMetrics(registry: Registry): OperationMetrics {
  const histogram = (name: string, help: string) => new Histogram({ name, help, buckets: OPERATION_DURATION_BUCKETS, registers: [registry] });
  return {
    resizeControllerDuration: histogram(
      'csi_resizer_resize_controller_duration_seconds',
      "Seconds from the resizer seeing a PersistentVolumeClaim ask for more storage to the controller's part of the resize being done (node expansion pending, or the resize finished). Completed resizes only. Reported by the leader.",
    ),
    resizeDuration: histogram(
      'csi_resizer_resize_duration_seconds',
      'Seconds from the resizer seeing a PersistentVolumeClaim ask for more storage to its capacity reaching the request with nothing left pending (node expansion included). Completed resizes only. Reported by the leader.',
    ),
    modifyDuration: histogram(
      'csi_resizer_modify_duration_seconds',
      'Seconds from the resizer seeing a PersistentVolumeClaim ask for another VolumeAttributesClass to that class becoming its current class. Completed modifications only. Reported by the leader.',
    ),
    errors: new Counter({
      name: 'csi_resizer_operation_errors_total',
      help: "Failed expand and modify operations. 'operation_name' is expand_volume or modify_volume; 'grpc_status_code' is the driver's gRPC code, or unknown-non-grpc when the operation failed without one (before reaching the driver).",
      labelNames: ['operation_name', 'grpc_status_code'] as const,
      registers: [registry],
    }),
  };
}

/** Counts one failed operation under the gRPC code name the error carries. */
export function recordOperationError(metrics: OperationMetrics, operation: OperationName): (grpcStatusCode: string) => void {
  return (grpcStatusCode) => metrics.errors.inc({ operation_name: operation, grpc_status_code: grpcStatusCode });
}

/** component-base's REST client latency buckets (request and rate limiter), in seconds. */
const REST_LATENCY_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];
/** component-base's request and response size buckets: 64 bytes to 16 MiB. */
const REST_SIZE_BUCKETS = [64, 256, 512, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216];
/** How long exec plugin certificates lived: 10 minutes, 30 minutes, 1 hour, 4 hours, 1 day, 1 week, 1, 3 and 6 months, 1 and 4 years. */
const EXEC_CERT_ROTATION_BUCKETS = [600, 1800, 3600, 14400, 86400, 604800, 2592000, 7776000, 15552000, 31104000, 124416000];

/**
 * client-go's REST client families as component-base's restclient package registers them (the DNS
 * resolution histogram and the exec plugin policy counter are left out: component-base defines
 * them but never registers them). Families for what our client never does are registered all the
 * same, as upstream's are, so a scrape has the same families: the transport cache's entries and
 * garbage collection and the certificate rotation clean-up (docs/differences/rest-client-metrics.md).
 */
function registerRestClientMetrics(registry: Registry): PromRestClientMetrics {
  const registers = [registry];
  const byVerbAndHost = ['verb', 'host'] as const;
  const restClient = new PromRestClientMetrics({
    requestLatency: new Histogram({
      name: 'rest_client_request_duration_seconds',
      help: '[ALPHA] Request latency in seconds. Broken down by verb, and host.',
      labelNames: byVerbAndHost,
      buckets: REST_LATENCY_BUCKETS,
      registers,
    }),
    requestSize: new Histogram({
      name: 'rest_client_request_size_bytes',
      help: '[ALPHA] Request size in bytes. Broken down by verb and host.',
      labelNames: byVerbAndHost,
      buckets: REST_SIZE_BUCKETS,
      registers,
    }),
    responseSize: new Histogram({
      name: 'rest_client_response_size_bytes',
      help: '[ALPHA] Response size in bytes. Broken down by verb and host.',
      labelNames: byVerbAndHost,
      buckets: REST_SIZE_BUCKETS,
      registers,
    }),
    rateLimiterLatency: new Histogram({
      name: 'rest_client_rate_limiter_duration_seconds',
      help: '[ALPHA] Client side rate limiter latency in seconds. Broken down by verb, and host.',
      labelNames: byVerbAndHost,
      buckets: REST_LATENCY_BUCKETS,
      registers,
    }),
    requestResult: new Counter({
      name: 'rest_client_requests_total',
      help: '[ALPHA] Number of HTTP requests, partitioned by status code, method, and host.',
      labelNames: ['code', 'method', 'host'] as const,
      registers,
    }),
    requestRetry: new Counter({
      name: 'rest_client_request_retries_total',
      help: '[ALPHA] Number of request retries, partitioned by status code, verb, and host.',
      labelNames: ['code', 'verb', 'host'] as const,
      registers,
    }),
    execPluginCertRotation: new Histogram({
      name: 'rest_client_exec_plugin_certificate_rotation_age',
      help: '[ALPHA] Histogram of the number of seconds the last auth exec plugin client certificate lived before being rotated. If auth exec plugin client certificates are unused, histogram will contain no data.',
      buckets: EXEC_CERT_ROTATION_BUCKETS,
      registers,
    }),
    execPluginCalls: new Counter({
      name: 'rest_client_exec_plugin_call_total',
      help: '[ALPHA] Number of calls to an exec plugin, partitioned by the type of event encountered (no_error, plugin_execution_error, plugin_not_found_error, client_internal_error) and an optional exit code. The exit code will be set to 0 if and only if the plugin call was successful.',
      labelNames: ['code', 'call_status'] as const,
      registers,
    }),
    transportCreateCalls: new Counter({
      name: 'rest_client_transport_create_calls_total',
      help: '[ALPHA] Number of calls to get a new transport, partitioned by the result of the operation hit: obtained from the cache, miss: created and added to the cache, miss-gc: recreated and added back to the cache after being garbage collected, uncacheable: created and not cached',
      labelNames: ['result'] as const,
      registers,
    }),
    transportCaReloads: new Counter({
      name: 'rest_client_transport_ca_reload_total',
      help: '[ALPHA] Number of times a CA reload is attempted, partitioned by the result and reason for the reload attempt',
      labelNames: ['result', 'reason'] as const,
      registers,
    }),
  });
  new Gauge({
    name: 'rest_client_exec_plugin_ttl_seconds',
    help: '[ALPHA] Gauge of the shortest TTL (time-to-live) of the client certificate(s) managed by the auth exec plugin. The value is in seconds until certificate expiry (negative if already expired). If auth exec plugins are unused or manage no TLS certificates, the value will be +INF.',
    registers,
    collect() {
      this.set(restClient.execCertificateTtlSeconds());
    },
  });
  registerUnusedTransportFamilies(registers);
  return restClient;
}

/** Registered, never set or incremented: our clients share no transport cache and start no rotation goroutines. */
function registerUnusedTransportFamilies(registers: Registry[]): void {
  new Gauge({ name: 'rest_client_transport_cache_entries', help: '[ALPHA] Number of transport entries in the internal cache.', registers });
  new Counter({
    name: 'rest_client_transport_cert_rotation_gc_calls_total',
    help: '[ALPHA] Number of times a cert rotation goroutine cancel func is called via GC cleanup of the associated transport',
    registers,
  });
  new Counter({
    name: 'rest_client_transport_cache_gc_calls_total',
    help: '[ALPHA] Number of times a GC cleanup attempts to delete a transport cache entry, partitioned by the result: deleted, skipped',
    labelNames: ['result'] as const,
    registers,
  });
}
