// A run of refusals for want of an RBAC rule (403), said once. The informers' reflectors, the event
// recorders and the Lease elector each retry a refused request on their own schedule; through a
// RefusalRun they tell their AccessListener of the first refusal since the server last accepted
// one, and of the first accepted request after it, so a missing rule is said once and the retries
// stay quiet (docs/behavior.md §6.3).
import { isForbidden, type KubeApiError } from './errors.js';

/** Told when the server refuses a component's requests (403) and when it accepts one again. Must not throw. */
export interface AccessListener {
  /** The first refusal since the component started or was last accepted; the retries after it are silent. */
  refused(err: KubeApiError): void;
  /** The first request the server accepted after a refusal. */
  allowed(): void;
}

export class RefusalRun {
  private refusing = false;

  constructor(private readonly listener: AccessListener) {}

  /**
   * An error of a request: true when it is a refusal (403), which the listener hears of when it
   * is the first of a run; false for any other error, which the caller reports as it would.
   */
  noteError(err: unknown): err is KubeApiError {
    if (!isForbidden(err)) return false;
    if (!this.refusing) {
      this.refusing = true;
      this.listener.refused(err as KubeApiError);
    }
    return true;
  }

  /** The server accepted a request: after a refusal, the listener hears it once. */
  noteAccepted(): void {
    if (!this.refusing) return;
    this.refusing = false;
    this.listener.allowed();
  }
}
