// Child processes of the harness: output to a log file, bounded stop (SIGTERM, then SIGKILL), and
// a last-resort kill at process exit so a crashed test run leaves no etcd or apiserver behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';

export interface Managed {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** Resolves with the exit code (or signal) once the process has exited. */
  readonly exited: Promise<string>;
  hasExited(): boolean;
  /** SIGTERM, then SIGKILL after graceMs; resolves once the process is gone. Safe to call twice. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Map<number, ChildProcess>();
const exitCleanups = new Set<() => void>();
let exitHookInstalled = false;

/** A synchronous cleanup to run if this process exits without stopping what it started. */
export function onExitSync(fn: () => void): () => void {
  installExitHook();
  exitCleanups.add(fn);
  return () => exitCleanups.delete(fn);
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers must be synchronous: process.kill is.
  process.on('exit', () => {
    for (const pid of live.keys()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    for (const fn of exitCleanups) {
      try {
        fn();
      } catch {
        // best effort at exit
      }
    }
  });
}

export interface SpawnOptions {
  name: string;
  command: string;
  args: readonly string[];
  logPath: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Survives this Node process (scripts/cluster.sh up): no exit hook, own process group. */
  detached?: boolean;
}

export function spawnLogged(opts: SpawnOptions): Managed {
  const fd = openSync(opts.logPath, 'a');
  let child: ChildProcess;
  try {
    child = spawn(opts.command, opts.args, {
      stdio: ['ignore', fd, fd],
      env: opts.env ?? process.env,
      cwd: opts.cwd,
      detached: opts.detached ?? false,
    });
  } finally {
    closeSync(fd);
  }
  if (child.pid === undefined) throw new Error(`could not start ${opts.name} (${opts.command})`);
  const pid = child.pid;
  let done = false;
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      live.delete(pid);
      resolve(signal ?? String(code));
    });
    child.once('error', (err) => {
      done = true;
      live.delete(pid);
      resolve(`error: ${err.message}`);
    });
  });
  // Never keep the event loop alive for a component: a test file's process must be able to end
  // (its harness stops the components first, or the exit hook kills them).
  child.unref();
  if (!opts.detached) {
    installExitHook();
    live.set(pid, child);
  }
  let stopping: Promise<void> | undefined;
  return {
    name: opts.name,
    pid,
    logPath: opts.logPath,
    exited,
    hasExited: () => done,
    stop(graceMs = 5000) {
      stopping ??= (async () => {
        if (done) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        try {
          await exited;
        } finally {
          clearTimeout(timer);
        }
      })();
      return stopping;
    },
  };
}

/** Stops a process this harness started in an earlier Node process (by its recorded pid). */
export async function stopPid(pid: number, graceMs = 5000): Promise<void> {
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (alive()) process.kill(pid, 'SIGKILL');
  while (alive()) await new Promise((r) => setTimeout(r, 50));
}

export function tail(path: string, lines = 40): string {
  if (!existsSync(path)) return '(no log file)';
  const all = readFileSync(path, 'utf8').split('\n');
  if (all.at(-1) === '') all.pop();
  return all.slice(-lines).join('\n');
}

export function printTails(logs: Readonly<Record<string, string>>, lines = 40): void {
  for (const [name, path] of Object.entries(logs)) {
    process.stderr.write(`\n===== last ${lines} lines of ${name} log (${path}) =====\n${tail(path, lines)}\n`);
  }
}
