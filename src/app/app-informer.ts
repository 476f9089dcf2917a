// One of the app's informers as the app runs it (docs/behavior.md §1 steps 8 and 20). Normally the
// app's run starts it. With leader election off the app gives it a head start instead: it starts
// listing as soon as the app knows it needs it (the PVC and PV informers while VolumeAttributesClass
// discovery and the CSI start-up run), and the run then takes over the informer already listing:
// the same requests, only sooner (docs/differences/startup-order.md). A head start no run took over
// (a start-up that failed, an app closed before it ran) is stopped with `stopEarly`.
import type { Informer } from '../kube/informer.js';
import type { KubeObject } from '../model/objects.js';

export class AppInformer<T extends KubeObject = KubeObject> {
  /** The head start's run, until a run takes it over or it is stopped. */
  private early: { readonly stop: AbortController; readonly done: Promise<void> } | undefined;

  constructor(readonly name: string, readonly informer: Informer<T>) {}

  /** Starts listing and watching now; the next `run` takes the running informer over. Once only. */
  startEarly(): void {
    if (this.early) throw new Error(`${this.name} already has a head start`);
    const stop = new AbortController();
    const done = this.informer.run(stop.signal);
    // Awaited by the run that takes it over; until then a rejection (a bug) is not unhandled.
    done.catch(() => {});
    this.early = { stop, done };
  }

  /** Whether a head start is running that no run has taken over yet. */
  get startedEarly(): boolean {
    return this.early !== undefined;
  }

  /** Keeps the cache current until `signal` aborts: the head start when there is one, else a run of its own. */
  async run(signal: AbortSignal): Promise<void> {
    const early = this.early;
    if (!early) return this.informer.run(signal);
    this.early = undefined;
    const stop = () => early.stop.abort(signal.reason);
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    try {
      await early.done;
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  /** Ends a head start no run took over (its requests are cancelled, its timers cleared); resolves once it has ended. */
  async stopEarly(): Promise<void> {
    const early = this.early;
    if (!early) return;
    this.early = undefined;
    early.stop.abort();
    await early.done.catch(() => {});
  }

  waitForSync(signal: AbortSignal): Promise<void> {
    return this.informer.waitForSync(signal);
  }
}
