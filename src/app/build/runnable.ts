// What App.run runs side by side, informers and controllers alike: a name for the log and a run
// that ends when its signal aborts and its work has drained.
import type { Logger } from '../../observability/log/logger.js';

export interface Runnable {
  readonly name: string;
  /** Runs until `signal` aborts and in-flight work has finished; `cancelSignal` cuts in-flight work short. */
  run(signal: AbortSignal, cancelSignal?: AbortSignal): Promise<void>;
}

/** Runs `runnable`; an error before `signal` aborted is logged with the runnable's name and rethrown. */
export async function runLogged(runnable: Runnable, signal: AbortSignal, cancelSignal: AbortSignal, log: Logger): Promise<void> {
  try {
    await runnable.run(signal, cancelSignal);
  } catch (err) {
    if (signal.aborted) return;
    log.error('Component stopped with an error', { component: runnable.name, err });
    throw err;
  }
}
