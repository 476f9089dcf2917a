// The real CSI driver of the integration tests: Kubernetes' own e2e CSI mock driver
// (test/infra/components/mockdriver), served on a unix socket in a short temp directory.
// Ready means the socket answers GetPluginInfo, not merely that the socket file exists.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadDriverComponents } from './components.js';
import { getPluginInfo } from './csi-proto.js';
import { spawnLogged, tail, type Managed } from './process.js';
import { eventually, StopPolling } from '../support/eventually.js';

export interface MockDriverOptions {
  /** Directory for the socket and the log; a fresh /tmp/rz-XXXX by default (removed by stop()). */
  dir?: string;
  /** Driver name reported by GetPluginInfo; mock.csi.k8s.io by default. */
  name?: string;
  nodeExpansionRequired?: boolean;
  disableControllerExpansion?: boolean;
  disableOnlineExpansion?: boolean;
  /** Explicit socket path (must be short: unix socket paths are limited to ~107 bytes). */
  socketPath?: string;
  /** How long to wait for GetPluginInfo to answer; 20s by default. */
  readyTimeoutMs?: number;
  /** Keep running after this Node process exits (scripts/cluster.sh up). */
  detached?: boolean;
  /** Called with each new driver pid (start and restart), e.g. for a watchdog's pid file. */
  onPid?: (pid: number) => void;
}

export interface MockDriver {
  /** unix:///... */
  readonly address: string;
  readonly socketPath: string;
  /** The current process; changes after restart(). */
  readonly pid: number;
  readonly logPath: string;
  readonly name: string;
  readonly protoPath: string;
  /** Stops the driver (SIGTERM, SIGKILL after 5s) and waits for it to exit. Safe to call twice. */
  stop(): Promise<void>;
  /** Stops and starts it again on the same socket. Its in-memory volumes are lost. */
  restart(): Promise<void>;
}

export const DEFAULT_DRIVER_NAME = 'mock.csi.k8s.io';
const SOCKET_PATH_MAX = 107;

export async function startMockDriver(opts: MockDriverOptions = {}): Promise<MockDriver> {
  const { mockDriverBin, csiProtoPath } = await loadDriverComponents();
  const ownsDir = opts.dir === undefined;
  const dir = opts.dir ?? mkdtempSync('/tmp/rz-');
  const socketPath = opts.socketPath ?? join(dir, 'csi.sock');
  if (Buffer.byteLength(socketPath) > SOCKET_PATH_MAX) {
    throw new Error(`socket path ${socketPath} is longer than ${SOCKET_PATH_MAX} bytes; pass a shorter dir or socketPath`);
  }
  const name = opts.name ?? DEFAULT_DRIVER_NAME;
  const address = `unix://${socketPath}`;
  const logPath = join(dir, 'mockdriver.log');
  const args = [`--endpoint=${socketPath}`, `--name=${name}`];
  if (opts.nodeExpansionRequired) args.push('--node-expansion-required');
  if (opts.disableControllerExpansion) args.push('--disable-controller-expansion');
  if (opts.disableOnlineExpansion) args.push('--disable-online-expansion');
  const readyTimeoutMs = opts.readyTimeoutMs ?? 20_000;

  const launch = async (): Promise<Managed> => {
    const proc = spawnLogged({ name: 'mockdriver', command: mockDriverBin, args, logPath, detached: opts.detached ?? false });
    try {
      await waitReady(proc, csiProtoPath, address, readyTimeoutMs);
    } catch (err) {
      await proc.stop(1000);
      throw new Error(`mock CSI driver did not become ready on ${address}; last log lines:\n${tail(logPath, 40)}`, { cause: err });
    }
    opts.onPid?.(proc.pid);
    return proc;
  };

  let current = await launch();
  let stopped = false;
  return {
    address,
    socketPath,
    get pid() {
      return current.pid;
    },
    logPath,
    name,
    protoPath: csiProtoPath,
    async stop() {
      if (stopped) return;
      stopped = true;
      await current.stop(5000);
      // The log stays for post-mortems unless the directory was ours alone.
      if (ownsDir && process.env['CSI_RESIZER_KEEP_LOGS'] !== '1') rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      if (stopped) throw new Error('restart() after stop()');
      await current.stop(5000);
      current = await launch();
    },
  };
}

async function waitReady(proc: Managed, protoPath: string, address: string, timeoutMs: number): Promise<void> {
  await eventually(
    `GetPluginInfo on ${address}`,
    async () => {
      if (proc.hasExited()) throw new StopPolling(`mockdriver exited (${await proc.exited}) before it answered GetPluginInfo`);
      await getPluginInfo(protoPath, address, 1000);
      return true;
    },
    timeoutMs,
  );
}
