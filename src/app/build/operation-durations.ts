// How long resizes and modifications take (§5.5): timed from the PVC informer's events, so only
// the leader, whose informers run, observes them.
import type { VolumeScope } from '../../model/volume-scope.js';
import type { Metrics } from '../../observability/metrics.js';
import { OperationDurations } from '../../resize/operation-durations.js';
import type { InformerSet } from './informers.js';

export interface OperationDurationsOptions {
  readonly driverName: string;
  readonly informers: InformerSet;
  readonly scope: VolumeScope;
  readonly operations: Metrics['operations'];
  /** Whether the modify controller runs, so modifications are timed too. */
  readonly modifies: boolean;
}

export function registerOperationDurations(options: OperationDurationsOptions): void {
  const { driverName, informers, scope, operations, modifies } = options;
  const durations = new OperationDurations({
    driverName,
    pvs: informers.pvs.store,
    scope,
    resizeController: operations.resizeControllerDuration,
    resize: operations.resizeDuration,
    modify: modifies ? operations.modifyDuration : undefined,
  });
  informers.pvcs.addEventHandler(durations.handlers);
}
