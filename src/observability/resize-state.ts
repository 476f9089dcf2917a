// The resize-state gauges, beyond upstream (§5.4): csi_resizer_pvcs{state} and
// csi_resizer_oldest_unfinished_resize_seconds. This module only registers and exposes them; what
// they count is taken at scrape time by resize/state-census.ts. Labels are a fixed set; a PVC name
// never becomes a label value.
import { Gauge, type Registry } from 'prom-client';
import { CLAIM_STATES, type ClaimState } from '../model/claim-state.js';

export const PVCS_METRIC = 'csi_resizer_pvcs';
export const OLDEST_METRIC = 'csi_resizer_oldest_unfinished_resize_seconds';

export interface ResizeStateSnapshot {
  readonly counts: Readonly<Record<ClaimState, number>>;
  readonly oldestSeconds: number;
}

export interface ResizeStateMetricsOptions {
  registry: Registry;
  /** Called on every scrape of either gauge. */
  snapshot: () => ResizeStateSnapshot;
}

export function registerResizeStateMetrics(options: ResizeStateMetricsOptions): void {
  const { snapshot } = options;
  new Gauge({
    name: PVCS_METRIC,
    help: 'Number of PersistentVolumeClaims of this driver with an unfinished resize, by state (waiting, in_progress, node_pending, infeasible, backoff). Reported by the leader.',
    labelNames: ['state'] as const,
    registers: [options.registry],
    collect() {
      const { counts } = snapshot();
      for (const state of CLAIM_STATES) this.set({ state }, counts[state]);
    },
  });
  new Gauge({
    name: OLDEST_METRIC,
    help: "Age in seconds of the oldest unfinished resize (or modification) of this driver's PersistentVolumeClaims, 0 when none. Reported by the leader.",
    registers: [options.registry],
    collect() {
      this.set(snapshot().oldestSeconds);
    },
  });
}
