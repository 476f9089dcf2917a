// Every metric the resizer exposes, defined once, on one registry per process. Names, help texts,
// buckets and labels are the reference's (csi-lib-utils and client-go), so dashboards written for
// the Go sidecar keep working; help texts start with the stability level component-base prefixes
// ([ALPHA] leader election, [BETA] work queue). Label values come from closed sets: never a PVC name.
import { Registry, Histogram, Gauge, Counter, collectDefaultMetrics } from 'prom-client';

export const CSI_OPERATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600];

export interface Metrics {
  readonly registry: Registry;
  readonly csiOperations: Histogram<'driver_name' | 'method_name' | 'grpc_status_code'>;
  readonly workqueue: WorkqueueMetrics;
  readonly leaderElectionMasterStatus: Gauge<'name'>;
  readonly leaderElectionSlowpathTotal: Counter<'name'>;
  /** Ours: objects an informer skipped because its key function or transform could not handle them. */
  readonly informerObjectsSkipped: Counter<'resource'>;
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

  const workqueue: WorkqueueMetrics = {
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

  return { registry, csiOperations, workqueue, leaderElectionMasterStatus, leaderElectionSlowpathTotal, informerObjectsSkipped };
}
