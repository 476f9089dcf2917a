// The cluster a test file runs against. Under scripts/test.sh every test file shares the one
// cluster that run-with-cluster started (CSI_RESIZER_TEST_CLUSTER names its env file). A test file
// run alone starts its own cluster and stops it when the process is about to exit.
import { readFileSync } from 'node:fs';
import { startCluster } from './cluster.js';
import { parseEnvFile } from './components.js';
import { clientsFromKubeconfig, type KubeClients } from './kube.js';

export const CLUSTER_ENV_VAR = 'CSI_RESIZER_TEST_CLUSTER';

export interface ClusterHandle {
  readonly envFile: string;
  readonly dir: string;
  readonly apiUrl: string;
  readonly caPath: string;
  readonly adminKubeconfigPath: string;
  readonly resizerKubeconfigPath: string;
  /** unix:///... of the CSI mock driver. */
  readonly csiAddress: string;
  readonly driverName: string;
  /** The official csi.proto, for test-side gRPC calls. */
  readonly csiProtoPath: string;
  readonly logs: { readonly etcd: string; readonly apiserver: string; readonly driver: string };
  /** True when this process started the cluster (and will stop it at exit). */
  readonly ownedByThisProcess: boolean;
}

export function loadClusterEnv(envFile: string, ownedByThisProcess = false): ClusterHandle {
  const vars = parseEnvFile(readFileSync(envFile, 'utf8'));
  const need = (key: string): string => {
    const v = vars.get(key);
    if (!v) throw new Error(`${envFile} has no ${key}`);
    return v;
  };
  return Object.freeze({
    envFile,
    dir: need('CLUSTER_DIR'),
    apiUrl: need('API_URL'),
    caPath: need('CA_PATH'),
    adminKubeconfigPath: need('ADMIN_KUBECONFIG'),
    resizerKubeconfigPath: need('RESIZER_KUBECONFIG'),
    csiAddress: need('CSI_ADDRESS'),
    driverName: need('DRIVER_NAME'),
    csiProtoPath: need('CSI_PROTO'),
    logs: { etcd: need('ETCD_LOG'), apiserver: need('APISERVER_LOG'), driver: need('DRIVER_LOG') },
    ownedByThisProcess,
  });
}

let shared: Promise<ClusterHandle> | undefined;

export function useCluster(): Promise<ClusterHandle> {
  shared ??= (async () => {
    const envFile = process.env[CLUSTER_ENV_VAR];
    if (envFile) return loadClusterEnv(envFile);
    const cluster = await startCluster({ progress: (line) => process.stderr.write(`[cluster] ${line}\n`) });
    process.stderr.write(`[cluster] ready in ${cluster.startupMs}ms (${cluster.dir})\n`);
    // beforeExit fires once the test runner is done and the loop is empty; stopping schedules
    // more work, so it fires again afterwards (hence once). A crash still kills the components
    // through the process exit hook.
    process.once('beforeExit', () => void cluster.stop());
    // Killed from outside (a timeout, Ctrl-C): stop gracefully, then die of the same signal.
    const onSignal = (signal: NodeJS.Signals) => {
      void cluster.stop({ keepLogs: true }).finally(() => process.kill(process.pid, signal));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    return loadClusterEnv(cluster.envFile, true);
  })();
  return shared;
}

/** Clients authenticated as the admin (system:masters). */
export function adminClients(handle: ClusterHandle): KubeClients {
  return clientsFromKubeconfig(handle.adminKubeconfigPath);
}

/** Clients authenticated as the resizer user, bound by deploy/kubernetes/rbac.yaml. */
export function resizerClients(handle: ClusterHandle): KubeClients {
  return clientsFromKubeconfig(handle.resizerKubeconfigPath);
}

export type { KubeClients } from './kube.js';
