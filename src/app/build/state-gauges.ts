// The resize-state gauges (§5.4): a census of the claims in the controllers' caches, counted at
// each scrape. A changed request starts a claim's clock, so the PVC informer's updates feed it.
import { requestedBytes } from '../../model/pvc.js';
import type { VolumeScope } from '../../model/volume-scope.js';
import type { Metrics } from '../../observability/metrics.js';
import { registerResizeStateMetrics } from '../../observability/resize-state.js';
import { ResizeStateCensus } from '../../resize/state-census.js';
import type { InformerSet } from './informers.js';

export interface StateGaugesOptions {
  readonly driverName: string;
  readonly informers: InformerSet;
  readonly scope: VolumeScope;
  readonly registry: Metrics['registry'];
  /** How often the resize queue has requeued a claim (0 without a resize controller). */
  readonly requeues: (key: string) => number;
}

export function registerStateGauges(options: StateGaugesOptions): void {
  const { driverName, informers, scope, requeues } = options;
  const census = new ResizeStateCensus({ driverName, pvcs: informers.pvcs.store, pvs: informers.pvs.store, requeues, scope });
  registerResizeStateMetrics({ registry: options.registry, snapshot: () => census.count() });
  informers.pvcs.addEventHandler({
    update: (before, after) => {
      try {
        if (requestedBytes(before) !== requestedBytes(after)) census.requestChanged(after);
      } catch {
        // a malformed quantity is the controller's to report
      }
    },
  });
}
