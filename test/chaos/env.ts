// The chaos suite's own control plane (its faults restart etcd and kube-apiserver, so it never
// shares a cluster with other tests), the admin API client, the controlled proxy in front of the
// API server, and the resizer's kubeconfig pointing at that proxy.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { Api } from '../../bench/lib/api.js';
import { AUDIT_POLICY } from '../../bench/lib/audit.js';
import { startCluster } from '../cluster/cluster.js';
import { prepareEnv, proxiedKubeconfig, type ChaosEnv, type ChaosSettings } from './harness.js';
import { ControlledProxy } from './proxy.js';

export const DEFAULT_SETTINGS: ChaosSettings = {
  n: 300,
  nLeader: 500,
  faultAtMs: 1500,
  apiserverDownMs: 4000,
  etcdDownMs: 4000,
  blackholeMs: 10_000,
  driverDownMs: 2000,
  boundMs: 180_000,
  driverDelayMs: 100,
  workers: 10,
  qps: 200,
  burst: 400,
  timeout: '10s',
  // Upstream's defaults.
  lease: { duration: '15s', renewDeadline: '10s', retryPeriod: '5s' },
  concurrency: 16,
  restartDelayMs: 1000,
};

export interface StartedChaosEnv extends ChaosEnv {
  stop(opts?: { keepLogs?: boolean }): Promise<void>;
}

export async function startChaosEnv(o: {
  settings: ChaosSettings;
  oursEntry: string;
  upstreamBin: string;
  log: (line: string) => void;
}): Promise<StartedChaosEnv> {
  // CHAOS_AUDIT=1: the apiserver's audit log records every request of the resizer user (for a post-mortem).
  const audit = process.env['CHAOS_AUDIT'] === '1' ? { auditPolicy: AUDIT_POLICY } : {};
  const cluster = await startCluster({ progress: (l) => o.log(`cluster: ${l}`), ...audit });
  let api: Api | undefined;
  let proxy: ControlledProxy | undefined;
  try {
    api = new Api(cluster.adminKubeconfigPath, { maxSockets: o.settings.concurrency });
    const apiUrl = new URL(cluster.apiUrl);
    proxy = await ControlledProxy.start({ host: apiUrl.hostname, port: Number(apiUrl.port) });
    const logDir = mkdtempSync(join(cluster.dir, 'resizers-'));
    const kubeconfig = proxiedKubeconfig(cluster, proxy, join(cluster.dir, 'resizer-via-proxy.kubeconfig'));
    const env: ChaosEnv = { cluster, api, proxy, kubeconfig, oursEntry: o.oursEntry, upstreamBin: o.upstreamBin, settings: o.settings, logDir, log: o.log };
    await prepareEnv(env);
    const [a, p] = [api, proxy];
    return {
      ...env,
      async stop(stopOpts) {
        a.close();
        await p.close();
        await cluster.stop(stopOpts);
      },
    };
  } catch (err) {
    api?.close();
    await proxy?.close();
    await cluster.stop({ keepLogs: true });
    throw err;
  }
}
