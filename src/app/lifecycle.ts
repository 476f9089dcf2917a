// The pieces the process runner (process-runner.ts) is made of: the two-phase stop, which OS
// signals start it, the drain bound, and the small facts leader election needs (Lease namespace,
// identity). The states are a closed set: running → draining (first signal: stop taking work,
// let in-flight work finish) → stopped (release the lease, exit 0). A second signal while
// draining exits 1 at once, as the Go sidecar's SetupSignalHandler does.
import os from 'node:os';
import { sanitizeName } from '../kube/leader-election.js';
import type { TimerHandle } from '../base/clock.js';
import { setLongTimeout } from '../base/long-timer.js';
import { untilAborted } from '../base/signals.js';
import { ExitCode } from './exit.js';

/** Where SIGTERM and SIGINT arrive and what a signal may do to the process: `process`, or a fake in tests. */
export type ProcessSignals = Pick<NodeJS.Process, 'on' | 'off' | 'removeAllListeners' | 'kill' | 'exit' | 'pid'>;

export type LifecycleState = 'running' | 'draining' | 'stopped';

export interface ShutdownOptions {
  /** Called once on the first signal; the process keeps running until the caller exits. */
  onShutdown(signalName: NodeJS.Signals): void;
  /** Called on a second signal while draining; the default exits 1 immediately. */
  onForce?(signalName: NodeJS.Signals): void;
  signals?: readonly NodeJS.Signals[];
  /** The process to listen on; a fake in tests. */
  proc?: Pick<NodeJS.Process, 'on' | 'off' | 'exit'>;
}

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

/**
 * SIGTERM/SIGINT handling for the ReleaseLeaderElectionOnExit gate: the first signal calls
 * onShutdown, a second one exits 1. Returns a function that removes the handlers.
 */
export function handleShutdownSignals(options: ShutdownOptions): () => void {
  const proc = options.proc ?? process;
  const signals = options.signals ?? (['SIGTERM', 'SIGINT'] as const);
  let received = 0;
  const onSignal = (name: NodeJS.Signals) => {
    received += 1;
    if (received === 1) {
      options.onShutdown(name);
      return;
    }
    if (options.onForce) options.onForce(name);
    else proc.exit(ExitCode.Failure);
  };
  for (const s of signals) proc.on(s, onSignal);
  return () => {
    for (const s of signals) proc.off(s, onSignal);
  };
}

/** Go's runtime exits with this when a fatal signal it re-raised did not kill the process. */
export const EXIT_CODE_SIGNAL_IGNORED = 2;

export interface DieOnSignalsOptions {
  signals?: readonly NodeJS.Signals[];
  /** The process to act on; a fake in tests. */
  proc?: Pick<NodeJS.Process, 'on' | 'removeAllListeners' | 'kill' | 'exit' | 'pid'>;
}

/**
 * What a Go program without signal.Notify does on SIGTERM/SIGINT (the sidecar with
 * ReleaseLeaderElectionOnExit off): re-raise the signal with its default action so the process
 * dies by it, and where that does nothing, exit 2. It does nothing for PID 1 in a PID namespace
 * (a container's entrypoint): the kernel drops a signal that PID 1 has no handler for, even one
 * it sends itself. Returns a function that removes the handlers.
 */
export function dieOnSignals(options: DieOnSignalsOptions = {}): () => void {
  const proc = options.proc ?? process;
  const signals = options.signals ?? (['SIGTERM', 'SIGINT'] as const);
  const onSignal = (name: NodeJS.Signals) => {
    // With no listener left, libuv puts the default action back, so the kill below is fatal,
    // and synchronously so: the kernel delivers a signal a thread sends itself before kill returns.
    for (const s of signals) proc.removeAllListeners(s);
    proc.kill(proc.pid, name);
    proc.exit(EXIT_CODE_SIGNAL_IGNORED);
  };
  for (const s of signals) proc.on(s, onSignal);
  return () => {
    for (const s of signals) proc.removeAllListeners(s);
  };
}

/** Waits for `work` but no longer than `ms`; says which came first. Never rejects. */
export async function settleWithin(work: Promise<unknown>, ms: number): Promise<'settled' | 'timedOut'> {
  let timer: TimerHandle | undefined;
  const timeout = new Promise<'timedOut'>((resolve) => {
    // Referenced on purpose: the wait is bounded, and an unreferenced timer would let the event
    // loop end while the caller still awaits the bound.
    timer = setLongTimeout(() => resolve('timedOut'), ms, { unref: false });
  });
  try {
    return await Promise.race([
      work.then(
        () => 'settled' as const,
        () => 'settled' as const,
      ),
      timeout,
    ]);
  } finally {
    timer?.cancel();
  }
}

/**
 * The elector's identity: the sanitized hostname, as the Go sidecar (in a pod, the pod name).
 * CSI_RESIZER_LEADER_ELECTION_IDENTITY overrides it, for several replicas on one host.
 */
export function leaderIdentity(env: NodeJS.ProcessEnv = process.env, hostname: () => string = os.hostname): string {
  const override = env['CSI_RESIZER_LEADER_ELECTION_IDENTITY'];
  return sanitizeName(override && override !== '' ? override : hostname());
}

/**
 * A signal aborted when either parent aborts, with dispose() to unlink both (no AbortSignal.any:
 * it leaks listeners on process-lifetime signals in several Node releases).
 */
export function eitherSignal(a: AbortSignal, b: AbortSignal): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const first = a.aborted ? a : b.aborted ? b : undefined;
  if (first) {
    controller.abort(first.reason);
    return { signal: controller.signal, dispose: () => {} };
  }
  const onA = () => controller.abort(a.reason);
  const onB = () => controller.abort(b.reason);
  a.addEventListener('abort', onA, { once: true });
  b.addEventListener('abort', onB, { once: true });
  return {
    signal: controller.signal,
    dispose: () => {
      a.removeEventListener('abort', onA);
      b.removeEventListener('abort', onB);
    },
  };
}
