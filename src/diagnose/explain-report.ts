// How `csi-resizer explain` prints an explanation: the text report (decision, state, why,
// conditions, events, next steps) and the JSON form. Pure. The state is worded as doctor's table
// words it.
import { ago, formatAge } from './age.js';
import { CLAIM_STATE_TEXT } from './claim-progress.js';
import type { Explanation } from './explain-decision.js';

/** "resize in backoff, modify waiting": the states doctor's table would show for the claim, if any. */
function stateLine(e: Explanation): string | undefined {
  const parts = [
    e.resizeState === undefined ? undefined : `resize ${CLAIM_STATE_TEXT[e.resizeState]}`,
    e.modifyState === undefined ? undefined : `modify ${CLAIM_STATE_TEXT[e.modifyState]}`,
  ].filter((p) => p !== undefined);
  return parts.length === 0 ? undefined : `State: ${parts.join(', ')}`;
}

/** The text report: every field of an explanation, as lines. */
export function renderExplanation(key: string, e: Explanation, now: Date): string {
  const lines = [`PVC ${key}`, `Decision: ${e.verdict}`];
  const state = stateLine(e);
  if (state) lines.push(state);
  if (e.reasons.length > 0) lines.push('Why:', ...e.reasons.map((r) => `  - ${r}`));
  if (e.conditions.length > 0) {
    lines.push('Conditions:');
    for (const c of e.conditions) {
      const at = c.lastTransitionTime ? ` (${formatAge(now.getTime() - Date.parse(c.lastTransitionTime))} ago)` : '';
      lines.push(`  - ${c.type}=${c.status}${at}${c.message ? `: ${c.message}` : ''}`);
    }
  }
  if (e.events.length > 0) {
    lines.push('Events:');
    for (const ev of e.events) lines.push(`  - ${ev.type} ${ev.reason}${ago(ev.at, now)}${ev.count > 1 ? ` (x${ev.count})` : ''}: ${ev.message}`);
  }
  if (e.autoGrow) {
    const a = e.autoGrow;
    lines.push(`Auto-grow: ${a.summary}`);
    if (a.usage) {
      const inodes = a.usage.inodes ? `; inodes ${a.usage.inodes}${a.usage.inodesThreshold ? ` (threshold ${a.usage.inodesThreshold})` : ''}` : '';
      lines.push(`  - usage: ${a.usage.available} of ${a.usage.filesystem} free (threshold ${a.usage.threshold})${inodes}, measured ${a.usage.sampledAt}`);
    }
    if (a.limit) lines.push(`  - limit: ${a.limit}`);
    if (a.nextGrowAllowedAt) lines.push(`  - next grow allowed: ${a.nextGrowAllowedAt}`);
    for (const note of a.notes) lines.push(`  - ${note}`);
  }
  if (e.nextSteps.length > 0) lines.push('Next:', ...e.nextSteps.map((s) => `  - ${s}`));
  return `${lines.join('\n')}\n`;
}

/** The JSON report: the claim's key, every field of the explanation (a state null when none), and the facts that could not be read. */
export function renderExplanationJson(key: string, e: Explanation, unknown: readonly string[]): string {
  return `${JSON.stringify({ claim: key, ...e, resizeState: e.resizeState ?? null, modifyState: e.modifyState ?? null, unknown }, null, 2)}\n`;
}
