// Runs the real resizer (startApp + App.run, exactly what main runs) inside the test process,
// against the real API server as the csi-resizer identity, with its log lines captured.
import { parseConfig } from '../../src/app/config.js';
import { startApp, type App } from '../../src/app/build.js';
import { createLogger } from '../../src/observability/logger.js';
import { createMetrics, type Metrics } from '../../src/observability/metrics.js';

export interface RunningResizer {
  readonly app: App;
  readonly metrics: Metrics;
  readonly logs: string[];
  /**
   * Stops: by default cancels in-flight work at once; with `graceful` stops taking work and lets
   * in-flight reconciles finish first (what SIGTERM does). Idempotent.
   */
  stop(options?: { graceful?: boolean }): Promise<void>;
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
  const metrics = createMetrics({ processMetrics: false });
  const lifetime = new AbortController();
  const work = new AbortController();
  const app = await startApp(config, { log, metrics, version: 'test', env: options.env }, lifetime.signal);
  const running = app.run(work.signal, lifetime.signal);
  let stopped: Promise<void> | undefined;
  return {
    app,
    metrics,
    logs,
    stop(stopOptions = {}) {
      stopped ??= (async () => {
        work.abort();
        if (!stopOptions.graceful) lifetime.abort();
        await running.catch(() => {});
        lifetime.abort();
        app.close();
      })();
      return stopped;
    },
  };
}

export { eventually } from './eventually.js';
