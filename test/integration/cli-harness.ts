// The real `csi-resizer` command as a child process, for the CLI, metrics and leader-election
// tests. It always runs the TypeScript sources (never a possibly stale dist/), keeps its output in
// memory (and in a log file when asked), lets a test wait for a log line, and is killed by pid
// when the test process exits, whatever happened.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../cluster/components.js';
import { eventually, StopPolling } from '../support/eventually.js';

export const MAIN_TS = join(repoRoot, 'src', 'main.ts');

const live = new Set<ChildProcess>();
let hookInstalled = false;
function killAllAtExit(): void {
  if (hookInstalled) return;
  hookInstalled = true;
  process.on('exit', () => {
    for (const child of live) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class CliProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<Exit>;
  private exitValue: Exit | undefined;
  private readonly waiters = new Set<() => void>();

  constructor(
    args: readonly string[],
    options: {
      env?: NodeJS.ProcessEnv;
      logPath?: string;
      pidNamespace?: boolean;
      /** A command that runs the resizer's command line given after it (it must exec it, keeping the pid). */
      wrapper?: readonly string[];
    } = {},
  ) {
    killAllAtExit();
    const command = [...(options.wrapper ?? []), process.execPath, '--import', 'tsx', MAIN_TS, ...args];
    // pidNamespace: the resizer runs as PID 1 of a new PID namespace, as a container's entrypoint
    // does (needs root). unshare stays the child; --kill-child takes the resizer down with it.
    const [file, ...argv] = options.pidNamespace ? ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child', ...command] : command;
    this.child = spawn(file as string, argv, {
      cwd: repoRoot,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    live.add(this.child);
    const onData = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      this[stream] += text;
      if (options.logPath) appendFileSync(options.logPath, text);
      for (const w of this.waiters) w();
    };
    this.child.stdout!.on('data', onData('stdout'));
    this.child.stderr!.on('data', onData('stderr'));
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        live.delete(this.child);
        this.exitValue = { code, signal };
        for (const w of this.waiters) w();
        resolve(this.exitValue);
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get hasExited(): boolean {
    return this.exitValue !== undefined;
  }

  /** Resolves with the first stderr line matching re; rejects on exit or after timeoutMs. */
  waitForLog(re: RegExp, timeoutMs = 60_000, from = 0): Promise<string> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const line = this.stderr
          .slice(from)
          .split('\n')
          .find((l) => re.test(l));
        if (line !== undefined) return done(() => resolve(line));
        if (this.exitValue) return done(() => reject(new Error(`exited (${JSON.stringify(this.exitValue)}) before logging ${re}\n${this.tail()}`)));
        return undefined;
      };
      const timer = setTimeout(() => done(() => reject(new Error(`no log line ${re} within ${timeoutMs}ms\n${this.tail()}`))), timeoutMs);
      const done = (fn: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        fn();
      };
      this.waiters.add(check);
      check();
    });
  }

  /**
   * The resizer's own pid as seen from here: the child's, or with pidNamespace the pid of the
   * process unshare forked (PID 1 inside its namespace). Waits for it to exist.
   */
  async mainPid(timeoutMs = 10_000): Promise<number> {
    if (this.child.spawnfile !== 'unshare') return this.pid;
    return eventually(
      `the process forked by unshare (pid ${this.pid})`,
      () => {
        const children = readFileSync(`/proc/${this.pid}/task/${this.pid}/children`, 'utf8').trim();
        if (children !== '') return Number(children.split(' ')[0]);
        if (this.hasExited) throw new StopPolling(`no process forked by unshare (pid ${this.pid}): it exited`);
        return undefined;
      },
      timeoutMs,
      20,
    );
  }

  /** Sends a signal to the resizer itself (by pid), also when it runs as PID 1 under unshare. */
  async signalMain(signal: NodeJS.Signals): Promise<void> {
    if (!this.hasExited) process.kill(await this.mainPid(), signal);
  }

  /** Sends a signal to this child only (by pid). */
  kill(signal: NodeJS.Signals): void {
    if (!this.hasExited) this.child.kill(signal);
  }

  /** SIGKILL if still running; resolves once gone. For t.after(). */
  async destroy(): Promise<void> {
    this.kill('SIGKILL');
    await this.exited;
  }

  tail(lines = 30): string {
    return this.stderr.split('\n').slice(-lines).join('\n');
  }
}

/** Runs the command to completion (SIGKILL after timeoutMs). */
export async function runCli(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Exit & { stdout: string; stderr: string }> {
  const proc = new CliProcess(args, options);
  const timer = setTimeout(() => proc.kill('SIGKILL'), options.timeoutMs ?? 90_000);
  try {
    const exit = await proc.exited;
    return { ...exit, stdout: proc.stdout, stderr: proc.stderr };
  } finally {
    clearTimeout(timer);
  }
}

/** A kubeconfig for an API server that is not there: startup goes on to the CSI steps. */
export function unreachableKubeconfig(): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]',
    'users: [{name: u, user: {token: t}}]',
    'contexts: [{name: x, context: {cluster: c, user: u}}]',
    'current-context: x',
    '',
  ].join('\n');
}
