// The command line, parsed once into a frozen Config (§2): every flag of upstream external-resizer
// v2.2 with the same name, type and default, in Go flag syntax. Durations are in ms.
import { featureGatesFrom, type FeatureGates } from './feature-gates.js';
import { FlagError, FlagSet, MapStringBoolValue, MapStringStringValue } from './go-flags.js';
import { defineLoggingFlags, type LoggingFlags } from './logging-flags.js';

export type { LoggingFormat } from './logging-flags.js';

/** The logging flags (verbosity, vmodule, loggingFormat, logFlushFrequencyMs, log-*-split-stream ...) are in LoggingFlags. */
export interface Config extends LoggingFlags {
  readonly showVersion: boolean;
  readonly kubeconfig: string;
  readonly master: string;
  readonly csiAddress: string;
  readonly timeoutMs: number;
  readonly workers: number;
  readonly resyncPeriodMs: number;
  readonly retryIntervalStartMs: number;
  readonly retryIntervalMaxMs: number;
  readonly handleVolumeInUseError: boolean;
  readonly extraModifyMetadata: boolean;
  readonly leaderElection: boolean;
  readonly leaderElectionNamespace: string;
  readonly leaderElectionLeaseDurationMs: number;
  readonly leaderElectionRenewDeadlineMs: number;
  readonly leaderElectionRetryPeriodMs: number;
  readonly leaderElectionLabels: Readonly<Record<string, string>>;
  readonly kubeApiQps: number;
  readonly kubeApiBurst: number;
  readonly httpEndpoint: string;
  readonly metricsAddress: string;
  readonly metricsPath: string;
  readonly automaxprocs: boolean;
  readonly gates: FeatureGates;
  /** Arguments after the flags. Go's flag package leaves them for the program, and the sidecar ignores them. */
  readonly positionalArgs: readonly string[];
}

export class ConfigError extends Error {
  constructor(message: string, readonly usage: string, readonly helpRequested = false, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

/** Defines every flag on a FlagSet and returns a function that reads them into a Config. */
function defineFlags(flags: FlagSet): (positionalArgs: readonly string[]) => Config {
  const showVersion = flags.bool('version', false, 'Show version.');
  const kubeconfig = flags.string('kubeconfig', '', 'Absolute path to the kubeconfig file. Required only when running out of cluster.');
  const master = flags.string('master', '', 'Master URL to build a client config from. Either this or kubeconfig needs to be set if the provisioner is being run out of cluster.');
  const csiAddress = flags.string('csi-address', '/run/csi/socket', 'Address of the CSI driver socket.');
  const timeout = flags.durationMs('timeout', 10_000, 'Timeout for waiting for CSI driver socket.');
  const workers = flags.int('workers', 10, 'Concurrency to process multiple resize requests');
  const resync = flags.durationMs('resync-period', 10 * 60_000, 'Resync period for cache');
  const retryStart = flags.durationMs('retry-interval-start', 1_000, 'Initial retry interval of failed volume resize. It exponentially increases with each failure, up to retry-interval-max.');
  const retryMax = flags.durationMs('retry-interval-max', 5 * 60_000, 'Maximum retry interval of failed volume resize.');
  const inUse = flags.bool('handle-volume-inuse-error', true, 'Flag to turn on/off capability to handle volume in use error in resizer controller. Defaults to true if not set.');
  const extraModify = flags.bool('extra-modify-metadata', false, 'If set, add pv/pvc metadata to plugin modify requests as parameters.');
  const leaderElection = flags.bool('leader-election', false, 'Enable leader election.');
  const leNamespace = flags.string('leader-election-namespace', '', 'Namespace where the leader election resource lives. Defaults to the pod namespace if not set.');
  const leLease = flags.durationMs('leader-election-lease-duration', 15_000, 'Duration, in seconds, that non-leader candidates will wait to force acquire leadership. Defaults to 15 seconds.');
  const leRenew = flags.durationMs('leader-election-renew-deadline', 10_000, 'Duration, in seconds, that the acting leader will retry refreshing leadership before giving up. Defaults to 10 seconds.');
  const leRetry = flags.durationMs('leader-election-retry-period', 5_000, 'Duration, in seconds, the LeaderElector clients should wait between tries of actions. Defaults to 5 seconds.');
  const leLabels = flags.var(new MapStringStringValue(':'), 'leader-election-labels', 'List of labels to add to lease when given replica becomes leader. Formatted as a comma seperated list of key:value labels. Example: \'my-label:my-value,my-second-label:my-second-value\'');
  const qps = flags.float64('kube-api-qps', 5, 'QPS to use while communicating with the kubernetes apiserver. Defaults to 5.0.');
  const burst = flags.int('kube-api-burst', 10, 'Burst to use while communicating with the kubernetes apiserver. Defaults to 10.');
  const httpEndpoint = flags.string('http-endpoint', '', 'The TCP network address where the HTTP server for diagnostics, including metrics and leader election health check, will listen (example: `:8080`). The default is empty string, which means the server is disabled. Only one of `--metrics-address` and `--http-endpoint` can be set.');
  const metricsAddress = flags.string('metrics-address', '', '(deprecated) The TCP network address where the prometheus metrics endpoint will listen (example: `:8080`). The default is empty string, which means metrics endpoint is disabled. Only one of `--metrics-address` and `--http-endpoint` can be set.');
  const metricsPath = flags.string('metrics-path', '/metrics', 'The HTTP path where prometheus metrics will be exposed. Default is `/metrics`.');
  const automaxprocs = flags.bool('automaxprocs', false, 'automatically set GOMAXPROCS to match Linux container CPU quota (accepted for compatibility; no effect on Node.js)');
  const logging = defineLoggingFlags(flags);
  const gates = flags.var(new MapStringBoolValue(), 'feature-gates', 'A set of key=value pairs that describe feature gates for alpha/experimental features. Options are:\nAnnotateFsResize=true|false (BETA - default=true)\nRecoverVolumeExpansionFailure=true|false (GA - default=true)\nReleaseLeaderElectionOnExit=true|false (default=true)\nVolumeAttributesClass=true|false (GA - default=true)');

  return (positionalArgs) => {
    const loggingFlags = logging();
    if (workers.value < 1) throw new Error(`invalid value "${workers.value}" for flag -workers: must be at least 1`);
    if (qps.value <= 0 || burst.value < 1) throw new Error('--kube-api-qps must be positive and --kube-api-burst at least 1');
    return Object.freeze({
      showVersion: showVersion.value,
      kubeconfig: kubeconfig.value,
      master: master.value,
      csiAddress: csiAddress.value,
      timeoutMs: timeout.value,
      workers: workers.value,
      resyncPeriodMs: resync.value,
      retryIntervalStartMs: retryStart.value,
      retryIntervalMaxMs: retryMax.value,
      handleVolumeInUseError: inUse.value,
      extraModifyMetadata: extraModify.value,
      leaderElection: leaderElection.value,
      leaderElectionNamespace: leNamespace.value,
      leaderElectionLeaseDurationMs: leLease.value,
      leaderElectionRenewDeadlineMs: leRenew.value,
      leaderElectionRetryPeriodMs: leRetry.value,
      leaderElectionLabels: Object.freeze(Object.fromEntries(leLabels.value.entries)),
      kubeApiQps: qps.value,
      kubeApiBurst: burst.value,
      httpEndpoint: httpEndpoint.value,
      metricsAddress: metricsAddress.value,
      metricsPath: metricsPath.value,
      automaxprocs: automaxprocs.value,
      ...loggingFlags,
      gates: featureGatesFrom(gates.value.entries),
      positionalArgs: Object.freeze([...positionalArgs]),
    });
  };
}

/** Parses argv (without node and the script). Throws ConfigError carrying the usage text. */
export function parseConfig(args: readonly string[], programName = 'csi-resizer'): Config {
  const flags = new FlagSet(programName);
  const read = defineFlags(flags);
  const usage = flags.usage();
  try {
    const { rest } = flags.parse(args);
    return read(rest);
  } catch (err) {
    const help = err instanceof FlagError && err.kind === 'help';
    throw new ConfigError(err instanceof Error ? err.message : String(err), usage, help, { cause: err });
  }
}

/** The usage text, for -h. */
export function usageText(programName = 'csi-resizer'): string {
  const flags = new FlagSet(programName);
  defineFlags(flags);
  return flags.usage();
}
