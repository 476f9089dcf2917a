// What a kubelet does for a sidecar container, reduced to what a chaos run needs: a resizer that
// exits on its own is started again after restartDelayMs and the restart is counted. A process the
// test kills on purpose (the fault itself) stays down.
import type { RunningResizer } from '../../bench/lib/resizer.js';

export class Supervised {
  restarts = 0;
  /** Every log file this replica wrote, in start order. */
  readonly logPaths: string[] = [];
  private current: RunningResizer;
  private stopping = false;
  private killedOnPurpose = false;
  private pendingRestart: NodeJS.Timeout | undefined;

  constructor(
    readonly label: string,
    private readonly launch: () => RunningResizer,
    private readonly restartDelayMs = 1000,
    private readonly maxRestarts = 30,
  ) {
    this.current = this.spawn();
  }

  get pid(): number {
    return this.current.proc.pid;
  }

  get running(): boolean {
    return !this.current.proc.hasExited();
  }

  get exited(): Promise<string> {
    return this.current.proc.exited;
  }

  /** The fault: a signal this replica is not restarted after. Resolves once it has exited. */
  async kill(signal: NodeJS.Signals): Promise<void> {
    this.killedOnPurpose = true;
    if (!this.current.proc.hasExited()) process.kill(this.current.proc.pid, signal);
    await this.current.proc.exited;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.pendingRestart);
    await this.current.stop();
  }

  private spawn(): RunningResizer {
    const r = this.launch();
    this.logPaths.push(r.proc.logPath);
    void r.proc.exited.then(() => {
      if (this.stopping || this.killedOnPurpose || this.restarts >= this.maxRestarts) return;
      this.restarts++;
      this.pendingRestart = setTimeout(() => {
        if (!this.stopping) this.current = this.spawn();
      }, this.restartDelayMs);
    });
    return r;
  }
}
