// The auto-grow metric families (docs/auto-grow.md, "Events and metrics"), registered only when
// --auto-grow is on, so a resizer without it exposes exactly what it did before. Labels come from
// a closed set; a claim's name is never a label value.
import { Counter, Histogram, type Registry } from 'prom-client';

export const AUTO_GROW_TOTAL = 'csi_resizer_auto_grow_total';
export const AUTO_GROW_REACTION = 'csi_resizer_auto_grow_reaction_seconds';

/** How an evaluation of a claim that needed more (or whose usage could not be read) ended. */
export const AutoGrowResult = {
  /** The request was raised. */
  Grown: 'grown',
  /** The claim needed more and is at its limit. */
  LimitReached: 'limit_reached',
  /** The claim needed more and waits for its cooldown. */
  Cooldown: 'cooldown',
  /** Dry-run: the request would have been raised. */
  DryRun: 'dry_run',
  /** The API server refused the new request (quota, LimitRange, admission, RBAC). */
  Refused: 'refused',
  /** A pod mounts the claim, but its usage could not be read. */
  UsageUnavailable: 'usage_unavailable',
} as const;
export type AutoGrowResult = (typeof AutoGrowResult)[keyof typeof AutoGrowResult];

/** From a few seconds (a kubelet period and a poll) to past the default cooldown. */
const REACTION_BUCKETS = [5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 8 * 3600, 12 * 3600, 24 * 3600];

export interface AutoGrowMetrics {
  count(result: AutoGrowResult): void;
  /** Seconds from the first sample that needed more to the request written. */
  observeReaction(seconds: number): void;
}

export function registerAutoGrowMetrics(registry: Registry): AutoGrowMetrics {
  const total = new Counter({
    name: AUTO_GROW_TOTAL,
    help: 'Evaluations by auto-grow of a claim that needed more space or could not be measured, by result (grown, limit_reached, cooldown, dry_run, refused, usage_unavailable). Reported by the leader.',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  // Every result from the start, so a rate over a result that has not happened yet is 0, not absent.
  for (const result of Object.values(AutoGrowResult)) total.inc({ result }, 0);
  const reaction = new Histogram({
    name: AUTO_GROW_REACTION,
    help: "Seconds from the first usage sample below a claim's threshold to its new storage request written (cooldown waits included). Reported by the leader.",
    buckets: REACTION_BUCKETS,
    registers: [registry],
  });
  return {
    count: (result) => total.inc({ result }),
    observeReaction: (seconds) => reaction.observe(Math.max(0, seconds)),
  };
}
