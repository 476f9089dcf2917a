// Loading the client configuration the way the Go sidecar's flags do: --kubeconfig (with an
// optional --master that replaces the server URL), else the in-cluster service account.
//
// Written here instead of taking @kubernetes/client-node's KubeConfig: that class loads the whole
// generated API (every model and client) when imported, seconds of start-up and tens of MiB of
// resident memory in a sidecar that uses none of it (docs/performance.md, "Start-up costs behind
// code choices"). What a sidecar
// needs is small and stable: a server, TLS material, and one of bearer token, token file
// (re-read, so bound service-account tokens rotate), client certificate, basic auth or an exec
// credential plugin. Legacy `auth-provider` plugins (gcp, azure, oidc) are refused by name. A
// cluster's `proxy-url` is kept (and checked here, so a bad one stops the start); proxy.ts applies it.
import { messageOf } from '../../base/errors.js';
import { parseKubeconfigProxyUrl, ProxyConfigError } from './proxy.js';
import fs from 'node:fs';
import nodePath from 'node:path';

export interface LoadKubeConfigOptions {
  /** --kubeconfig; empty means in-cluster unless masterUrl is set. */
  kubeconfigPath?: string;
  /** --master: replaces the server URL of the current context's cluster. */
  masterUrl?: string;
}

/** Bytes given inline, or a file read whenever credentials are resolved (so rotation is seen). */
export type Material = { readonly data: Buffer } | { readonly file: string };

export interface ExecCredentialPlugin {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly apiVersion: string;
  /** Relative commands resolve against the kubeconfig's folder. */
  readonly dir: string;
}

export type ClientAuth =
  | { readonly kind: 'none' }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'tokenFile'; readonly path: string }
  | { readonly kind: 'basic'; readonly username: string; readonly password: string }
  | { readonly kind: 'exec'; readonly plugin: ExecCredentialPlugin };

export interface ClientConfig {
  readonly server: string;
  readonly ca?: Material;
  readonly clientCert?: Material;
  readonly clientKey?: Material;
  readonly insecureSkipTlsVerify: boolean;
  readonly tlsServerName?: string;
  /** The cluster's proxy-url: every request goes through it (the environment's proxies are not read). */
  readonly proxyUrl?: string;
  readonly auth: ClientAuth;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export class KubeConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'KubeConfigError';
  }
}

/**
 * Asynchronous only because the YAML parser is loaded when a kubeconfig file is read: a replica
 * in a pod (the service account) never loads it.
 */
export async function loadKubeConfig(options: LoadKubeConfigOptions = {}): Promise<ClientConfig> {
  const { kubeconfigPath, masterUrl } = options;
  let config: ClientConfig;
  if (kubeconfigPath) {
    config = await fromKubeconfigFile(kubeconfigPath);
  } else if (masterUrl) {
    config = { server: masterUrl, insecureSkipTlsVerify: false, auth: { kind: 'none' } };
  } else {
    config = inCluster();
  }
  return masterUrl ? { ...config, server: masterUrl } : config;
}

/** The service account's token, CA and the KUBERNETES_SERVICE_* address (client-go's InClusterConfig). */
export function inCluster(env: NodeJS.ProcessEnv = process.env, dir = SERVICE_ACCOUNT_DIR): ClientConfig {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (!host || !port) {
    // client-go's rest.ErrNotInCluster: running outside a pod without --kubeconfig or --master.
    throw new KubeConfigError('unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined');
  }
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return {
    server: `https://${hostPart}:${port}`,
    ca: { file: nodePath.join(dir, 'ca.crt') },
    insecureSkipTlsVerify: false,
    auth: { kind: 'tokenFile', path: nodePath.join(dir, 'token') },
  };
}

type RawMap = Record<string, unknown>;

/** The value under `key` of the entry called `name` in a kubeconfig list (clusters, users, contexts). */
function named(list: unknown, key: string, name: string, kind: string, path: string): RawMap {
  const entries = Array.isArray(list) ? (list as RawMap[]) : [];
  const entry = entries.find((e) => e && e['name'] === name);
  const value = entry?.[key];
  if (!value || typeof value !== 'object') throw new KubeConfigError(`${path}: ${kind} ${JSON.stringify(name)} not found`);
  return value as RawMap;
}

function str(map: RawMap, ...keys: string[]): string | undefined {
  for (const key of keys) {
    const value = map[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

/**
 * A kubeconfig's document. JSON (what the test clusters and `kubectl config view -o json` write) is
 * YAML too, and JSON.parse reads it natively: js-yaml is loaded (its module set-up and a cold
 * parser cost a start time) only for a file that is not JSON. A key repeated in JSON takes its last value
 * (js-yaml would refuse the file).
 */
async function parseKubeconfigText(text: string): Promise<unknown> {
  if (/^\s*\{/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      // A YAML flow mapping (`{apiVersion: v1, ...}`) is not JSON: YAML reads it below.
    }
  }
  const { default: yaml } = await import('js-yaml');
  return yaml.load(text);
}

function material(map: RawMap, dataKey: string, fileKey: string, dir: string): Material | undefined {
  const data = str(map, dataKey);
  if (data) return { data: Buffer.from(data, 'base64') };
  const file = str(map, fileKey);
  return file ? { file: nodePath.resolve(dir, file) } : undefined;
}

/** Parses a kubeconfig (YAML or JSON) and resolves its current context. Relative paths are relative to the file. */
export async function fromKubeconfigFile(path: string): Promise<ClientConfig> {
  let raw: RawMap;
  try {
    const parsed = await parseKubeconfigText(fs.readFileSync(path, 'utf8'));
    if (!parsed || typeof parsed !== 'object') throw new Error('not a kubeconfig object');
    raw = parsed as RawMap;
  } catch (err) {
    throw new KubeConfigError(`${path}: ${messageOf(err)}`, { cause: err });
  }
  const dir = nodePath.dirname(nodePath.resolve(path));
  const contextName = str(raw, 'current-context');
  if (!contextName) throw new KubeConfigError(`${path}: no current-context; set one or pass --master`);
  const context = named(raw['contexts'], 'context', contextName, 'context', path);
  const clusterName = str(context, 'cluster') ?? '';
  const cluster = named(raw['clusters'], 'cluster', clusterName, 'cluster', path);
  const userName = str(context, 'user');
  const user = userName ? named(raw['users'], 'user', userName, 'user', path) : {};

  const server = str(cluster, 'server');
  if (!server) throw new KubeConfigError(`${path}: cluster ${JSON.stringify(clusterName)} has no server`);
  const ca = material(cluster, 'certificate-authority-data', 'certificate-authority', dir);
  const clientCert = material(user, 'client-certificate-data', 'client-certificate', dir);
  const clientKey = material(user, 'client-key-data', 'client-key', dir);
  const tlsServerName = str(cluster, 'tls-server-name');
  const proxyUrl = str(cluster, 'proxy-url');
  if (proxyUrl !== undefined) {
    try {
      parseKubeconfigProxyUrl(proxyUrl, `cluster ${JSON.stringify(clusterName)}`);
    } catch (err) {
      if (err instanceof ProxyConfigError) throw new KubeConfigError(`${path}: ${err.message}`, { cause: err });
      throw err;
    }
  }
  return {
    server,
    ...(ca ? { ca } : {}),
    ...(clientCert ? { clientCert } : {}),
    ...(clientKey ? { clientKey } : {}),
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    ...(tlsServerName ? { tlsServerName } : {}),
    ...(proxyUrl ? { proxyUrl } : {}),
    auth: authOf(user, dir, path),
  };
}

function authOf(user: RawMap, dir: string, path: string): ClientAuth {
  if (user['auth-provider']) {
    const name = (user['auth-provider'] as RawMap)['name'];
    throw new KubeConfigError(
      `${path}: auth-provider ${JSON.stringify(name)} is not supported; use a token, a client certificate or an exec credential plugin`,
    );
  }
  const token = str(user, 'token');
  if (token) return { kind: 'token', token };
  const tokenFile = str(user, 'tokenFile', 'token-file');
  if (tokenFile) return { kind: 'tokenFile', path: nodePath.resolve(dir, tokenFile) };
  const username = str(user, 'username');
  if (username) return { kind: 'basic', username, password: str(user, 'password') ?? '' };
  const exec = user['exec'];
  if (exec && typeof exec === 'object') {
    const e = exec as RawMap;
    const command = str(e, 'command');
    if (!command) throw new KubeConfigError(`${path}: exec credential plugin without a command`);
    return {
      kind: 'exec',
      plugin: {
        command,
        args: execArgs(e['args'], path),
        env: execEnv(e['env'], path),
        apiVersion: str(e, 'apiVersion') ?? 'client.authentication.k8s.io/v1',
        dir,
      },
    };
  }
  return { kind: 'none' };
}

// The exec plugin's `args` and `env` are checked entry by entry: a hand-written kubeconfig with
// `env: [null]` or a number where a string belongs gets an error that names the entry.
function execArgs(raw: unknown, path: string): string[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new KubeConfigError(`${path}: exec credential plugin args must be a list of strings`);
  return raw.map((arg: unknown, i) => {
    if (typeof arg !== 'string') throw new KubeConfigError(`${path}: exec credential plugin args[${i}] must be a string, not ${describe(arg)}`);
    return arg;
  });
}

function execEnv(raw: unknown, path: string): Record<string, string> {
  if (raw === undefined || raw === null) return {};
  if (!Array.isArray(raw)) throw new KubeConfigError(`${path}: exec credential plugin env must be a list of {name, value} entries`);
  const env: Record<string, string> = {};
  raw.forEach((item: unknown, i) => {
    const entry = `${path}: exec credential plugin env[${i}]`;
    if (!item || typeof item !== 'object' || Array.isArray(item))
      throw new KubeConfigError(`${entry} must be a mapping with a name and a value, not ${describe(item)}`);
    const { name, value } = item as RawMap;
    if (typeof name !== 'string' || name === '') throw new KubeConfigError(`${entry} needs a non-empty string name`);
    // An absent value is empty, as client-go reads it.
    if (value !== undefined && value !== null && typeof value !== 'string')
      throw new KubeConfigError(`${entry} (${name}) needs a string value, not ${describe(value)}`);
    env[name] = typeof value === 'string' ? value : '';
  });
  return env;
}

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'a mapping' : `${typeof value} ${JSON.stringify(value)}`;
}
