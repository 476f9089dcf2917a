// The csi_resizer_pvcs gauge and doctor's claim table classify a claim with one classifier
// (model/claim-state.ts); this checks it through what each shows: a scrape of the gauge over the
// caches, and the state doctor's table prints, for every row of the shared table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pv, pvc } from '../../test/support/builders.js';
import { RESIZE_ROWS } from '../../test/support/claim-state-rows.js';
import { CLAIM_STATES } from '../model/claim-state.js';
import type { Pvc } from '../model/objects.js';
import { createMetrics } from '../observability/metrics.js';
import { PVCS_METRIC, registerResizeStateMetrics } from '../observability/resize-state.js';
import { ResizeStateCensus } from '../resize/state-census.js';
import { CLAIM_STATE_TEXT, modifyProgress, resizeProgress } from './claim-progress.js';

const DRIVER = 'hostpath.csi.k8s.io';

/** The state the gauge counts the claim in (undefined: in none), from a scrape. */
async function gaugeState(claim: Pvc): Promise<string | undefined> {
  const volume = pv({ name: 'pv-1', capacity: '1Gi', driver: DRIVER });
  const census = new ResizeStateCensus({ driverName: DRIVER, pvcs: { list: () => [claim] }, pvs: { get: (name) => (name === 'pv-1' ? volume : undefined) } });
  const metrics = createMetrics();
  registerResizeStateMetrics({ registry: metrics.registry, snapshot: () => census.count() });
  const counted = (await metrics.registry.metrics())
    .split('\n')
    .filter((line) => line.startsWith(`${PVCS_METRIC}{`) && line.endsWith(' 1'))
    .map((line) => /state="(\w+)"/.exec(line)?.[1]);
  assert.ok(counted.length <= 1, `counted in more than one state: ${counted.join(', ')}`);
  return counted[0];
}

test('the gauge and doctor agree on every state of a claim (doctor has no queue: rows without failures)', async () => {
  const rows = RESIZE_ROWS.filter((row) => (row.failures ?? 0) === 0);
  // The table holds every state, so agreement is checked on each.
  for (const state of CLAIM_STATES)
    assert.ok(
      rows.some((row) => row.expect === state),
      `no row in state ${state}`,
    );
  for (const row of rows) {
    const claim: Pvc = { ...row.pvc, spec: { ...row.pvc.spec, volumeName: 'pv-1' } };
    const gauge = await gaugeState(claim);
    const doctor = resizeProgress(claim)?.state;
    assert.equal(
      doctor,
      gauge === undefined ? undefined : CLAIM_STATE_TEXT[gauge as keyof typeof CLAIM_STATE_TEXT],
      `${row.name}: gauge ${gauge}, doctor ${doctor}`,
    );
    assert.equal(gauge, row.expect, row.name);
  }
});

const NOW = new Date('2026-12-01T10:00:00Z');
const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000).toISOString();
// A claim bound to pv-1 that asks for 2Gi and has 1Gi.
const claim = { namespace: 'app', uid: 'uid-1', storageClassName: 'fast', request: '2Gi', capacity: '1Gi' };

const progressRows: { name: string; claim: Pvc; expect: { operation: string; state: string; since?: string } | undefined }[] = [
  { name: 'nothing asked', claim: pvc({ ...claim, request: '1Gi' }), expect: undefined },
  { name: 'asked, untouched', claim: pvc(claim), expect: { operation: 'resize', state: 'waiting' } },
  {
    name: 'in progress',
    claim: pvc({ ...claim, resizeStatus: 'ControllerResizeInProgress', conditions: [{ type: 'Resizing', status: 'True', lastTransitionTime: minutesAgo(5) }] }),
    expect: { operation: 'resize', state: 'in progress', since: minutesAgo(5) },
  },
  {
    name: 'failing',
    claim: pvc({
      ...claim,
      resizeStatus: 'ControllerResizeInProgress',
      conditions: [{ type: 'ControllerResizeError', status: 'True', lastTransitionTime: minutesAgo(2) }],
    }),
    expect: { operation: 'resize', state: 'in backoff', since: minutesAgo(2) },
  },
  { name: 'infeasible', claim: pvc({ ...claim, resizeStatus: 'ControllerResizeInfeasible' }), expect: { operation: 'resize', state: 'infeasible' } },
  { name: 'node infeasible', claim: pvc({ ...claim, resizeStatus: 'NodeResizeInfeasible' }), expect: { operation: 'resize', state: 'infeasible' } },
  {
    name: 'waiting for kubelet',
    claim: pvc({
      ...claim,
      request: '2Gi',
      capacity: '1Gi',
      resizeStatus: 'NodeResizePending',
      conditions: [{ type: 'FileSystemResizePending', status: 'True', lastTransitionTime: minutesAgo(90) }],
    }),
    expect: { operation: 'resize', state: 'waiting for kubelet', since: minutesAgo(90) },
  },
];

for (const row of progressRows) {
  test(`claim state: ${row.name}`, () => {
    const p = resizeProgress(row.claim);
    if (!row.expect) return assert.equal(p, undefined);
    assert.equal(p?.operation, row.expect.operation);
    assert.equal(p?.state, row.expect.state);
    assert.equal(p?.since?.toISOString(), row.expect.since === undefined ? undefined : new Date(row.expect.since).toISOString());
  });
}

test('claim state: modify waiting, in progress, infeasible, failing', () => {
  assert.equal(modifyProgress(pvc({ ...claim, request: '1Gi' })), undefined);
  assert.equal(modifyProgress(pvc({ ...claim, attributesClass: 'gold', currentAttributesClass: 'gold' })), undefined);
  assert.equal(modifyProgress(pvc({ ...claim, attributesClass: 'gold' }))?.state, 'waiting');
  assert.equal(
    modifyProgress(pvc({ ...claim, attributesClass: 'gold', modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'InProgress' } }))?.state,
    'in progress',
  );
  assert.equal(
    modifyProgress(pvc({ ...claim, attributesClass: 'gold', modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'Infeasible' } }))?.state,
    'infeasible',
  );
  assert.equal(
    modifyProgress(
      pvc({
        ...claim,
        attributesClass: 'gold',
        modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'InProgress' },
        conditions: [{ type: 'ModifyVolumeError', status: 'True' }],
      }),
    )?.state,
    'in backoff',
  );
});

test('claim state: a malformed request is left to explain, not thrown', () => {
  assert.equal(resizeProgress(pvc({ ...claim, request: 'Pi' })), undefined);
});
