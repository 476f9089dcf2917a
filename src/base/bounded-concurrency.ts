// Running an async function over many items with at most `limit` calls in flight: the usage
// sources ask many kubelets (or queries) per poll, and a fan-out without a bound would open a
// connection to every node at once.

/**
 * Calls fn for every item, at most `limit` at a time, in order of the items. Resolves once all
 * calls have settled; if any rejected, rejects with the first rejection after the others settle.
 */
export async function forEachBounded<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  if (!(limit >= 1)) throw new RangeError(`concurrency limit must be at least 1, got ${limit}`);
  let next = 0;
  let firstError: { error: unknown } | undefined;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      try {
        await fn(items[index] as T, index);
      } catch (error) {
        firstError ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.floor(limit), items.length) }, worker));
  if (firstError) throw firstError.error;
}
