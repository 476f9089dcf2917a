// RSS of a process by the kind of mapping it lives in, from /proc/PID/smaps: the probes that ask
// where a resizer's memory is (autogrow-poll-probe.ts, node-local-heap-probe.ts) share it.
import { readFileSync } from 'node:fs';

/** RSS (MiB) by mapping: the node binary, other files, glibc's main heap, other anonymous memory (V8's heap, arenas, stacks). */
export function rssByMapping(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let name = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const path = head[1]!;
      name = path.endsWith('/node') ? 'node binary' : path.startsWith('/') ? 'other files' : path === '[heap]' ? 'malloc main heap' : 'other anonymous';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out[name] = (out[name] ?? 0) + Number(rss[1]) / 1024;
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, Math.round(v * 10) / 10]));
}
