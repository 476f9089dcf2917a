// Loading the client configuration, the way the Go sidecar's flags do: --kubeconfig (with an
// optional --master that replaces the server URL), else in-cluster service-account config. We use
// @kubernetes/client-node's KubeConfig for parsing and auth providers, and fix two gaps: there is
// no --master override, and a kubeconfig `token-file` is read once at load time (client-go re-reads
// it), so we turn it into the rotating token-file provider client-node uses in-cluster.
import fs from 'node:fs';
import nodePath from 'node:path';
import { dumpYaml, KubeConfig, loadYaml, type Cluster, type User } from '@kubernetes/client-node';

export interface LoadKubeConfigOptions {
  /** --kubeconfig; empty means in-cluster unless masterUrl is set. */
  kubeconfigPath?: string;
  /** --master: replaces the server URL of the current context's cluster. */
  masterUrl?: string;
}

export function loadKubeConfig(options: LoadKubeConfigOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  const { kubeconfigPath, masterUrl } = options;
  if (kubeconfigPath) {
    loadFile(kc, kubeconfigPath);
  } else if (masterUrl) {
    kc.loadFromClusterAndUser({ name: 'master', server: masterUrl, skipTLSVerify: false }, { name: 'anonymous' });
  } else {
    if (!process.env['KUBERNETES_SERVICE_HOST'] || !process.env['KUBERNETES_SERVICE_PORT']) {
      // client-go's rest.ErrNotInCluster: running outside a pod without --kubeconfig or --master.
      throw new Error('unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined');
    }
    kc.loadFromCluster();
  }
  if (masterUrl) setServer(kc, masterUrl);
  if (!kc.getCurrentCluster()) throw new Error('kubeconfig has no current cluster; set current-context or pass --master');
  return kc;
}

function setServer(kc: KubeConfig, server: string): void {
  const current = kc.getCurrentCluster();
  if (!current) return;
  kc.clusters = kc.clusters.map((c): Cluster => (c.name === current.name ? { ...c, server } : c));
}

interface RawKubeConfig {
  users?: Array<{ name?: string; user?: { token?: string; 'token-file'?: string } }>;
}

/**
 * loadFromFile, except that relative `token-file` paths resolve against the kubeconfig's folder
 * (client-node reads them relative to the working directory) and token files keep being re-read.
 */
function loadFile(kc: KubeConfig, path: string): void {
  const dir = nodePath.dirname(nodePath.resolve(path));
  const raw = loadYaml<RawKubeConfig>(fs.readFileSync(path, 'utf8')) ?? {};
  const tokenFiles = new Map<string, string>();
  for (const u of raw.users ?? []) {
    const file = u.user?.['token-file'];
    if (!u.user || !file) continue;
    u.user['token-file'] = nodePath.resolve(dir, file);
    if (u.name && !u.user.token) tokenFiles.set(u.name, u.user['token-file']);
  }
  kc.loadFromString(dumpYaml(raw));
  kc.makePathsAbsolute(dir);
  if (tokenFiles.size === 0) return;
  kc.users = kc.users.map((u): User => {
    const file = tokenFiles.get(u.name);
    if (!file || u.authProvider) return u;
    // client-node's FileAuth provider re-reads the file every 60 s, like client-go does.
    return { ...u, token: undefined, authProvider: { name: 'tokenFile', config: { tokenFile: file } } };
  });
}
