// What SIGTERM and SIGINT do to the process, chosen by the ReleaseLeaderElectionOnExit gate
// (§5): with it, the first signal starts the two-phase stop (lifecycle.ts) and a second exits 1,
// as the Go sidecar's SetupSignalHandler does; without it, the signal kills the process as Go's
// runtime does. The process is a parameter so tests pass a fake.
import { ExitCode } from './exit.js';

/** Where SIGTERM and SIGINT arrive and what a signal may do to the process: `process`, or a fake in tests. */
export type ProcessSignals = Pick<NodeJS.Process, 'on' | 'off' | 'removeAllListeners' | 'kill' | 'exit' | 'pid'>;

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
