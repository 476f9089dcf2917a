// The one polling helper of the tests: call fn until it returns a value (not undefined or false),
// retrying through thrown errors, and fail after the bound with what was awaited and the last error.
// A poll that learns it can never succeed (the process it waits for exited) throws StopPolling.

/** Thrown by a polled fn: eventually fails with it at once instead of polling on. */
export class StopPolling extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StopPolling';
  }
}

/** Polls fn until it returns a value that is not undefined/false, or fails after timeoutMs with the last seen state. */
export async function eventually<T>(
  what: string,
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      if (err instanceof StopPolling) throw err;
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs}ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`,
        lastError === undefined ? undefined : { cause: lastError },
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
