// The sidecar process once its flags are read (§1 from step 6 on, §5): it owns SIGTERM and
// SIGINT, the metrics registry, the app, the startup RBAC check, leader election, the
// diagnostics HTTP server, and the one drain-then-finish path that both a shutdown signal and a
// lost Lease take. It never exits the process: it resolves to how the process ends, and
// app/exit.ts turns that into a message and an exit code.
//
// Two kinds of ending:
// - drained: the controllers stop taking keys (the work signal, or the lost Lease), reconciles in
//   flight get up to --timeout, then the root signal cancels what is left and the elector
//   releases the Lease (ReleaseLeaderElectionOnExit); the HTTP server and the clients close.
// - at once: a second signal, the driver's name changing, the controllers failing on their own.
//   Nothing more is waited for (upstream exits there too, and the Lease is left to expire).
//
// This module imports the app's modules only when it runs (loadProcessParts): it is loaded on the
// path that answers -h, --version and flag errors, which must not depend on them.
import type { App, AppDeps } from './build.js';
import type { Elector } from './build/elector.js';
import type { Config } from '../flags/config.js';
import type { ProcessEnd } from './exit.js';
import { linkedSignal, sleep } from '../base/signals.js';
import { settleWithin } from '../base/settle-within.js';
import { Lifecycle } from './lifecycle.js';
import { dieOnSignals, handleShutdownSignals, type ProcessSignals } from './os-signals.js';
import type { DiagnosticsServer, HealthResult } from '../observability/http-server.js';
import type { Logger } from '../observability/log/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { StartupError } from './startup-error.js';

/** client-go's HealthzAdaptor tolerance, as csi-lib-utils passes it. */
export const LEADER_HEALTH_TOLERANCE_MS = 20_000;

export interface DiagnosticsOptions {
  readonly address: string;
  readonly metricsPath: string;
  readonly registry: Metrics['registry'];
  /** The leader-election health check, served on its path (only with --http-endpoint). */
  readonly leaderHealth?: () => HealthResult;
  /** Called before each scrape. */
  readonly beforeScrape?: () => void;
  readonly log: Logger;
}

/** The concrete pieces the runner starts; fakes in tests. */
export interface ProcessParts {
  /** The registry and the resizer's own metrics, without the process_* and nodejs_* collectors. */
  createMetrics(): Metrics;
  /** Adds the process_* and nodejs_* collectors to the registry (their code loads then). */
  registerProcessMetrics(registry: Metrics['registry']): Promise<void>;
  startApp(config: Config, deps: AppDeps, signal: AbortSignal): Promise<App>;
  startHttpServer(options: DiagnosticsOptions): Promise<DiagnosticsServer>;
  /** Whether a startup failure is a StartupError (upstream's message and exit code) or a bug. */
  isStartupError(err: unknown): err is StartupError;
}

/** The real pieces, imported on first use. */
export async function loadProcessParts(): Promise<ProcessParts> {
  const [build, metrics, http, startupError] = await Promise.all([
    import('./build.js'),
    import('../observability/metrics.js'),
    import('../observability/http-server.js'),
    import('./startup-error.js'),
  ]);
  return {
    createMetrics: () => metrics.createMetrics(),
    registerProcessMetrics: (registry) => metrics.registerProcessMetrics(registry),
    startApp: build.startApp,
    startHttpServer: ({ leaderHealth, ...options }) =>
      http.startHttpServer({ ...options, healthChecks: new Map(leaderHealth ? [[http.LEADER_ELECTION_HEALTH_PATH, leaderHealth]] : []) }),
    isStartupError: (err): err is StartupError => err instanceof startupError.StartupError,
  };
}

export interface ProcessRunnerOptions {
  readonly config: Config;
  readonly log: Logger;
  readonly version: string;
  /** Where SIGTERM and SIGINT arrive: `process`, or a fake. */
  readonly signals: ProcessSignals;
  /** The two-phase stop; given by a caller that also stops the runner itself (the in-process test harness). */
  readonly lifecycle?: Lifecycle;
  /** Default: loadProcessParts(). */
  readonly parts?: ProcessParts;
  /** Default: PERMISSION_CHECK_TIMING. */
  readonly permissionCheckTiming?: PermissionCheckTiming;
}

/**
 * When the startup RBAC check runs and the process_* and nodejs_* collectors are set up (only with
 * a metrics endpoint: without one nothing could read them). Neither is needed for the first
 * resizes, so they wait until the controllers' caches have settled (synced, or refused for want of
 * an RBAC rule) and then `afterSyncMs` more, leaving the first resizes the CPU and the API server
 * (the check's dozen reviews used to overlap them); at the latest `latestMs` after the app
 * started, since a standby replica has no caches (and with --node-deployment a refused PV list
 * keeps the claims' informer from starting). A scrape before then sets up the collectors first, so
 * every scrape has them.
 */
export interface PermissionCheckTiming {
  readonly afterSyncMs: number;
  readonly latestMs: number;
}
export const PERMISSION_CHECK_TIMING: PermissionCheckTiming = { afterSyncMs: 1_000, latestMs: 10_000 };

/** Runs the sidecar until it ends; resolves to how it ended. Rejects only on a bug (an error nobody classified). */
export async function runProcess(options: ProcessRunnerOptions): Promise<ProcessEnd> {
  const { config, log } = options;
  const lifecycle = options.lifecycle ?? new Lifecycle();
  let endAtOnce!: (end: ProcessEnd) => void;
  const endedAtOnce = new Promise<ProcessEnd>((resolve) => {
    endAtOnce = resolve;
  });

  // The process lives until it decides to end, whatever else holds the event loop.
  const keepAlive = setInterval(() => {}, 2 ** 30);
  // Signal handlers go in before anything slow: as PID 1 (a container's entrypoint) a signal
  // without a handler is ignored by the kernel, and Node installs none that exits.
  const stopListening = config.gates.releaseLeaderElectionOnExit
    ? handleShutdownSignals({
        proc: options.signals,
        onShutdown: (signalName) => {
          log.infof('Received SIGTERM or SIGINT signal, shutting down controller.');
          lifecycle.beginShutdown(signalName);
        },
        onForce: (signal) => endAtOnce({ kind: 'forced', signal }),
      })
    : // Without the gate, SIGTERM and SIGINT end the process at once as the Go sidecar's runtime
      // does (killed by the signal; exit 2 as PID 1), and the Lease expires instead of being released.
      dieOnSignals({ proc: options.signals });
  try {
    return await Promise.race([endedAtOnce, run(options, lifecycle, endAtOnce)]);
  } finally {
    stopListening();
    clearInterval(keepAlive);
  }
}

async function run(options: ProcessRunnerOptions, lifecycle: Lifecycle, endAtOnce: (end: ProcessEnd) => void): Promise<ProcessEnd> {
  const { config, log, version } = options;
  const parts = options.parts ?? (await loadProcessParts());
  const metrics = parts.createMetrics();
  const address = config.metricsAddress || config.httpEndpoint;
  const registerProcessMetrics = processMetricsOnce(address === '' ? undefined : () => parts.registerProcessMetrics(metrics.registry), log);

  let app: App;
  try {
    app = await parts.startApp(config, { log, metrics, version }, lifecycle.workSignal);
  } catch (err) {
    // A signal during startup: what failed was cut short on purpose.
    if (lifecycle.shuttingDown) return { kind: 'stopped' };
    if (parts.isStartupError(err)) return { kind: 'startupFailed', error: err };
    throw err;
  }
  app.onFatal((error) => endAtOnce({ kind: 'driverRenamed', error }));
  void afterStartup(app, lifecycle.workSignal, options.permissionCheckTiming ?? PERMISSION_CHECK_TIMING).then(async (running) => {
    if (!running) return;
    await registerProcessMetrics();
    await app.checkPermissions(lifecycle.workSignal);
  });

  let leadershipLost!: () => void;
  const lost = new Promise<'leadershipLost'>((resolve) => {
    leadershipLost = () => resolve('leadershipLost');
  });
  const controllers = controllerRuns(app, lifecycle, endAtOnce);
  const runControllers = (leading: AbortSignal) => controllers.start(leading);

  let elector: Elector | undefined;
  if (config.leaderElection) {
    try {
      elector = app.createElector({
        onStartedLeading: runControllers,
        // Losing the Lease while still wanted ends the process, so that a fresh start competes
        // again. During shutdown, stopping is what we asked for.
        onStoppedLeading: () => {
          if (!lifecycle.shuttingDown) leadershipLost();
        },
      });
    } catch (err) {
      if (parts.isStartupError(err)) return { kind: 'startupFailed', error: err };
      throw err;
    }
  }

  let server: DiagnosticsServer | undefined;
  if (address !== '') {
    // The health path only with --http-endpoint, never with the deprecated --metrics-address.
    const leaderElector = elector;
    const leaderHealth = leaderElector && config.httpEndpoint !== '' ? () => leaderElector.healthCheck(LEADER_HEALTH_TOLERANCE_MS) : undefined;
    try {
      log.info('ServeMux listening', { address });
      server = await parts.startHttpServer({
        address,
        metricsPath: config.metricsPath,
        registry: metrics.registry,
        leaderHealth,
        beforeScrape: registerProcessMetrics,
        log,
      });
    } catch (error) {
      return { kind: 'httpServerFailed', error, address, metricsPath: config.metricsPath };
    }
  }

  const electorDone = elector?.run(lifecycle.rootSignal);
  if (!elector) runControllers(new AbortController().signal);
  const reason = await Promise.race([lifecycle.whenShutdownBegins().then(() => 'signal' as const), lost]);

  // The one drain-then-finish path. Draining: the controllers have stopped taking keys;
  // reconciles in flight get --timeout. After a lost Lease there is no drain: another replica may
  // already lead, so nothing cancelled here may still write (an event for the cancelled call,
  // say); upstream exits at once too (§1).
  const running = controllers.running();
  if (reason === 'signal' && running && (await settleWithin(running, config.timeoutMs)) === 'timedOut') {
    log.info('In-flight operations did not finish within --timeout; exiting anyway', { timeoutMs: config.timeoutMs });
  }
  lifecycle.finish(); // cancels what is still in flight; the elector releases the Lease
  if (electorDone) await settleWithin(electorDone, config.leaderElectionRenewDeadlineMs);
  await server?.close();
  app.close();
  return reason === 'signal' ? { kind: 'stopped' } : { kind: 'leadershipLost' };
}

/**
 * The process metrics' set-up, run once: a scrape during the set-up waits for the same promise.
 * `register` is undefined when nothing could read them (no metrics address): then nothing is set up.
 */
function processMetricsOnce(register: (() => Promise<void>) | undefined, log: Logger): () => Promise<void> {
  let processMetrics: Promise<void> | undefined = register === undefined ? Promise.resolve() : undefined;
  return () =>
    (processMetrics ??= (async () => {
      try {
        await register?.();
      } catch (err) {
        log.error('Setting up the process metrics failed', { err });
      }
    })());
}

/** The controllers' runs: `start` runs them until `leading` aborts (leadership ended) or the process stops; `running` is the last run. */
function controllerRuns(
  app: App,
  lifecycle: Lifecycle,
  endAtOnce: (end: ProcessEnd) => void,
): { start(leading: AbortSignal): void; running(): Promise<void> | undefined } {
  let running: Promise<void> | undefined;
  return {
    start: (leading) => {
      // Stop taking work on shutdown or when leadership ends; cut in-flight work short only when
      // leadership ends or the drain bound has passed (the root signal).
      const work = linkedSignal([leading, lifecycle.workSignal]);
      const cancel = linkedSignal([leading, lifecycle.rootSignal]);
      running = app
        .run(work.signal, cancel.signal)
        .then(
          () => undefined,
          (error: unknown) => {
            if (!lifecycle.shuttingDown && !leading.aborted) endAtOnce({ kind: 'controllersFailed', error });
          },
        )
        .finally(() => {
          work.dispose();
          cancel.dispose();
        });
    },
    running: () => running,
  };
}

/** Resolves once start-up is over (see PermissionCheckTiming): true, or false when `signal` aborted first. */
async function afterStartup(app: App, signal: AbortSignal, timing: PermissionCheckTiming): Promise<boolean> {
  const wait = linkedSignal(signal, timing.latestMs);
  try {
    await app.whenCachesSettled(wait.signal);
    await sleep(timing.afterSyncMs, wait.signal);
  } catch {
    // The latest time has come (or the process is stopping: checked below).
  } finally {
    wait.dispose();
  }
  return !signal.aborted;
}
