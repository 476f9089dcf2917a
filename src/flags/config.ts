// The command line, parsed once into a frozen Config (§2): every flag of upstream external-resizer
// v2.3.0 with the same name, type and default, in Go flag syntax. Durations are in ms.
import { messageOf } from '../base/errors.js';
import { FeatureGateError, knownFeatures, resolveFeatureGates, type FeatureGates, type GateWarning } from './feature-gates.js';
import { FlagError, FlagSet, MapStringBoolValue, MapStringStringValue, type FlagDescription, type FlagValue } from './go-flags.js';
import { defineLoggingFlags, type LoggingFlags } from './logging-flags.js';
import { defineAutoGrowFlags, type AutoGrowFlags } from './auto-grow-flags.js';

export type { LoggingFormat } from './logging-flags.js';

/** The logging flags (verbosity, vmodule, loggingFormat, logFlushFrequencyMs, log-*-split-stream ...) are in LoggingFlags. */
export interface CommandLine extends LoggingFlags {
  readonly showVersion: boolean;
  readonly kubeconfig: string;
  readonly master: string;
  readonly csiAddress: string;
  /** --timeout: each Probe and GetPluginInfo while waiting for the driver, and the drain bound at shutdown (§2.1). */
  readonly timeoutMs: number;
  /** The deadline of ControllerExpandVolume and of the startup capability queries: --resize-timeout, or --timeout when given. */
  readonly resizeTimeoutMs: number;
  /** The deadline of ControllerModifyVolume: --modify-timeout, or --timeout when given. */
  readonly modifyTimeoutMs: number;
  readonly workers: number;
  readonly resyncPeriodMs: number;
  readonly retryIntervalStartMs: number;
  readonly retryIntervalMaxMs: number;
  readonly handleVolumeInUseError: boolean;
  readonly extraModifyMetadata: boolean;
  readonly leaderElection: boolean;
  /** One replica per node: act only on PVs whose node affinity selects NODE_NAME; no leader election. */
  readonly nodeDeployment: boolean;
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
  /** Ours: the auto-grow controller and its usage source (docs/auto-grow.md). */
  readonly autoGrow: AutoGrowFlags;
  /** `--feature-gates` as given, resolved into `gates` only after the version is logged (as the Go sidecar does). */
  readonly featureGateSettings: ReadonlyMap<string, boolean>;
  /** Arguments after the flags. Go's flag package leaves them for the program, and the sidecar ignores them. */
  readonly positionalArgs: readonly string[];
}

/** The command line with the feature gates resolved: what the app runs with. */
export interface Config extends CommandLine {
  readonly gates: FeatureGates;
}

export class ConfigError extends Error {
  constructor(
    message: string,
    readonly usage: string,
    readonly helpRequested = false,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

/** Defines every flag on a FlagSet and returns a function that reads them into a Config. */
function defineFlags(flags: FlagSet): (positionalArgs: readonly string[]) => CommandLine {
  const showVersion = flags.bool('version', false, 'Show version.');
  const kubeconfig = flags.string('kubeconfig', '', 'Absolute path to the kubeconfig file. Required only when running out of cluster.');
  const master = flags.string(
    'master',
    '',
    'Master URL to build a client config from. Either this or kubeconfig needs to be set if the provisioner is being run out of cluster.',
  );
  const csiAddress = flags.string('csi-address', '/run/csi/socket', 'Address of the CSI driver socket.');
  const timeouts = defineTimeoutFlags(flags);
  const workers = flags.int('workers', 10, 'Concurrency to process multiple resize requests');
  const resync = flags.durationMs('resync-period', 10 * 60_000, 'Resync period for cache');
  const retryStart = flags.durationMs(
    'retry-interval-start',
    1_000,
    'Initial retry interval of failed volume resize. It exponentially increases with each failure, up to retry-interval-max.',
  );
  const retryMax = flags.durationMs('retry-interval-max', 5 * 60_000, 'Maximum retry interval of failed volume resize.');
  const inUse = flags.bool(
    'handle-volume-inuse-error',
    true,
    'Flag to turn on/off capability to handle volume in use error in resizer controller. Defaults to true if not set.',
  );
  const extraModify = flags.bool('extra-modify-metadata', false, 'If set, add pv/pvc metadata to plugin modify requests as parameters.');
  const leaderElection = flags.bool('leader-election', false, 'Enable leader election.');
  const nodeDeployment = flags.bool(
    'node-deployment',
    false,
    'Run beside a node-local CSI driver on every node (a DaemonSet): act only on PersistentVolumes whose node affinity selects the node named by the NODE_NAME environment variable. Cannot be combined with --leader-election.',
  );
  const leaderElectionSettings = defineLeaderElectionFlags(flags);
  const qps = flags.float64('kube-api-qps', 5, 'QPS to use while communicating with the kubernetes apiserver. Defaults to 5.0.');
  const burst = flags.int('kube-api-burst', 10, 'Burst to use while communicating with the kubernetes apiserver. Defaults to 10.');
  const diagnostics = defineDiagnosticsFlags(flags);
  const automaxprocs = flags.var(
    new BoolFuncValue(),
    'automaxprocs',
    'automatically set GOMAXPROCS to match Linux container CPU quota (accepted for compatibility; no effect on Node.js)',
  );
  const logging = defineLoggingFlags(flags);
  const autoGrow = defineAutoGrowFlags(flags);
  // The Go sidecar's text, typo and missing space included, then component-base's list of gates.
  const gates = flags.var(
    new MapStringBoolValue(),
    'feature-gates',
    `A set of key=value paris that describe feature gates for alpha/experimental features for csi external resizer.Options are:\n${knownFeatures().join('\n')}`,
  );

  return (positionalArgs) => {
    const loggingFlags = logging();
    // --workers below 1 runs no workers, --kube-api-qps/--kube-api-burst 0 mean client-go's defaults
    // and a negative QPS turns the client-side limiter off: accepted here as the Go sidecar does.
    if (nodeDeployment.value && leaderElection.value)
      throw new Error('--node-deployment cannot be combined with --leader-election: each node runs its own resizer for its own volumes');
    const autoGrowFlags = autoGrow();
    return Object.freeze({
      showVersion: showVersion.value,
      kubeconfig: kubeconfig.value,
      master: master.value,
      csiAddress: csiAddress.value,
      ...timeouts(),
      workers: workers.value,
      resyncPeriodMs: resync.value,
      retryIntervalStartMs: retryStart.value,
      retryIntervalMaxMs: retryMax.value,
      handleVolumeInUseError: inUse.value,
      extraModifyMetadata: extraModify.value,
      leaderElection: leaderElection.value,
      nodeDeployment: nodeDeployment.value,
      ...leaderElectionSettings(),
      kubeApiQps: qps.value,
      kubeApiBurst: burst.value,
      ...diagnostics(),
      automaxprocs: automaxprocs.value.enabled,
      autoGrow: autoGrowFlags,
      ...loggingFlags,
      featureGateSettings: new Map(gates.value.entries),
      positionalArgs: Object.freeze([...positionalArgs]),
    });
  };
}

/** --timeout, --resize-timeout and --modify-timeout, and the per-call timeouts they give. */
function defineTimeoutFlags(flags: FlagSet): () => Pick<CommandLine, 'timeoutMs' | 'resizeTimeoutMs' | 'modifyTimeoutMs'> {
  const timeout = flags.durationMs(
    'timeout',
    10_000,
    'Timeout for waiting for CSI driver socket. If set explicitly on the command line, this value also overrides --resize-timeout and --modify-timeout as the per-call timeout for ControllerExpandVolume and ControllerModifyVolume.',
  );
  const resizeTimeout = flags.durationMs(
    'resize-timeout',
    10_000,
    'Timeout for ControllerExpandVolume calls. Ignored if --timeout is set explicitly on the command line.',
  );
  const modifyTimeout = flags.durationMs(
    'modify-timeout',
    10_000,
    'Timeout for ControllerModifyVolume calls. Ignored if --timeout is set explicitly on the command line.',
  );
  // --timeout replaces both per-call timeouts only when the command line names it (Go's
  // flag.Visit), even at its default value: its default must not hide the other two (§2.1).
  return () => {
    const timeoutGiven = timeout.isSet;
    return {
      timeoutMs: timeout.value,
      resizeTimeoutMs: timeoutGiven ? timeout.value : resizeTimeout.value,
      modifyTimeoutMs: timeoutGiven ? timeout.value : modifyTimeout.value,
    };
  };
}

/** The Lease's namespace, timings and labels (--leader-election itself is read with --node-deployment). */
function defineLeaderElectionFlags(
  flags: FlagSet,
): () => Pick<
  CommandLine,
  'leaderElectionNamespace' | 'leaderElectionLeaseDurationMs' | 'leaderElectionRenewDeadlineMs' | 'leaderElectionRetryPeriodMs' | 'leaderElectionLabels'
> {
  const leNamespace = flags.string(
    'leader-election-namespace',
    '',
    'Namespace where the leader election resource lives. Defaults to the pod namespace if not set.',
  );
  const leLease = flags.durationMs(
    'leader-election-lease-duration',
    15_000,
    'Duration, in seconds, that non-leader candidates will wait to force acquire leadership. Defaults to 15 seconds.',
  );
  const leRenew = flags.durationMs(
    'leader-election-renew-deadline',
    10_000,
    'Duration, in seconds, that the acting leader will retry refreshing leadership before giving up. Defaults to 10 seconds.',
  );
  const leRetry = flags.durationMs(
    'leader-election-retry-period',
    5_000,
    'Duration, in seconds, the LeaderElector clients should wait between tries of actions. Defaults to 5 seconds.',
  );
  const leLabels = flags.var(
    new MapStringStringValue(':'),
    'leader-election-labels',
    "List of labels to add to lease when given replica becomes leader. Formatted as a comma seperated list of key:value labels. Example: 'my-label:my-value,my-second-label:my-second-value'",
  );
  return () => ({
    leaderElectionNamespace: leNamespace.value,
    leaderElectionLeaseDurationMs: leLease.value,
    leaderElectionRenewDeadlineMs: leRenew.value,
    leaderElectionRetryPeriodMs: leRetry.value,
    leaderElectionLabels: Object.freeze(Object.fromEntries(leLabels.value.entries)),
  });
}

/** Where the HTTP server for metrics and the leader health check listens, and the metrics path. */
function defineDiagnosticsFlags(flags: FlagSet): () => Pick<CommandLine, 'httpEndpoint' | 'metricsAddress' | 'metricsPath'> {
  const httpEndpoint = flags.string(
    'http-endpoint',
    '',
    'The TCP network address where the HTTP server for diagnostics, including metrics and leader election health check, will listen (example: `:8080`). The default is empty string, which means the server is disabled. Only one of `--metrics-address` and `--http-endpoint` can be set.',
  );
  const metricsAddress = flags.string(
    'metrics-address',
    '',
    '(deprecated) The TCP network address where the prometheus metrics endpoint will listen (example: `:8080`). The default is empty string, which means metrics endpoint is disabled. Only one of `--metrics-address` and `--http-endpoint` can be set.',
  );
  const metricsPath = flags.string('metrics-path', '/metrics', 'The HTTP path where prometheus metrics will be exposed. Default is `/metrics`.');
  return () => ({ httpEndpoint: httpEndpoint.value, metricsAddress: metricsAddress.value, metricsPath: metricsPath.value });
}

/** Parses argv (without node and the script) into flag values. Throws ConfigError carrying the usage text. */
export function parseCommandLine(args: readonly string[], programName = 'csi-resizer', extraFlags?: (flags: FlagSet) => void): CommandLine {
  const newFlags = () => {
    const flags = new FlagSet(programName);
    const read = defineFlags(flags);
    extraFlags?.(flags);
    return { flags, read };
  };
  const { flags, read } = newFlags();
  try {
    const { rest } = flags.parse(args);
    return read(rest);
  } catch (err) {
    const help = err instanceof FlagError && err.kind === 'help';
    // The usage only when it is shown (building it costs start-up CPU), from flags as defined.
    throw new ConfigError(messageOf(err), newFlags().flags.usage(), help, { cause: err });
  }
}

/**
 * Resolves `--feature-gates` (the sidecar's "Failed to set feature gates" step). Throws
 * FeatureGateError; returns the warnings component-base logs for GA and deprecated gates.
 */
export function applyFeatureGates(commandLine: CommandLine): { config: Config; warnings: GateWarning[] } {
  const { gates, warnings } = resolveFeatureGates(commandLine.featureGateSettings);
  return { config: Object.freeze({ ...commandLine, gates }), warnings };
}

/** Both steps at once (tests, in-process runs). A gate error is a ConfigError whose cause is the FeatureGateError. */
export function parseConfig(args: readonly string[], programName = 'csi-resizer', extraFlags?: (flags: FlagSet) => void): Config {
  const commandLine = parseCommandLine(args, programName, extraFlags);
  try {
    return applyFeatureGates(commandLine).config;
  } catch (err) {
    if (!(err instanceof FeatureGateError)) throw err;
    throw new ConfigError(err.message, usageText(programName), false, { cause: err });
  }
}

/** The sidecar's flags as -h describes them, for the generated docs/flags.md. */
export function flagDescriptions(programName = 'csi-resizer'): FlagDescription[] {
  const flags = new FlagSet(programName);
  defineFlags(flags);
  return flags.describe();
}

/** The usage text, for -h. */
export function usageText(programName = 'csi-resizer'): string {
  const flags = new FlagSet(programName);
  defineFlags(flags);
  return flags.usage();
}

/** strconv's error texts, which flag values of custom types pass through unchanged. */
function strconvError(fn: string, raw: string, reason: 'invalid syntax' | 'value out of range'): Error {
  return new Error(`strconv.${fn}: parsing ${JSON.stringify(raw)}: ${reason}`);
}

/**
 * `-automaxprocs`: Go's flag.BoolFunc as csi-lib-utils registers it: a bool flag with no type
 * word and no default in the usage, whose bad values fail with strconv.ParseBool's own error.
 */
class BoolFuncValue implements FlagValue {
  readonly isBoolFlag = true;
  readonly typeName = '';
  readonly zeroString = '';
  enabled = false;
  set(raw: string): void {
    if (raw === '') {
      this.enabled = true;
      return;
    }
    const truthy = ['1', 't', 'T', 'TRUE', 'true', 'True'];
    const falsy = ['0', 'f', 'F', 'FALSE', 'false', 'False'];
    if (!truthy.includes(raw) && !falsy.includes(raw)) throw strconvError('ParseBool', raw, 'invalid syntax');
    this.enabled = truthy.includes(raw);
  }
  toString(): string {
    return '';
  }
}
