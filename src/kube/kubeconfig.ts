// Loading the client configuration, the way the Go sidecar's flags do: --kubeconfig (with an
// optional --master that replaces the server URL), else in-cluster service-account config. We use
// @kubernetes/client-node's KubeConfig for parsing and auth providers, and fix two gaps: there is
// no --master override, and a kubeconfig `token-file` is read once at load time (client-go re-reads
// it), so we turn it into the rotating token-file provider client-node uses in-cluster.
import fs from 'node:fs';
import nodePath from 'node:path';
import { KubeConfig, loadYaml, type Cluster, type User } from '@kubernetes/client-node';

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
    kc.loadFromFile(kubeconfigPath);
    useRotatingTokenFiles(kc, kubeconfigPath);
  } else if (masterUrl) {
    kc.loadFromClusterAndUser({ name: 'master', server: masterUrl, skipTLSVerify: false }, { name: 'anonymous' });
  } else {
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

function useRotatingTokenFiles(kc: KubeConfig, path: string): void {
  let raw: RawKubeConfig;
  try {
    raw = loadYaml<RawKubeConfig>(fs.readFileSync(path, 'utf8'));
  } catch {
    return; // loadFromFile already parsed it; nothing more to learn
  }
  const tokenFiles = new Map<string, string>();
  for (const u of raw.users ?? []) {
    const file = u.user?.['token-file'];
    if (u.name && file && !u.user?.token) tokenFiles.set(u.name, nodePath.resolve(nodePath.dirname(path), file));
  }
  if (tokenFiles.size === 0) return;
  kc.users = kc.users.map((u): User => {
    const file = tokenFiles.get(u.name);
    if (!file || u.authProvider) return u;
    // client-node's FileAuth provider re-reads the file every 60 s, like client-go does.
    return { ...u, token: undefined, authProvider: { name: 'tokenFile', config: { tokenFile: file } } };
  });
}
