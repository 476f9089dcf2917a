import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMetrics } from './metrics.js';
import { OLDEST_METRIC, PVCS_METRIC, registerResizeStateMetrics, type ResizeStateSnapshot } from './resize-state.js';

test('the gauges expose the snapshot taken at each scrape, every state always present', async () => {
  const metrics = createMetrics();
  let snapshot: ResizeStateSnapshot = { counts: { waiting: 2, in_progress: 0, node_pending: 1, infeasible: 0, backoff: 3 }, oldestSeconds: 42.5 };
  let taken = 0;
  registerResizeStateMetrics({
    registry: metrics.registry,
    snapshot: () => {
      taken++;
      return snapshot;
    },
  });
  const lines = async () => (await metrics.registry.metrics()).split('\n').filter((l) => l.startsWith(PVCS_METRIC) || l.startsWith(OLDEST_METRIC));
  assert.deepEqual(await lines(), [
    `${PVCS_METRIC}{state="waiting"} 2`,
    `${PVCS_METRIC}{state="in_progress"} 0`,
    `${PVCS_METRIC}{state="node_pending"} 1`,
    `${PVCS_METRIC}{state="infeasible"} 0`,
    `${PVCS_METRIC}{state="backoff"} 3`,
    `${OLDEST_METRIC} 42.5`,
  ]);
  assert.equal(taken, 2, 'one snapshot per gauge per scrape');
  snapshot = { counts: { waiting: 0, in_progress: 0, node_pending: 0, infeasible: 0, backoff: 0 }, oldestSeconds: 0 };
  assert.ok((await lines()).every((l) => l.endsWith(' 0')));
});
