// When a resizer wrote a log line, from the line itself: both sidecars write klog's header
// (`I1202 02:43:59.206065   14185 main.go:102] ...`, local time, no year). The startup scenario
// reads the Version line's time to split a start into the process's own start (Node or Go, up to
// the first line) and what the resizer does after it.

/** The header's time as ms since the epoch, the year taken from `nearMs` (the spawn's wall clock). */
export function klogLineTime(line: string, nearMs: number): number | undefined {
  const m = /^[IWEF](\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{6}) /.exec(line);
  if (!m) return undefined;
  const [month, day, h, min, s, us] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const near = new Date(nearMs);
  const at = (year: number) => new Date(year, month - 1, day, h, min, s).getTime() + us / 1000;
  // A start that crosses New Year: the candidate year closest to the spawn.
  const years = [near.getFullYear() - 1, near.getFullYear(), near.getFullYear() + 1];
  return years.map(at).reduce((best, t) => (Math.abs(t - nearMs) < Math.abs(best - nearMs) ? t : best));
}

/** The time of the first line of `log` that contains `marker`, or undefined. */
export function firstLineTime(log: string, marker: string, nearMs: number): number | undefined {
  for (const line of log.split('\n')) {
    if (line.includes(marker)) return klogLineTime(line, nearMs);
  }
  return undefined;
}
