// The `csi-resizer` command (§1): parse flags, build the app, serve diagnostics, run the
// controllers directly or under leader election, and map every failure to the reference's
// message and exit code. Graceful shutdown (gate ReleaseLeaderElectionOnExit, on by default
// here): the first SIGTERM/SIGINT stops taking work, waits up to --timeout for what is in flight,
// releases the Lease and exits 0; a second signal exits 1 at once.
import { basename } from 'node:path';
import { applyFeatureGates, ConfigError, parseCommandLine, type CommandLine, type Config } from './app/config.js';
import type { App } from './app/build.js';
import { FeatureGateError } from './app/feature-gates.js';
import { LoggingConfigError, type LoggingFlags } from './app/logging-flags.js';
import { readVersion } from './app/version.js';
import { dieOnSignals, eitherSignal, ExitCode, handleShutdownSignals, leaderIdentity, leaseNamespace, Lifecycle, settleWithin } from './app/lifecycle.js';
import type { HttpKubeClient } from './kube/client.js';
import type { LeaderElector } from './kube/leader-election.js';
import type { DiagnosticsServer, HealthResult } from './observability/http-server.js';
import { createLogOutput } from './observability/log-output.js';
import { createLogger, type Logger } from './observability/logger.js';
import type { Metrics } from './observability/metrics.js';

// Everything past flag parsing is imported on demand: --version, -h and flag errors answer fast
// and never depend on the controllers' modules loading.
const load = () =>
  Promise.all([
    import('./app/build.js'),
    import('./kube/client.js'),
    import('./kube/rate-limiter.js'),
    import('./kube/leader-election.js'),
    import('./model/pvc.js'),
    import('./app/startup-error.js'),
    import('./observability/http-server.js'),
    import('./observability/metrics.js'),
    import('./observability/resize-state.js'),
    import('./app/permission-check.js'),
  ]).then(([build, client, rateLimiter, leaderElection, pvc, startupError, httpServer, metrics, resizeState, permissionCheck]) => ({
    ...build, ...client, ...rateLimiter, ...leaderElection, ...pvc, ...startupError, ...httpServer, ...metrics, ...resizeState, ...permissionCheck,
  }));
type Modules = Awaited<ReturnType<typeof load>>;

/** client-go's HealthzAdaptor tolerance, as csi-lib-utils passes it. */
const LEADER_HEALTH_TOLERANCE_MS = 20_000;

/** The name the usage and --version print: the command as invoked, `csi-resizer` for main.js/main.ts. */
function programName(): string {
  const invoked = basename(process.argv[1] ?? 'csi-resizer').replace(/\.(c|m)?(js|ts)$/, '');
  return invoked === '' || invoked === 'main' ? 'csi-resizer' : invoked;
}

/** The logger the flags describe: format, -v, --vmodule and the stream options of that format. */
function createConfiguredLogger(config: LoggingFlags): Logger {
  const json = config.loggingFormat === 'json';
  const output = createLogOutput({
    splitStream: json ? config.logJsonSplitStream : config.logTextSplitStream,
    infoBufferBytes: json ? config.logJsonInfoBufferBytes : config.logTextInfoBufferBytes,
    flushIntervalMs: config.logFlushFrequencyMs,
  });
  return createLogger({ verbosity: config.verbosity, format: config.loggingFormat, vmodule: config.vmodule, output });
}

function exit(code: number): never {
  process.exit(code);
}

function parseOrExit(args: readonly string[], program: string): CommandLine {
  try {
    return parseCommandLine(args, program);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    if (err.helpRequested) {
      // Go's flag package: usage on stderr, exit 0.
      process.stderr.write(err.usage.endsWith('\n') ? err.usage : `${err.usage}\n`);
      exit(ExitCode.Ok);
    }
    const log = createLogger({ verbosity: 0, format: 'text' });
    if (err.cause instanceof LoggingConfigError) {
      log.error('LoggingConfiguration is invalid', { err: err.message });
      exit(ExitCode.Failure);
    }
    process.stderr.write(`${err.message}\n${err.usage.endsWith('\n') ? err.usage : `${err.usage}\n`}`);
    exit(ExitCode.Usage);
  }
}

/** The sidecar's "Failed to set feature gates" step: after the version line, before anything connects. */
function applyGatesOrExit(commandLine: CommandLine, log: Logger): Config {
  try {
    const { config, warnings } = applyFeatureGates(commandLine);
    for (const w of warnings) log.info(w.message, { featureGate: w.featureGate, value: w.value });
    return config;
  } catch (err) {
    if (!(err instanceof FeatureGateError)) throw err;
    log.error('Failed to set feature gates', { err: err.message });
    exit(ExitCode.Failure);
  }
}

async function main(): Promise<void> {
  const program = programName();
  const [first, ...rest] = process.argv.slice(2);
  if (first === 'doctor' || first === 'explain') {
    const { runSubcommand } = await import('./app/commands.js');
    const write = (stream: NodeJS.WriteStream) => (s: string) => void stream.write(s);
    exit(await runSubcommand(first, rest, { program, out: write(process.stdout), err: write(process.stderr) }));
  }
  const commandLine = parseOrExit(process.argv.slice(2), program);
  const version = readVersion(import.meta.url);
  if (commandLine.showVersion) {
    process.stdout.write(`${program} ${version}\n`);
    exit(ExitCode.Ok);
  }

  const log = createConfiguredLogger(commandLine);
  log.info('Version', { version });
  if (commandLine.positionalArgs.length > 0) log.warn('Ignoring arguments after the flags', { args: commandLine.positionalArgs });
  if (commandLine.metricsAddress !== '' && commandLine.httpEndpoint !== '') {
    log.error('Only one of `--metrics-address` and `--http-endpoint` can be set.');
    exit(ExitCode.Failure);
  }
  const listenAddress = commandLine.metricsAddress || commandLine.httpEndpoint;
  const config = applyGatesOrExit(commandLine, log);

  const lifecycle = new Lifecycle();
  // The process lives until it decides to exit, whatever else holds the event loop.
  setInterval(() => {}, 2 ** 30);
  // Signal handlers go in before anything slow: as PID 1 (a container's entrypoint) a signal
  // without a handler is ignored by the kernel, and Node installs none that exits.
  if (config.gates.releaseLeaderElectionOnExit) {
    handleShutdownSignals({
      onShutdown: (signalName) => {
        log.infof('Received SIGTERM or SIGINT signal, shutting down controller.');
        lifecycle.beginShutdown(signalName);
      },
      onForce: (signalName) => {
        log.info('Received second signal, exiting immediately', { signal: signalName });
        exit(ExitCode.Failure);
      },
    });
  } else {
    // Without the gate, SIGTERM and SIGINT end the process at once as the Go sidecar's runtime
    // does (killed by the signal; exit 2 as PID 1), and the Lease expires instead of being released.
    dieOnSignals();
  }

  const m = await load();
  const { startApp, StartupError, registerResizeStateMetrics, requestedBytes, startHttpServer, LEADER_ELECTION_HEALTH_PATH } = m;
  const metrics = m.createMetrics();

  let app: App;
  try {
    app = await startApp(config, { log, metrics, version }, lifecycle.workSignal);
  } catch (err) {
    if (lifecycle.shuttingDown) exit(ExitCode.Ok);
    if (err instanceof StartupError) {
      // upstream's fixed message with the cause in `err`; exit code 255 is klog.Fatalf's.
      if (err.exitCode === 255) log.fatalf(err.message);
      else log.error(err.message, err.cause === undefined ? undefined : { err: err.cause });
      exit(err.exitCode);
    }
    throw err;
  }
  app.csi.onFatal((err) => {
    log.error('CSI driver name changed, exiting', { err: err.message });
    exit(ExitCode.Failure);
  });

  const resizeState = registerResizeStateMetrics({
    registry: metrics.registry, driverName: app.driverName, pvcs: app.pvcs.store, pvs: app.pvs.store, requeues: app.resizeRequeues,
  });
  app.pvcs.addEventHandler({
    update: (before, after) => {
      try {
        if (requestedBytes(before) !== requestedBytes(after)) resizeState.requestChanged(after);
      } catch {
        // a malformed quantity is the controller's to report
      }
    },
  });

  // The RBAC check has a client (and rate limiter) of its own, so its dozen reviews never take
  // the tokens the first resizes need.
  const rateLimit = m.clientRateLimit(config.kubeApiQps, config.kubeApiBurst); // startApp has checked it
  const checkClient = new m.HttpKubeClient({
    kubeConfig: app.clientConfig,
    qps: rateLimit.qps,
    burst: Math.max(rateLimit.burst, 20),
    userAgent: 'csi-resizer/permission-check',
  });
  void m.checkPermissions(checkClient, {
    pods: app.watchesPods,
    volumeAttributesClasses: app.modifies,
    leaseNamespace: config.leaderElection ? leaseNamespace(config.leaderElectionNamespace) : undefined,
    node: config.nodeDeployment,
  }, log, lifecycle.workSignal).finally(() => checkClient.close());

  const elector = config.leaderElection ? createElector(m, config, app, { log, metrics, lifecycle }) : undefined;

  let server: DiagnosticsServer | undefined;
  if (listenAddress !== '') {
    const healthChecks = new Map<string, () => HealthResult>();
    // The health path only with --http-endpoint, never with the deprecated --metrics-address.
    if (elector && config.httpEndpoint !== '') {
      healthChecks.set(LEADER_ELECTION_HEALTH_PATH, () => elector.elector.healthCheck(LEADER_HEALTH_TOLERANCE_MS));
    }
    try {
      log.info('ServeMux listening', { address: listenAddress });
      server = await startHttpServer({ address: listenAddress, metricsPath: config.metricsPath, registry: metrics.registry, healthChecks, log });
    } catch (err) {
      log.error('Failed to start HTTP server', { err, address: listenAddress, metricsPath: config.metricsPath });
      exit(ExitCode.Failure);
    }
  }

  const stop = async (code: number): Promise<never> => {
    await server?.close();
    elector?.client.close();
    app.close();
    exit(code);
  };

  if (elector) {
    const electorDone = elector.elector.run(lifecycle.rootSignal);
    await lifecycle.whenShutdownBegins();
    // Draining: the leader's controllers stop taking keys; reconciles in flight get --timeout,
    // then finish() cancels them and the elector releases the Lease.
    const running = elector.running();
    if (running && (await settleWithin(running, config.timeoutMs)) === 'timedOut') {
      log.info('In-flight operations did not finish within --timeout; exiting anyway', { timeoutMs: config.timeoutMs });
    }
    lifecycle.finish(); // the elector releases the Lease
    await settleWithin(electorDone, config.leaderElectionRenewDeadlineMs);
    await stop(ExitCode.Ok);
  }

  // The root signal aborts once the drain is over or its bound has passed: it cancels what is
  // still in flight.
  const running = app.run(lifecycle.workSignal, lifecycle.rootSignal).then(
    () => undefined,
    (err: unknown) => err,
  );
  const outcome = await Promise.race([running.then((err) => ({ kind: 'stopped' as const, err })), lifecycle.whenShutdownBegins().then(() => ({ kind: 'signal' as const }))]);
  if (outcome.kind === 'stopped' && !lifecycle.shuttingDown) {
    log.error('Controllers stopped unexpectedly', { err: outcome.err });
    await stop(ExitCode.Failure);
  }
  if ((await settleWithin(running, config.timeoutMs)) === 'timedOut') {
    log.info('In-flight operations did not finish within --timeout; exiting anyway', { timeoutMs: config.timeoutMs });
  }
  lifecycle.finish();
  await stop(ExitCode.Ok);
}

interface ElectorHandle {
  readonly elector: LeaderElector;
  readonly client: HttpKubeClient;
  /** The controllers' run while leading, or undefined if never elected. */
  running(): Promise<void> | undefined;
}

function createElector(m: Modules, config: Config, app: App, deps: { log: Logger; metrics: Metrics; lifecycle: Lifecycle }): ElectorHandle {
  const { log, metrics, lifecycle } = deps;
  // Its own client and rate limiter, so controller traffic never starves lease renewals.
  let client: HttpKubeClient;
  try {
    client = new m.HttpKubeClient({
      kubeConfig: app.clientConfig,
      ...m.clientRateLimit(config.kubeApiQps, config.kubeApiBurst),
      userAgent: 'csi-resizer/leader-election',
    });
  } catch (err) {
    log.error('Failed to create leaderelection client', { err });
    exit(ExitCode.Failure);
  }

  let running: Promise<void> | undefined;
  const name = m.leaseNameForDriver(app.driverName);
  const namespace = leaseNamespace(config.leaderElectionNamespace);
  const identity = leaderIdentity();
  let elector: LeaderElector;
  try {
    elector = new m.LeaderElector({
      client,
      namespace,
      name,
      identity,
      leaseDurationMs: config.leaderElectionLeaseDurationMs,
      renewDeadlineMs: config.leaderElectionRenewDeadlineMs,
      retryPeriodMs: config.leaderElectionRetryPeriodMs,
      labels: { ...config.leaderElectionLabels },
      releaseOnCancel: config.gates.releaseLeaderElectionOnExit,
      log,
      metrics,
      callbacks: {
        onStartedLeading: (leading) => {
          // Stop taking work on shutdown or when leadership ends; cut in-flight work short only
          // when leadership ends or the drain bound has passed (the root signal).
          const work = eitherSignal(leading, lifecycle.workSignal);
          const cancel = eitherSignal(leading, lifecycle.rootSignal);
          const dispose = () => {
            work.dispose();
            cancel.dispose();
          };
          running = app.run(work.signal, cancel.signal).then(
            () => dispose(),
            (err: unknown) => {
              dispose();
              if (!lifecycle.shuttingDown && !leading.aborted) {
                log.error('Controllers stopped unexpectedly', { err });
                exit(ExitCode.Failure);
              }
            },
          );
        },
        onStoppedLeading: () => {
          // Losing the lease while still wanted: exit so a fresh start competes again. During
          // shutdown, stopping is what we asked for.
          if (!lifecycle.shuttingDown) exit(ExitCode.Failure);
        },
      },
    });
  } catch (err) {
    // client-go's RunOrDie panics on these settings, so the Go sidecar exits 2.
    log.error('Invalid leader election configuration', { err });
    exit(err instanceof m.LeaderElectionConfigError ? ExitCode.Panic : ExitCode.Failure);
  }
  log.info('Leader election enabled', { lease: `${namespace}/${name}`, identity });
  return { elector, client, running: () => running };
}

await main();
