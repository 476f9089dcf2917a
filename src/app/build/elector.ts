// The Lease elector of --leader-election (§1), with an API client of its own (and so a rate
// limiter of its own: controller traffic never starves the renewals). The Lease is
// `external-resizer-<driver>` in --leader-election-namespace (or the pod's), held under the
// replica's identity (kube/api/leader-election.ts). Settings client-go refuses end the start.
import type { Config } from '../../flags/config.js';
import type { FeatureGates } from '../../flags/feature-gates.js';
import type { HttpKubeClient } from '../../kube/wire/http-client.js';
import { ClientPurpose, type ApiClientFactory } from '../../kube/wire/client-factory.js';
import {
  LeaderElectionConfigError,
  LeaderElector,
  leaderIdentity,
  leaseNameForDriver,
  leaseNamespace,
  type LeaderCallbacks,
} from '../../kube/api/leader-election.js';
import type { AccessListener } from '../../kube/api/refusals.js';
import type { HealthResult } from '../../observability/http-server.js';
import type { Logger } from '../../observability/log/logger.js';
import type { Metrics } from '../../observability/metrics.js';
import { StartupError } from '../startup-error.js';

/** The Lease elector as the process runner drives it. */
export interface Elector {
  /** Acquires, then renews until leadership is lost or `signal` aborts (then releases the Lease when configured). */
  run(signal: AbortSignal): Promise<void>;
  /** The leader-election health check of the diagnostics server. */
  healthCheck(toleranceMs: number): HealthResult;
}

export interface ElectorOptions {
  readonly config: Config;
  readonly gates: FeatureGates;
  readonly driverName: string;
  readonly clients: ApiClientFactory;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly callbacks: LeaderCallbacks;
  /** Who says that Lease requests are refused for want of the leases rule, and allowed again. */
  readonly access?: AccessListener;
}

/** The elector and how to close its client. Throws StartupError. */
export function buildElector(options: ElectorOptions): { elector: Elector; close(): void } {
  const { config, driverName, log } = options;
  let client: HttpKubeClient;
  try {
    client = options.clients.create(ClientPurpose.LeaderElection);
  } catch (err) {
    throw new StartupError('Failed to create leaderelection client', 1, { cause: err });
  }
  const name = leaseNameForDriver(driverName);
  const namespace = leaseNamespace(config.leaderElectionNamespace);
  const identity = leaderIdentity();
  let elector: LeaderElector;
  try {
    elector = new LeaderElector({
      client,
      namespace,
      name,
      identity,
      leaseDurationMs: config.leaderElectionLeaseDurationMs,
      renewDeadlineMs: config.leaderElectionRenewDeadlineMs,
      retryPeriodMs: config.leaderElectionRetryPeriodMs,
      labels: { ...config.leaderElectionLabels },
      releaseOnCancel: options.gates.releaseLeaderElectionOnExit,
      log,
      metrics: options.metrics,
      callbacks: options.callbacks,
      ...(options.access ? { access: options.access } : {}),
    });
  } catch (err) {
    client.close();
    // client-go's RunOrDie panics on these settings, so the Go sidecar exits 2.
    if (err instanceof LeaderElectionConfigError) throw new StartupError('Invalid leader election configuration', 2, { cause: err });
    throw new StartupError('Invalid leader election configuration', 1, { cause: err });
  }
  log.info('Leader election enabled', { lease: `${namespace}/${name}`, identity });
  return { elector, close: () => client.close() };
}
