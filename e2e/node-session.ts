// The one-node cluster of e2e/node.sh from TypeScript (the smoke test, the demo): starts
// `e2e/node.sh run -- <a command that waits on its stdin>`, reads the node's variables once it is
// up, and stop() closes that stdin, so node.sh tears everything down and exits. If this process
// dies instead, the pipe closes just the same and the node still goes.
import { execFile, spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const NODE_SH = join(dirname(fileURLToPath(import.meta.url)), 'node.sh');
const READY = 'E2E_NODE_READY ';

export interface NodeEnv {
  readonly dir: string;
  readonly nodeName: string;
  readonly nodeIp: string;
  readonly apiUrl: string;
  /** Admin (system:masters) kubeconfig; the server is reachable from the host. */
  readonly kubeconfig: string;
  readonly kubeletRootDir: string;
  readonly containerdSocket: string;
  readonly logDir: string;
  /** The loopfs test driver's data directory on the host (its volumes and operation log). */
  readonly loopfsDir: string;
  readonly kubectl: string;
  readonly ctr: string;
  /** The images the node was given (e2e/images.sh's images.env). */
  readonly images: Readonly<Record<string, string>>;
}

export interface NodeSession {
  readonly env: NodeEnv;
  /** Milliseconds from start to a Ready node (including builds on a cold cache). */
  readonly startupMs: number;
  /** Tears the node down; resolves with node.sh's exit code (0: nothing left behind). */
  stop(): Promise<number>;
}

export interface NodeOptions {
  /** node.sh's progress lines (its stderr), as they come. */
  progress?: (line: string) => void;
  /** Also written here, whole. */
  logPath?: string;
  /** Bound on start-up, builds included; 60 minutes by default (a cold build is long). */
  startTimeoutMs?: number;
  /** Where node.sh copies the node's logs (kubelet, containerd, ...) after a clean teardown. */
  keepLogsIn?: string;
  /** More variables for node.sh (E2E_KUBELET_MAX_PODS, E2E_KUBELET_SYNC_FREQUENCY, ...). */
  env?: Readonly<Record<string, string>>;
}

function parseEnvFile(path: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

function required(env: Record<string, string>, key: string, file: string): string {
  const value = env[key];
  if (value === undefined || value === '') throw new Error(`${file} has no ${key}`);
  return value;
}

export async function startNode(opts: NodeOptions = {}): Promise<NodeSession> {
  const started = Date.now();
  const child = spawn('bash', [NODE_SH, 'run', '--', 'bash', '-c', `echo "${READY}$E2E_NODE_ENV $E2E_IMAGES_DIR"; read -r _ || true`], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...opts.env, ...(opts.keepLogsIn ? { E2E_KEEP_LOGS: opts.keepLogsIn } : {}) },
  });
  const log = opts.logPath ? createWriteStream(opts.logPath) : undefined;
  const exited = new Promise<number>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1))));
  createInterface({ input: child.stderr }).on('line', (line) => {
    log?.write(`${line}\n`);
    opts.progress?.(line);
  });
  const ready = new Promise<{ envFile: string; imagesDir: string }>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      log?.write(`${line}\n`);
      if (line.startsWith(READY)) {
        const [envFile, imagesDir] = line.slice(READY.length).split(' ');
        if (envFile && imagesDir) resolve({ envFile, imagesDir });
      }
    });
    void exited.then((code) => reject(new Error(`e2e/node.sh exited (${code}) before the node was ready${opts.logPath ? `; see ${opts.logPath}` : ''}`)));
  });
  const timeoutMs = opts.startTimeoutMs ?? 60 * 60_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the node was not ready within ${timeoutMs / 1000}s`)), timeoutMs);
  });
  let stopping: Promise<number> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      child.stdin.end();
      const code = await exited;
      log?.end();
      return code;
    })();
    return stopping;
  };
  try {
    const { envFile, imagesDir } = await Promise.race([ready, timeout]);
    const raw = parseEnvFile(envFile);
    const env: NodeEnv = {
      dir: required(raw, 'E2E_NODE_DIR', envFile),
      nodeName: required(raw, 'E2E_NODE_NAME', envFile),
      nodeIp: required(raw, 'E2E_NODE_IP', envFile),
      apiUrl: required(raw, 'E2E_API_URL', envFile),
      kubeconfig: required(raw, 'E2E_KUBECONFIG', envFile),
      kubeletRootDir: required(raw, 'E2E_KUBELET_ROOT_DIR', envFile),
      containerdSocket: required(raw, 'E2E_CONTAINERD_SOCKET', envFile),
      logDir: required(raw, 'E2E_LOG_DIR', envFile),
      loopfsDir: required(raw, 'E2E_LOOPFS_DIR', envFile),
      kubectl: required(raw, 'KUBECTL_BIN', envFile),
      ctr: required(raw, 'CTR_BIN', envFile),
      images: parseEnvFile(join(imagesDir, 'images.env')),
    };
    return { env, startupMs: Date.now() - started, stop };
  } catch (err) {
    await stop();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `e2e/node.sh ARGS` (the faults it offers a running node: `restart DIR NAME`, `reboot DIR`)
 * to its end, bounded: past timeoutMs it is killed and this rejects with what it printed.
 */
export function nodeScript(args: readonly string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [NODE_SH, ...args], { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
      const output = `${stdout}${stderr}`.trim();
      if (err) reject(new Error(`e2e/node.sh ${args.join(' ')} failed (${err.killed ? `killed after ${timeoutMs / 1000} s` : `exit ${String(err.code)}`}):\n${output}`));
      else resolve(output);
    });
  });
}
