// The fault driver run as its own process (fault-driver-main.ts under tsx), with its volumes in a
// state file and its calls in a JSON-lines log inside `dir`: it can be SIGKILLed mid-call and
// started again with its volumes intact. Ready means GetPluginInfo answers on the socket.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { officialCsiProtoPath } from '../support/official-csi-proto.js';
import { getPluginInfo } from '../cluster/csi-proto.js';
import { spawnLogged, tail, type Managed } from '../cluster/process.js';
import { eventually, StopPolling } from '../support/eventually.js';
import { readCallLog, readFaultDriverState, writeFaultDriverState, type CallLogEntry } from './fault-driver.js';

const MAIN = fileURLToPath(new URL('./fault-driver-main.ts', import.meta.url));

export interface FaultDriverProcessOptions {
  /** Socket, state file, call log and log go here; keep it short (unix socket paths ≤ 107 bytes). */
  dir: string;
  name?: string;
  /** Volumes (id → bytes) the driver starts with; written to the state file before the first start. */
  volumes: ReadonlyMap<string, bigint>;
  expandDelayMs?: number;
  readyTimeoutMs?: number;
}

export interface FaultDriverProcess {
  readonly name: string;
  /** unix:///... */
  readonly address: string;
  readonly stateFile: string;
  readonly callLog: string;
  readonly logPath: string;
  readonly pid: number;
  /** Sends a signal to the current process and waits until it has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again (after kill) from its state file and waits until it answers. */
  start(): Promise<void>;
  /** Volume sizes as the driver last wrote them. */
  volumes(): Map<string, bigint>;
  calls(): CallLogEntry[];
  /** SIGTERM (SIGKILL after 5 s). Safe to call twice. */
  stop(): Promise<void>;
}

export async function startFaultDriverProcess(o: FaultDriverProcessOptions): Promise<FaultDriverProcess> {
  const name = o.name ?? 'fault.csi.test';
  const socketPath = join(o.dir, 'csi.sock');
  const address = `unix://${socketPath}`;
  const stateFile = join(o.dir, 'volumes.json');
  const callLog = join(o.dir, 'calls.jsonl');
  const logPath = join(o.dir, 'fault-driver.log');
  writeFaultDriverState(stateFile, o.volumes);
  const protoPath = officialCsiProtoPath();
  const args = [
    '--import',
    'tsx',
    MAIN,
    `--endpoint=${socketPath}`,
    `--state-file=${stateFile}`,
    `--call-log=${callLog}`,
    `--name=${name}`,
    `--expand-delay-ms=${o.expandDelayMs ?? 0}`,
  ];
  const launch = async (): Promise<Managed> => {
    const proc = spawnLogged({ name: 'fault-driver', command: process.execPath, args, logPath });
    try {
      await eventually(
        `the fault driver on ${address}`,
        async () => {
          if (proc.hasExited()) throw new StopPolling(`fault driver exited (${await proc.exited}) before answering; log:\n${tail(logPath)}`);
          await getPluginInfo(protoPath, address, 1000);
          return true;
        },
        o.readyTimeoutMs ?? 30_000,
      );
    } catch (err) {
      if (err instanceof StopPolling) throw err;
      await proc.stop(1000);
      throw new Error(`fault driver did not answer on ${address} in time; log:\n${tail(logPath)}`, { cause: err });
    }
    return proc;
  };
  let current = await launch();
  let stopped = false;
  return {
    name,
    address,
    stateFile,
    callLog,
    logPath,
    get pid() {
      return current.pid;
    },
    async kill(signal = 'SIGKILL') {
      if (!current.hasExited()) process.kill(current.pid, signal);
      await current.exited;
    },
    async start() {
      if (stopped) throw new Error('start() after stop()');
      if (!current.hasExited()) throw new Error('the fault driver is still running');
      current = await launch();
    },
    volumes: () => readFaultDriverState(stateFile),
    calls: () => readCallLog(callLog),
    async stop() {
      stopped = true;
      await current.stop(5000);
    },
  };
}
