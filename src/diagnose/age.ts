// Ages as the diagnostics print them: kubectl's coarse "3m12s" style.

/** "3m12s"-style age, as kubectl prints it (coarser as it grows). */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${m % 60 === 0 ? '' : `${m % 60}m`}`;
  return `${Math.floor(h / 24)}d`;
}

/** " 3m12s ago" for a known time, "" for an unknown one. */
export function ago(at: Date | undefined, now: Date): string {
  return at ? ` ${formatAge(now.getTime() - at.getTime())} ago` : '';
}
