// One holder per key at a time, across controllers. The resize and modify controllers each have
// their own queue (as upstream), so one PVC can be in a resize and a modify worker at once; both
// write its status with resourceVersion preconditions, and upstream turns that race into 409
// Conflicts retried with backoff. Sharing this lock serializes the two reconciles of one PVC, and
// since each writes the patched object back into the shared cache, the second one starts from
// the first one's result instead of from a stale copy.

export class KeyLock {
  /** key → the tail of its chain of holders */
  private readonly tails = new Map<string, Promise<void>>();

  async withKey<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  get heldKeys(): number {
    return this.tails.size;
  }
}
