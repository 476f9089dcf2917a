// The text of anything a promise may reject with or code may throw: an Error's message, or the
// value as a string. Wrapping errors (`${context}: ${messageOf(err)}` with `{ cause: err }`) use it.

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
