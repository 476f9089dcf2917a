// What `csi-resizer doctor` finds, and how it prints it: the checks with their status, the table
// of claims that are not done, and whether anything failed; as text or JSON. Pure.
import { formatAge } from './age.js';
import type { ClaimRow } from './claim-progress.js';

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface Check {
  name: string;
  status: CheckStatus;
  summary: string;
  details?: string[];
}

export interface DoctorReport {
  driver: string | undefined;
  checks: Check[];
  claims: ClaimRow[];
  /** No check failed. */
  healthy: boolean;
}

const MARK: Record<CheckStatus, string> = { ok: ' OK ', warn: 'WARN', fail: 'FAIL', skip: 'SKIP' };

export function renderDoctorText(r: DoctorReport): string {
  const lines: string[] = [];
  for (const c of r.checks) {
    lines.push(`[${MARK[c.status]}] ${c.name}: ${c.summary}`);
    for (const d of c.details ?? []) lines.push(`       ${d}`);
  }
  if (r.claims.length > 0) {
    const rows = [
      ['CLAIM', 'PV', 'OPERATION', 'STATE', 'FOR', 'DETAIL'],
      ...r.claims.map((c) => [c.claim, c.pv, c.operation, c.state, c.forMs === undefined ? '?' : formatAge(c.forMs), c.detail]),
    ];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
    lines.push(
      '',
      ...rows.map((row) =>
        row
          .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
          .join('  ')
          .trimEnd(),
      ),
    );
  }
  lines.push('', r.healthy ? 'No problems found.' : 'Problems found: see the FAIL lines above.');
  return `${lines.join('\n')}\n`;
}

export function renderDoctorJson(r: DoctorReport): string {
  return `${JSON.stringify(
    {
      driver: r.driver ?? null,
      healthy: r.healthy,
      checks: r.checks,
      claims: r.claims.map((c) => ({ ...c, since: c.since?.toISOString() ?? null, forMs: c.forMs ?? null })),
    },
    null,
    2,
  )}\n`;
}
