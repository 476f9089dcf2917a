// A real Prometheus server for the tests of the Prometheus usage source: Debian's binary (taken
// by test/infra/build-kit-tools.sh), on loopback, with a temporary configuration and data
// directory, scraping the given targets every second. Stopped by its pid (SIGTERM, then SIGKILL)
// and its directory removed; an exit hook kills it if the test process dies first.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../cluster/cluster.js';
import { spawnLogged, tail } from '../cluster/process.js';
import { kitTools } from '../kit/tools.js';
import { eventually, StopPolling } from './eventually.js';

export interface ScrapeTarget {
  /** host:port */
  readonly address: string;
  readonly scheme: 'http' | 'https';
  /** A CA file for an https target. */
  readonly caFile?: string;
  /** A file holding the bearer token Prometheus sends. */
  readonly tokenFile?: string;
}

export interface PrometheusServer {
  readonly url: string;
  readonly pid: number;
  readonly logPath: string;
  stop(): Promise<void>;
}

export async function startPrometheus(targets: readonly ScrapeTarget[]): Promise<PrometheusServer> {
  const { prometheusBin } = await kitTools();
  const dir = mkdtempSync(join(tmpdir(), 'rz-prometheus-'));
  const port = await freePort();
  // JSON is YAML: no quoting rules to get wrong.
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
    scrape_configs: targets.map((t, i) => ({
      job_name: `kubelet-${i}`,
      scheme: t.scheme,
      metrics_path: '/metrics',
      static_configs: [{ targets: [t.address] }],
      ...(t.tokenFile ? { authorization: { type: 'Bearer', credentials_file: t.tokenFile } } : {}),
      ...(t.caFile ? { tls_config: { ca_file: t.caFile } } : {}),
    })),
  };
  const configPath = join(dir, 'prometheus.yml');
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  const logPath = join(dir, 'prometheus.log');
  const child = spawnLogged({
    name: 'prometheus',
    command: prometheusBin,
    args: [`--config.file=${configPath}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    logPath,
    cwd: dir,
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await child.stop(5_000);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await eventually(
      'Prometheus /-/ready',
      async () => {
        if (child.hasExited()) throw new StopPolling(`prometheus exited: ${tail(logPath)}`);
        const res = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1_000) });
        return res.ok;
      },
      30_000,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, pid: child.pid, logPath, stop };
}
