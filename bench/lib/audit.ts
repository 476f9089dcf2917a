// API requests as the apiserver saw them: its audit log (JSON lines), with a policy that records
// only the resizer's user at the Metadata level. Nothing here trusts a resizer's own accounting.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { RESIZER_USER } from '../../test/cluster/pki.js';

/** Only the resizer identity is audited, without request bodies; everything else costs nothing. */
export const AUDIT_POLICY = JSON.stringify({
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  omitStages: ['RequestReceived'],
  rules: [{ level: 'Metadata', users: [RESIZER_USER] }, { level: 'None' }],
});

export interface AuditEntry {
  /** ms since the epoch, when the apiserver received the request. */
  at: number;
  verb: string;
  /** resource[/subresource], e.g. persistentvolumeclaims/status. */
  resource: string;
  code: number;
}

interface RawEntry {
  stage?: string;
  verb?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string };
  requestURI?: string;
  requestReceivedTimestamp?: string;
  responseStatus?: { code?: number };
}

/** Reads what the apiserver appended since the last call. */
export class AuditReader {
  private offset = 0;
  private partial = '';
  readonly entries: AuditEntry[] = [];

  constructor(private readonly path: string) {}

  /** Skips everything written so far. */
  skipToEnd(): void {
    this.poll();
    this.entries.length = 0;
  }

  /** Reads new lines; returns how many new resizer requests were seen. */
  poll(): number {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return 0;
    }
    let added = 0;
    try {
      const size = fstatSync(fd).size;
      const buf = Buffer.alloc(1 << 20);
      while (this.offset < size) {
        const n = readSync(fd, buf, 0, Math.min(buf.length, size - this.offset), this.offset);
        if (n <= 0) break;
        this.offset += n;
        this.partial += buf.subarray(0, n).toString('utf8');
        const lines = this.partial.split('\n');
        this.partial = lines.pop() ?? '';
        for (const line of lines) {
          if (line === '') continue;
          const e = JSON.parse(line) as RawEntry;
          if (e.user?.username !== RESIZER_USER) continue;
          // One entry per request: a watch when it starts streaming, anything else when it completes.
          const isWatch = e.verb === 'watch';
          if (isWatch ? e.stage !== 'ResponseStarted' : e.stage !== 'ResponseComplete') continue;
          const ref = e.objectRef;
          const resource = ref?.resource ? (ref.subresource ? `${ref.resource}/${ref.subresource}` : ref.resource) : (e.requestURI ?? '?');
          this.entries.push({
            at: Date.parse(e.requestReceivedTimestamp ?? ''),
            verb: e.verb ?? '?',
            resource,
            code: e.responseStatus?.code ?? 0,
          });
          added++;
        }
      }
    } finally {
      closeSync(fd);
    }
    return added;
  }

  /** Requests received in [fromMs, toMs], counted by "verb resource". */
  countBetween(fromMs: number, toMs: number): { total: number; byKind: Record<string, number>; errors: number } {
    const byKind: Record<string, number> = {};
    let total = 0;
    let errors = 0;
    for (const e of this.entries) {
      if (e.at < fromMs || e.at > toMs) continue;
      total++;
      if (e.code >= 400) errors++;
      const k = `${e.verb} ${e.resource}`;
      byKind[k] = (byKind[k] ?? 0) + 1;
    }
    return { total, byKind, errors };
  }
}
