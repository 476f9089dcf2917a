// The `csi-resizer` command (§1): parse flags, build the app, serve diagnostics, run the
// controllers directly or under leader election, and map every failure to the reference's
// message and exit code. Graceful shutdown (gate ReleaseLeaderElectionOnExit, on by default
// here): the first SIGTERM/SIGINT stops taking work, waits up to --timeout for what is in flight,
// releases the Lease and exits 0; a second signal exits 1 at once.
import { basename } from 'node:path';
import { ConfigError, parseConfig, type Config } from './app/config.js';
import type { App } from './app/build.js';
import { FeatureGateError } from './app/feature-gates.js';
import { readVersion } from './app/version.js';
import { eitherSignal, ExitCode, handleShutdownSignals, leaderIdentity, leaseNamespace, Lifecycle, settleWithin } from './app/lifecycle.js';
import type { HttpKubeClient } from './kube/client.js';
import type { LeaderElector } from './kube/leader-election.js';
import type { DiagnosticsServer, HealthResult } from './observability/http-server.js';
import { createLogger, type Logger } from './observability/logger.js';
import type { Metrics } from './observability/metrics.js';

// Everything past flag parsing is imported on demand: --version, -h and flag errors answer fast
// and never depend on the controllers' modules loading.
const load = () =>
  Promise.all([
    import('./app/build.js'),
    import('./kube/client.js'),
    import('./kube/leader-election.js'),
    import('./model/pvc.js'),
    import('./resize/select-resizer.js'),
    import('./observability/http-server.js'),
    import('./observability/metrics.js'),
    import('./observability/resize-state.js'),
    import('./app/permission-check.js'),
  ]).then(([build, client, leaderElection, pvc, selectResizer, httpServer, metrics, resizeState, permissionCheck]) => ({
    ...build, ...client, ...leaderElection, ...pvc, ...selectResizer, ...httpServer, ...metrics, ...resizeState, ...permissionCheck,
  }));
type Modules = Awaited<ReturnType<typeof load>>;

/** client-go's HealthzAdaptor tolerance, as csi-lib-utils passes it. */
const LEADER_HEALTH_TOLERANCE_MS = 20_000;

/** The name the usage and --version print: the command as invoked, `csi-resizer` for main.js/main.ts. */
function programName(): string {
  const invoked = basename(process.argv[1] ?? 'csi-resizer').replace(/\.(c|m)?(js|ts)$/, '');
  return invoked === '' || invoked === 'main' ? 'csi-resizer' : invoked;
}

function exit(code: number): never {
  process.exit(code);
}

function parseOrExit(args: readonly string[], program: string): Config {
  try {
    return parseConfig(args, program);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    if (err.helpRequested) {
      // Go's flag package: usage on stderr, exit 0.
      process.stderr.write(err.usage.endsWith('\n') ? err.usage : `${err.usage}\n`);
      exit(ExitCode.Ok);
    }
    const log = createLogger({ verbosity: 0, format: 'text' });
    if (err.cause instanceof FeatureGateError) {
      log.error('Failed to set feature gates', { err: err.message });
      exit(ExitCode.Failure);
    }
    if (/logging-format/.test(err.message)) {
      log.error('LoggingConfiguration is invalid', { err: err.message });
      exit(ExitCode.Failure);
    }
    process.stderr.write(`${err.message}\n${err.usage.endsWith('\n') ? err.usage : `${err.usage}\n`}`);
    exit(ExitCode.Usage);
  }
}

async function main(): Promise<void> {
  const program = programName();
  const config = parseOrExit(process.argv.slice(2), program);
  const version = readVersion(import.meta.url);
  if (config.showVersion) {
    process.stdout.write(`${program} ${version}\n`);
    exit(ExitCode.Ok);
  }

  const log = createLogger({ verbosity: config.verbosity, format: config.loggingFormat });
  log.info('Version', { version });
  if (config.positionalArgs.length > 0) log.warn('Ignoring arguments after the flags', { args: config.positionalArgs });
  if (config.metricsAddress !== '' && config.httpEndpoint !== '') {
    log.error('Only one of `--metrics-address` and `--http-endpoint` can be set.');
    exit(ExitCode.Failure);
  }
  const listenAddress = config.metricsAddress || config.httpEndpoint;

  const m = await load();
  const { startApp, StartupError, registerResizeStateMetrics, requestedBytes, startHttpServer, LEADER_ELECTION_HEALTH_PATH } = m;
  const metrics = m.createMetrics();
  const lifecycle = new Lifecycle();
  // The process lives until it decides to exit, whatever else holds the event loop.
  setInterval(() => {}, 2 ** 30);
  if (config.gates.releaseLeaderElectionOnExit) {
    handleShutdownSignals({
      onShutdown: (signalName) => {
        log.info('Received signal, shutting down', { signal: signalName });
        lifecycle.beginShutdown(signalName);
      },
      onForce: (signalName) => {
        log.info('Received second signal, exiting immediately', { signal: signalName });
        exit(ExitCode.Failure);
      },
    });
  }
  // Without the gate, SIGTERM and SIGINT keep Node's default: the process ends at once, as the Go
  // sidecar does without a signal handler, and the Lease expires instead of being released.

  let app: App;
  try {
    app = await startApp(config, { log, metrics, version }, lifecycle.workSignal);
  } catch (err) {
    if (lifecycle.shuttingDown) exit(ExitCode.Ok);
    if (err instanceof StartupError) {
      log.error(err.message, err.cause === undefined ? undefined : { err: err.cause });
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
  const checkClient = new m.HttpKubeClient({
    kubeConfig: app.clientConfig,
    qps: config.kubeApiQps,
    burst: Math.max(config.kubeApiBurst, 20),
    userAgent: 'csi-resizer/permission-check',
  });
  void m.checkPermissions(checkClient, {
    pods: app.watchesPods,
    volumeAttributesClasses: app.modifies,
    leaseNamespace: config.leaderElection ? leaseNamespace(config.leaderElectionNamespace) : undefined,
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
      server = await startHttpServer({ address: listenAddress, metricsPath: config.metricsPath, registry: metrics.registry, healthChecks, log });
    } catch (err) {
      log.error('Failed to start HTTP server', { address: listenAddress, err });
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
      qps: config.kubeApiQps,
      burst: config.kubeApiBurst,
      userAgent: 'csi-resizer/leader-election',
    });
  } catch (err) {
    log.error('Failed to create leader election client', { err });
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
      log: log.child({ component: 'leader-election' }),
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
    log.error('Invalid leader election configuration', { err });
    exit(ExitCode.Failure);
  }
  log.info('Leader election enabled', { lease: `${namespace}/${name}`, identity });
  return { elector, client, running: () => running };
}

await main();
