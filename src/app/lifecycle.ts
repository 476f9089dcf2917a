// The process's two-phase stop as a closed set of states: running → draining (the first
// shutdown signal: stop taking work, let in-flight work finish) → stopped (cancel what is left,
// release the Lease, close). Which OS signals start it is os-signals.ts's; the process runner
// (process-runner.ts) drives it.
import { untilAborted } from '../base/signals.js';

export type LifecycleState = 'running' | 'draining' | 'stopped';

/**
 * Two controllers for a two-phase stop. `work` aborts on the first signal: informers and workers
 * stop, reconciles in flight finish. `root` aborts once draining is over (or its bound passed):
 * the elector releases the Lease, the HTTP server closes.
 */
export class Lifecycle {
  private stateValue: LifecycleState = 'running';
  private readonly workController = new AbortController();
  private readonly rootController = new AbortController();

  get state(): LifecycleState {
    return this.stateValue;
  }

  /** Aborted when the process should stop taking work. */
  get workSignal(): AbortSignal {
    return this.workController.signal;
  }

  /** Aborted when everything else should stop (after the drain). */
  get rootSignal(): AbortSignal {
    return this.rootController.signal;
  }

  get shuttingDown(): boolean {
    return this.stateValue !== 'running';
  }

  /** Resolves when shutdown begins (the work signal aborts). */
  whenShutdownBegins(): Promise<void> {
    return untilAborted(this.workController.signal);
  }

  /** running → draining; a second call does nothing. */
  beginShutdown(reason: string): void {
    if (this.stateValue !== 'running') return;
    this.stateValue = 'draining';
    this.workController.abort(new Error(`shutting down: ${reason}`));
  }

  /** → stopped; aborts the root signal. Safe to call twice. */
  finish(): void {
    if (this.stateValue === 'stopped') return;
    if (this.stateValue === 'running') this.workController.abort(new Error('shutting down'));
    this.stateValue = 'stopped';
    this.rootController.abort(new Error('stopped'));
  }
}
