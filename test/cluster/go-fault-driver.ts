// A CSI driver on grpc-go that fails on purpose (test/infra/components/gofaultdriver): it hangs in
// ControllerExpandVolume until grpc-go's server resets the call at its deadline, answers with an
// oversized message or its own Unavailable, or flags its responses compressed under an encoding
// the client cannot read.
// Served on a unix socket in a short temp directory. Ready means the socket takes a connection:
// with a compressor set, no CSI call of the test client would succeed.
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { loadGoFaultDriverBin } from './components.js';
import { spawnLogged, tail } from './process.js';
import { eventually, StopPolling } from '../support/eventually.js';

/** What ControllerExpandVolume does (its --expand flag). */
export type GoFaultExpand = 'grow' | 'hang' | 'oversized' | 'unavailable';

export interface GoFaultDriverOptions {
  /** Driver name reported by GetPluginInfo; gofault.csi.test by default. */
  name?: string;
  expand?: GoFaultExpand;
  /** Every response flagged compressed under this grpc-encoding ("identity" included). */
  compressor?: string;
}

export interface GoFaultDriver {
  /** unix:///... */
  readonly address: string;
  readonly name: string;
  readonly logPath: string;
  /** Stops the driver and removes its directory. Safe to call twice. */
  stop(): Promise<void>;
}

export async function startGoFaultDriver(opts: GoFaultDriverOptions = {}): Promise<GoFaultDriver> {
  const bin = await loadGoFaultDriverBin();
  const dir = mkdtempSync('/tmp/rz-gf-');
  const socketPath = join(dir, 'csi.sock');
  const logPath = join(dir, 'gofaultdriver.log');
  const name = opts.name ?? 'gofault.csi.test';
  const args = [`--endpoint=${socketPath}`, `--name=${name}`, `--expand=${opts.expand ?? 'grow'}`];
  if (opts.compressor !== undefined) args.push(`--compressor=${opts.compressor}`);
  const proc = spawnLogged({ name: 'gofaultdriver', command: bin, args, logPath });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await proc.stop(5000);
    if (process.env['CSI_RESIZER_KEEP_LOGS'] !== '1') rmSync(dir, { recursive: true, force: true });
  };
  try {
    await eventually(
      `the grpc-go fault driver on ${socketPath}`,
      async () => {
        if (proc.hasExited()) throw new StopPolling(`gofaultdriver exited (${await proc.exited}):\n${tail(logPath)}`);
        return acceptsConnection(socketPath);
      },
      10_000,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { address: `unix://${socketPath}`, name, logPath, stop };
}

function acceptsConnection(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
