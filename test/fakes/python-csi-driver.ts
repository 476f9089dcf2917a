// The C-core CSI driver of the interop tests (test/fakes/csi_server.py on Debian's python3-grpcio)
// as a process on a temp unix socket: started from the official csi.proto compiled by buf,
// scriptable per method, restartable on the same socket.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { officialCsiProtoPath } from '../support/official-csi-proto.js';
import { buf } from '../support/buf-cli.js';

const SCRIPT = fileURLToPath(new URL('./csi_server.py', import.meta.url));
// Debian's interpreter, which has python3-grpcio; a python3 earlier on PATH may not.
const PYTHON = '/usr/bin/python3';

export interface PythonReply {
  code?: number;
  details?: string;
  /** grpc-status-details-bin, base64. */
  detailsBin?: string;
  delayMs?: number;
  /** GetPluginInfo: a vendor_version this long. */
  vendorVersionBytes?: number;
}

export class PythonCsiDriver {
  readonly socketPath: string;
  private process: ChildProcessWithoutNullStreams | undefined;
  private lines: Interface | undefined;
  private readonly waiting: Array<(line: string) => void> = [];

  private constructor(
    private readonly dir: string,
    private readonly name: string,
  ) {
    this.socketPath = join(dir, 'csi.sock');
  }

  static async start(name = 'python.csi.test'): Promise<PythonCsiDriver> {
    const dir = mkdtempSync(join(tmpdir(), 'rz-py-'));
    buf(['build', officialCsiProtoPath(), '-o', join(dir, 'csi.binpb')]);
    const driver = new PythonCsiDriver(dir, name);
    await driver.launch();
    return driver;
  }

  get address(): string {
    return `unix://${this.socketPath}`;
  }

  async script(method: string, reply: PythonReply): Promise<void> {
    this.process!.stdin.write(`${JSON.stringify({ method, reply })}\n`);
    const line = await this.nextLine();
    if (line !== 'ok') throw new Error(`csi_server.py answered ${JSON.stringify(line)} to a script`);
  }

  /** Kills the process and starts another on the same socket. */
  async restart(): Promise<void> {
    await this.kill();
    await this.launch();
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async launch(): Promise<void> {
    rmSync(this.socketPath, { force: true });
    const child = spawn(PYTHON, [SCRIPT, this.socketPath, join(this.dir, 'csi.binpb'), this.name], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    this.process = child;
    this.lines = createInterface({ input: child.stdout });
    this.lines.on('line', (line) => this.waiting.shift()?.(line));
    const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`csi_server.py exited ${code}: ${stderr}`))));
    const ready = await Promise.race([this.nextLine(), exited]);
    if (ready !== 'ready') throw new Error(`csi_server.py said ${JSON.stringify(ready)}: ${stderr}`);
    exited.catch(() => {});
  }

  private nextLine(): Promise<string> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private async kill(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    this.lines?.close();
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }
}
