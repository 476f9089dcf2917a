// Runs the real resizer inside the test process: the process runner (app/process-runner.ts, what
// main runs) with the real app, against the real API server as the csi-resizer identity, with its
// log lines captured. Only the OS signals are not the process's: the test stops the runner
// through its lifecycle instead.
import { EventEmitter } from 'node:events';
import { parseConfig } from '../../src/flags/config.js';
import { Lifecycle } from '../../src/app/lifecycle.js';
import type { ProcessSignals } from '../../src/app/os-signals.js';
import { loadProcessParts, runProcess } from '../../src/app/process-runner.js';
import { createLogger } from '../../src/observability/log/logger.js';
import { createMetrics, type Metrics } from '../../src/observability/metrics.js';

export interface RunningResizer {
  readonly metrics: Metrics;
  readonly logs: string[];
  /**
   * Stops: by default cancels in-flight work at once; with `graceful` stops taking work and lets
   * in-flight reconciles finish first, up to --timeout (what SIGTERM does). Idempotent.
   */
  stop(options?: { graceful?: boolean }): Promise<void>;
}

/** Signals nobody sends: the test process's own SIGTERM and SIGINT are left alone. */
function noSignals(): ProcessSignals {
  const emitter = new EventEmitter();
  return Object.assign(emitter, {
    pid: -1,
    kill: () => true,
    exit: (code?: number | string | null) => {
      throw new Error(`the in-process resizer tried to exit the test process (${String(code)})`);
    },
  }) as unknown as ProcessSignals;
}

export async function startResizer(options: { kubeconfig: string; csiAddress: string; args?: string[]; env?: NodeJS.ProcessEnv }): Promise<RunningResizer> {
  const config = parseConfig([
    `--kubeconfig=${options.kubeconfig}`,
    `--csi-address=${options.csiAddress}`,
    '--retry-interval-start=200ms',
    '--retry-interval-max=5s',
    '--kube-api-qps=100',
    '--kube-api-burst=200',
    '--v=5',
    ...(options.args ?? []),
  ]);
  const logs: string[] = [];
  const log = createLogger({ verbosity: config.verbosity, format: 'text', write: (line) => logs.push(line) });
  const metrics = createMetrics();
  const real = await loadProcessParts();
  let started!: () => void;
  const isStarted = new Promise<'started'>((resolve) => {
    started = () => resolve('started');
  });
  const lifecycle = new Lifecycle();
  const ended = runProcess({
    config,
    log,
    version: 'test',
    signals: noSignals(),
    lifecycle,
    parts: {
      ...real,
      createMetrics: () => metrics,
      // V8's flags are the whole test process's: left as the test runner started it.
      startApp: async (appConfig, deps, signal) => {
        const app = await real.startApp(appConfig, { ...deps, env: options.env }, signal);
        started();
        return app;
      },
    },
  });
  const first = await Promise.race([isStarted, ended]);
  if (first !== 'started') {
    if (first.kind === 'startupFailed') throw first.error;
    throw new Error(`the resizer ended before it started: ${JSON.stringify(first)}`);
  }
  let stopped: Promise<void> | undefined;
  return {
    metrics,
    logs,
    stop(stopOptions = {}) {
      stopped ??= (async () => {
        if (stopOptions.graceful) lifecycle.beginShutdown('test');
        else lifecycle.finish();
        const end = await ended;
        if (end.kind !== 'stopped') throw new Error(`the resizer ended with ${end.kind}`);
      })();
      return stopped;
    },
  };
}

export { eventually } from './eventually.js';
