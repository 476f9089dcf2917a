// One local control plane for integration tests: etcd, kube-apiserver (loopback only, TLS from a
// test CA, RBAC, static tokens for an admin and the resizer user) and the CSI mock driver.
// Whatever started is stopped in reverse order, both on stop() and when startup fails.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { loadComponents, type Components } from './components.js';
import { clientsFromKubeconfig } from './kube.js';
import { startMockDriver, type MockDriver, type MockDriverOptions } from './mock-driver.js';
import { kubeconfig, makePki, ADMIN_USER, RESIZER_USER } from './pki.js';
import { onExitSync, printTails, spawnLogged, type Managed } from './process.js';
import { applyRbac, secretsAccessManifestPath } from './rbac.js';
import { eventually, StopPolling } from '../support/eventually.js';

export interface ClusterOptions {
  /** Working directory (certs, kubeconfigs, logs, socket); a fresh /tmp/rz-XXXX by default. */
  dir?: string;
  /** Options for the mock driver (its dir is the cluster's). */
  driver?: Omit<MockDriverOptions, 'dir' | 'detached' | 'socketPath'>;
  /** Leave the processes running after this Node process exits (scripts/cluster.sh up). */
  detached?: boolean;
  /** Bound on the whole startup; 120s by default. */
  startTimeoutMs?: number;
  /** Progress lines (for the CLI); silent by default. */
  progress?: (line: string) => void;
  /**
   * An audit policy (YAML or JSON text): the apiserver then writes its audit log (JSON lines) to
   * `auditLogPath` (dir/audit.log by default), exposed as Cluster.auditLogPath. Off by default.
   */
  auditPolicy?: string;
  auditLogPath?: string;
}

export type ClusterLogs = {
  readonly etcd: string;
  readonly apiserver: string;
  readonly driver: string;
};

export interface Cluster {
  readonly dir: string;
  readonly apiUrl: string;
  /** http://127.0.0.1:port, etcd's client URL (its v3 JSON gateway answers there too). */
  readonly etcdUrl: string;
  readonly caPath: string;
  readonly adminKubeconfigPath: string;
  readonly resizerKubeconfigPath: string;
  /** unix:///... */
  readonly csiAddress: string;
  readonly driverName: string;
  readonly driver: MockDriver;
  readonly logs: ClusterLogs;
  /** KEY=VALUE lines describing this cluster (see clusterEnv()). */
  readonly envFile: string;
  readonly pids: { readonly etcd: number; readonly apiserver: number; readonly driver: number };
  readonly etcdDataDir: string;
  readonly components: Components;
  /** Time from startCluster() to ready, in ms. */
  readonly startupMs: number;
  /** The apiserver's audit log, when ClusterOptions.auditPolicy was given. */
  readonly auditLogPath?: string;
  /**
   * Kills etcd or kube-apiserver (SIGKILL by default), keeps it down for downMs, then starts it
   * again on the same port with the same flags (plus extraArgs, which later flags override; the
   * next restart without them goes back to the original flags) and waits until it is ready again.
   * For fault tests; the component's log file continues.
   */
  restart(component: RestartableComponent, opts?: RestartOptions): Promise<RestartTimes>;
  /**
   * Stops driver, apiserver, etcd (in that order) and removes the etcd data and the working
   * directory (kept with keepLogs or CSI_RESIZER_KEEP_LOGS=1). Safe to call twice.
   */
  stop(opts?: { keepLogs?: boolean }): Promise<void>;
}

export type RestartableComponent = 'etcd' | 'apiserver';

export interface RestartOptions {
  signal?: NodeJS.Signals;
  /** Time between the process having exited and the new one being spawned; 0 by default. */
  downMs?: number;
  /** Flags appended to the original ones for this start (and until the next restart). */
  extraArgs?: readonly string[];
  /** Bound on waiting for the new process to be ready; 60s by default. */
  readyTimeoutMs?: number;
}

/** Date.now() at each step of a restart. */
export interface RestartTimes {
  killedAt: number;
  spawnedAt: number;
  readyAt: number;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function etcdDataRoot(): string {
  // tmpfs: etcd's writes are the slowest part of an apiserver on a small machine.
  return existsSync('/dev/shm') ? '/dev/shm' : '/tmp';
}

/**
 * Alpha API server gates the tests need, for the versions that have them: MutablePVNodeAffinity
 * (1.35+; a PV's node affinity may change, test/integration/node-affinity-change.test.ts).
 */
export function apiserverFeatureGates(k8sVersion: string): string[] {
  const minor = Number(/^v1\.(\d+)\./.exec(k8sVersion)?.[1] ?? 0);
  return minor >= 35 ? ['--feature-gates=MutablePVNodeAffinity=true'] : [];
}

export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const started = Date.now();
  const report = opts.progress ?? (() => {});
  const progress = (line: string) => report(`${line} (+${Date.now() - started}ms)`);
  const deadline = started + (opts.startTimeoutMs ?? 120_000);
  const components = await loadComponents();
  const ownsDir = opts.dir === undefined;
  const dir = opts.dir ?? mkdtempSync('/tmp/rz-');
  mkdirSync(dir, { recursive: true });
  const logs: ClusterLogs = {
    etcd: join(dir, 'etcd.log'),
    apiserver: join(dir, 'kube-apiserver.log'),
    driver: join(dir, 'mockdriver.log'),
  };
  const etcdDataDir = mkdtempSync(join(etcdDataRoot(), 'rz-etcd-'));
  const detached = opts.detached ?? false;
  const removeEtcdData = () => rmSync(etcdDataDir, { recursive: true, force: true });
  const forgetExitCleanup = detached ? () => {} : onExitSync(removeEtcdData);
  const stack: Array<() => Promise<void>> = [async () => (removeEtcdData(), forgetExitCleanup())];
  let startedOk = false;
  let keepLogs = process.env['CSI_RESIZER_KEEP_LOGS'] === '1';
  // After a clean run the working directory (certs, tokens, logs) goes too; after a failed start,
  // or with CSI_RESIZER_KEEP_LOGS=1, it stays for the post-mortem.
  stack.push(async () => {
    if (startedOk && ownsDir && !keepLogs) rmSync(dir, { recursive: true, force: true });
  });
  const unwind = async () => {
    while (stack.length > 0) {
      const step = stack.pop()!;
      await step().catch((err: unknown) => process.stderr.write(`[cluster] cleanup step failed: ${String(err)}\n`));
    }
  };

  // If this Node process is killed outright (SIGKILL, a runner's timeout), neither stop() nor the
  // exit hook runs; a detached watchdog then stops the components listed in the pid file.
  const pidFile = join(dir, 'pids');
  const pids = new Map<string, number>();
  const recordPid = (name: string, pid: number) => {
    pids.set(name, pid);
    writeFileSync(pidFile, [...pids.values()].join(' ') + '\n');
  };
  if (!detached) {
    const watchdog = startWatchdog(pidFile, etcdDataDir, join(dir, 'watchdog.log'));
    stack.push(async () => {
      rmSync(pidFile, { force: true });
      await watchdog.stop(1000);
    });
  }

  try {
    const [etcdPort, etcdPeerPort, apiPort] = await distinctPorts(3);
    const pkiPromise = makePki(dir);

    progress(`etcd ${components.etcdVersion} on 127.0.0.1:${etcdPort}`);
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${etcdPeerPort}`;
    const etcdArgs = [
      '--name=rz',
      `--data-dir=${etcdDataDir}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=rz=${peerUrl}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ];
    const spawnEtcd = (extra: readonly string[] = []) =>
      spawnLogged({ name: 'etcd', command: components.etcdBin, args: [...etcdArgs, ...extra], logPath: logs.etcd, detached });
    // `let`: restart() replaces the process, and the stop step below must stop the current one.
    let etcd = spawnEtcd();
    recordPid('etcd', etcd.pid);
    stack.push(() => etcd.stop());
    const etcdHealthy = async () => {
      const res = await fetch(`${etcdUrl}/health`, { signal: AbortSignal.timeout(1000) });
      const body = (await res.json()) as { health?: string };
      return body.health === 'true';
    };

    const pki = await pkiPromise;
    await waitFor('etcd', etcd, deadline, etcdHealthy);

    const apiUrl = `https://127.0.0.1:${apiPort}`;
    progress(`kube-apiserver ${components.k8sVersion} on ${apiUrl}`);
    mkdirSync(join(dir, 'apiserver-certs'), { recursive: true });
    const auditLogPath = opts.auditPolicy === undefined ? undefined : (opts.auditLogPath ?? join(dir, 'audit.log'));
    const auditArgs: string[] = [];
    if (opts.auditPolicy !== undefined && auditLogPath !== undefined) {
      const policyPath = join(dir, 'audit-policy.yaml');
      writeFileSync(policyPath, opts.auditPolicy);
      auditArgs.push(`--audit-policy-file=${policyPath}`, `--audit-log-path=${auditLogPath}`, '--audit-log-format=json', '--audit-log-maxbackup=0');
    }
    const apiserverArgs = [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--cert-dir=${join(dir, 'apiserver-certs')}`,
      `--tls-cert-file=${pki.servingCertPath}`,
      `--tls-private-key-file=${pki.servingKeyPath}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      `--service-account-issuer=${apiUrl}`,
      `--service-account-key-file=${pki.saPubPath}`,
      `--service-account-signing-key-file=${pki.saKeyPath}`,
      '--authorization-mode=RBAC',
      `--token-auth-file=${pki.tokenFilePath}`,
      // The default admission plugins, minus ServiceAccount: there is no controller to create
      // default ServiceAccounts, and test pods would be refused without one.
      '--disable-admission-plugins=ServiceAccount',
      '--allow-privileged=true',
      // 127.0.0.1 is not a valid endpoint for the "kubernetes" Service; do not try to publish it.
      '--endpoint-reconciler-type=none',
      '--v=1',
      ...apiserverFeatureGates(components.k8sVersion),
      ...auditArgs,
    ];
    const spawnApiserver = (extra: readonly string[] = []) =>
      spawnLogged({ name: 'kube-apiserver', command: components.kubeApiserverBin, args: [...apiserverArgs, ...extra], logPath: logs.apiserver, detached });
    let apiserver = spawnApiserver();
    recordPid('apiserver', apiserver.pid);
    stack.push(() => apiserver.stop(10_000));

    const ca = readFileSync(pki.caPath);
    const apiserverReady = async () => (await httpsGet(`${apiUrl}/readyz`, ca)) === 'ok';
    await waitFor('kube-apiserver /readyz', apiserver, deadline, apiserverReady);

    const adminKubeconfigPath = join(dir, 'admin.kubeconfig');
    const resizerKubeconfigPath = join(dir, 'resizer.kubeconfig');
    writeFileSync(adminKubeconfigPath, kubeconfig({ apiUrl, caPath: pki.caPath, user: ADMIN_USER, token: pki.adminToken }), { mode: 0o600 });
    writeFileSync(resizerKubeconfigPath, kubeconfig({ apiUrl, caPath: pki.caPath, user: RESIZER_USER, token: pki.resizerToken }), { mode: 0o600 });

    progress('applying deploy/kubernetes/rbac.yaml and the opt-in secrets access');
    const admin = clientsFromKubeconfig(adminKubeconfigPath);
    await applyRbac(admin);
    // The secrets tests (controllerExpandSecretRef, modify secrets) read secrets: they get it from
    // the opt-in manifest an operator would add, never from rbac.yaml.
    await applyRbac(admin, secretsAccessManifestPath);
    await waitUntilResizerAuthorized(admin, deadline);

    progress('CSI mock driver');
    const driver = await startMockDriver({ ...opts.driver, dir, detached, onPid: (pid) => recordPid('driver', pid) });
    stack.push(() => driver.stop());

    const envFile = join(dir, 'env');
    const cluster: Omit<Cluster, 'stop' | 'restart'> = {
      dir,
      apiUrl,
      etcdUrl,
      caPath: pki.caPath,
      adminKubeconfigPath,
      resizerKubeconfigPath,
      csiAddress: driver.address,
      driverName: driver.name,
      driver,
      logs,
      envFile,
      pids: {
        get etcd() {
          return etcd.pid;
        },
        get apiserver() {
          return apiserver.pid;
        },
        get driver() {
          return driver.pid;
        },
      },
      etcdDataDir,
      components,
      startupMs: Date.now() - started,
      ...(auditLogPath === undefined ? {} : { auditLogPath }),
    };
    writeFileSync(envFile, formatEnv(clusterEnv(cluster)));
    progress('ready');
    startedOk = true;
    let stopping: Promise<void> | undefined;
    let restarting: Promise<unknown> = Promise.resolve();
    const restartOnce = async (component: RestartableComponent, o: RestartOptions): Promise<RestartTimes> => {
      if (stopping) throw new Error(`restart(${component}) after stop()`);
      const current = component === 'etcd' ? etcd : apiserver;
      const killedAt = Date.now();
      if (!current.hasExited()) process.kill(current.pid, o.signal ?? 'SIGKILL');
      // A gentler signal gets 10 s, then SIGKILL (stop() escalates the same way).
      const escalate = setTimeout(() => {
        if (!current.hasExited()) process.kill(current.pid, 'SIGKILL');
      }, 10_000);
      await current.exited;
      clearTimeout(escalate);
      if ((o.downMs ?? 0) > 0) await new Promise((r) => setTimeout(r, o.downMs));
      const spawnedAt = Date.now();
      const next = component === 'etcd' ? (etcd = spawnEtcd(o.extraArgs)) : (apiserver = spawnApiserver(o.extraArgs));
      recordPid(component, next.pid);
      writeFileSync(envFile, formatEnv(clusterEnv(cluster)));
      const readyBy = Date.now() + (o.readyTimeoutMs ?? 60_000);
      await waitFor(`${component} after restart`, next, readyBy, component === 'etcd' ? etcdHealthy : apiserverReady);
      return { killedAt, spawnedAt, readyAt: Date.now() };
    };
    return {
      ...cluster,
      // One restart at a time: a second call waits for the first to finish.
      restart: (component, o = {}) => {
        const run = restarting.then(() => restartOnce(component, o));
        restarting = run.catch(() => {});
        return run;
      },
      stop: (stopOpts) => {
        if (stopOpts?.keepLogs) keepLogs = true;
        return (stopping ??= unwind());
      },
    };
  } catch (err) {
    process.stderr.write(`[cluster] startup failed: ${err instanceof Error ? err.message : String(err)}\n`);
    printTails(logs);
    process.stderr.write(`[cluster] logs kept in ${dir}\n`);
    await unwind();
    throw err;
  }
}

/** The env file's keys; run-with-cluster and scripts/cluster.sh write exactly these. */
export function clusterEnv(c: Omit<Cluster, 'stop' | 'restart'>): Record<string, string> {
  return {
    ADMIN_KUBECONFIG: c.adminKubeconfigPath,
    RESIZER_KUBECONFIG: c.resizerKubeconfigPath,
    CSI_ADDRESS: c.csiAddress,
    DRIVER_NAME: c.driverName,
    API_URL: c.apiUrl,
    CLUSTER_DIR: c.dir,
    ETCD_LOG: c.logs.etcd,
    APISERVER_LOG: c.logs.apiserver,
    DRIVER_LOG: c.logs.driver,
    CA_PATH: c.caPath,
    CSI_PROTO: c.driver.protoPath,
    ETCD_DATA_DIR: c.etcdDataDir,
    ETCD_PID: String(c.pids.etcd),
    APISERVER_PID: String(c.pids.apiserver),
    DRIVER_PID: String(c.pids.driver),
    K8S_VERSION: c.components.k8sVersion,
    ETCD_VERSION: c.components.etcdVersion,
  };
}

export function formatEnv(vars: Record<string, string>): string {
  return (
    Object.entries(vars)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') + '\n'
  );
}

const WATCHDOG = `
parent=$1 pidfile=$2 datadir=$3
while kill -0 "$parent" 2>/dev/null; do sleep 1; done
[ -f "$pidfile" ] || exit 0
pids=$(cat "$pidfile")
echo "parent $parent is gone; stopping $pids"
kill -TERM $pids 2>/dev/null
sleep 5
kill -KILL $pids 2>/dev/null
rm -rf "$datadir"
`;

function startWatchdog(pidFile: string, etcdDataDir: string, logPath: string): Managed {
  return spawnLogged({
    name: 'watchdog',
    command: 'sh',
    args: ['-c', WATCHDOG, 'rz-watchdog', String(process.pid), pidFile, etcdDataDir],
    logPath,
    detached: true,
  });
}

async function distinctPorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

async function waitFor(what: string, proc: Managed, deadline: number, check: () => Promise<boolean>): Promise<void> {
  await eventually(
    what,
    async () => {
      if (proc.hasExited()) throw new StopPolling(`${proc.name} exited (${await proc.exited}) while waiting for ${what}`);
      return check();
    },
    Math.max(0, deadline - Date.now()),
  );
}

function httpsGet(url: string, ca: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(body.trim()));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

// RBAC objects reach the authorizer through an informer; wait until the resizer user is actually
// allowed one of its verbs, so the first test does not race the authorizer cache.
async function waitUntilResizerAuthorized(admin: ReturnType<typeof clientsFromKubeconfig>, deadline: number): Promise<void> {
  const allowed = async (resourceAttributes: Record<string, string>) =>
    (await admin.authz.createSubjectAccessReview({ body: { spec: { user: RESIZER_USER, resourceAttributes } } })).status?.allowed === true;
  await eventually(
    'the resizer user to be authorized by deploy/kubernetes/rbac.yaml and secrets-access/rbac-secrets.yaml',
    async () =>
      (await allowed({ group: 'coordination.k8s.io', resource: 'leases', verb: 'create', namespace: 'default' })) &&
      (await allowed({ resource: 'persistentvolumeclaims', subresource: 'status', verb: 'patch' })) &&
      (await allowed({ resource: 'secrets', verb: 'get', namespace: 'default' })),
    Math.max(0, deadline - Date.now()),
  );
}
