// The csi_resizer_pvcs gauge and doctor's claim table classify a claim with one classifier
// (model/claim-state.ts); this checks it through what each shows: a scrape of the gauge over the
// caches, and the state doctor's table prints, for every row of the shared table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pv } from '../../test/support/builders.js';
import { RESIZE_ROWS } from '../../test/support/claim-state-rows.js';
import { CLAIM_STATES } from '../model/claim-state.js';
import type { Pvc } from '../model/objects.js';
import { createMetrics } from '../observability/metrics.js';
import { PVCS_METRIC, registerResizeStateMetrics } from '../observability/resize-state.js';
import { ResizeStateCensus } from '../resize/state-census.js';
import { CLAIM_STATE_TEXT, resizeProgress } from './claim-state.js';

const DRIVER = 'hostpath.csi.k8s.io';

/** The state the gauge counts the claim in (undefined: in none), from a scrape. */
async function gaugeState(claim: Pvc): Promise<string | undefined> {
  const volume = pv({ name: 'pv-1', capacity: '1Gi', driver: DRIVER });
  const census = new ResizeStateCensus({ driverName: DRIVER, pvcs: { list: () => [claim] }, pvs: { get: (name) => (name === 'pv-1' ? volume : undefined) } });
  const metrics = createMetrics();
  registerResizeStateMetrics({ registry: metrics.registry, snapshot: () => census.count() });
  const counted = (await metrics.registry.metrics()).split('\n')
    .filter((line) => line.startsWith(`${PVCS_METRIC}{`) && line.endsWith(' 1'))
    .map((line) => /state="(\w+)"/.exec(line)?.[1]);
  assert.ok(counted.length <= 1, `counted in more than one state: ${counted.join(', ')}`);
  return counted[0];
}

test('the gauge and doctor agree on every state of a claim (doctor has no queue: rows without failures)', async () => {
  const rows = RESIZE_ROWS.filter((row) => (row.failures ?? 0) === 0);
  // The table holds every state, so agreement is checked on each.
  for (const state of CLAIM_STATES) assert.ok(rows.some((row) => row.expect === state), `no row in state ${state}`);
  for (const row of rows) {
    const claim: Pvc = { ...row.pvc, spec: { ...row.pvc.spec, volumeName: 'pv-1' } };
    const gauge = await gaugeState(claim);
    const doctor = resizeProgress(claim)?.state;
    assert.equal(doctor, gauge === undefined ? undefined : CLAIM_STATE_TEXT[gauge as keyof typeof CLAIM_STATE_TEXT], `${row.name}: gauge ${gauge}, doctor ${doctor}`);
    assert.equal(gauge, row.expect, row.name);
  }
});
