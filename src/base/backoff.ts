// Jittered exponential backoff for reconnects and relists: initialMs × factor^attempt, capped at
// maxMs, plus up to `jitter` × delay of random extra so many clients don't retry in lockstep.

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  factor?: number;
  jitter?: number;
  random?: () => number;
}

export class Backoff {
  private attempt = 0;
  constructor(private readonly options: BackoffOptions) {}

  /** The delay before the next try; each call grows it. */
  next(): number {
    const { initialMs, maxMs, factor = 2, jitter = 0.1, random = Math.random } = this.options;
    const base = Math.min(maxMs, initialMs * factor ** this.attempt);
    this.attempt++;
    return Math.min(maxMs, base + base * jitter * random());
  }

  reset(): void {
    this.attempt = 0;
  }

  get attempts(): number {
    return this.attempt;
  }
}
