// The csi_resizer_pvcs gauge, doctor's claim table and explain classify a claim with one
// classifier (model/claim-state.ts); this checks it through what each shows: a scrape of the gauge
// over the caches, the state doctor's table prints, and explain's state, for every row of the
// shared tables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pv, pvc } from '../../test/support/builders.js';
import { MODIFY_ROWS, RESIZE_ROWS } from '../../test/support/claim-state-rows.js';
import { CLAIM_STATES, type ClaimState } from '../model/claim-state.js';
import type { Pv, Pvc } from '../model/objects.js';
import { createMetrics } from '../observability/metrics.js';
import { PVCS_METRIC, registerResizeStateMetrics } from '../observability/resize-state.js';
import { ResizeStateCensus } from '../resize/state-census.js';
import { CLAIM_STATE_TEXT, claimTable, modifyProgress, resizeProgress } from './claim-progress.js';
import { explainClaim } from './explain-decision.js';

const DRIVER = 'hostpath.csi.k8s.io';

/** The state the gauge counts the claim in (undefined: in none), from a scrape. */
async function gaugeState(claim: Pvc, volume: Pv): Promise<string | undefined> {
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

/** The state doctor's table prints for the claim's operation (undefined: no row), in the gauge's words. */
function doctorState(claim: Pvc, volume: Pv, operation: 'resize' | 'modify'): ClaimState | undefined {
  const rows = claimTable(DRIVER, [volume], [claim], new Date()).rows.filter((r) => r.operation === operation);
  assert.ok(rows.length <= 1, `more than one ${operation} row`);
  const text = rows[0]?.state;
  return CLAIM_STATES.find((state) => CLAIM_STATE_TEXT[state] === text);
}

/** explain's states of the claim, as `csi-resizer explain` finds it with this driver. */
function explainStates(claim: Pvc, volume: Pv) {
  return explainClaim({
    key: 'ns/data',
    pvc: claim,
    pv: volume,
    storageClass: undefined,
    attributesClass: undefined,
    events: [],
    driver: { name: DRIVER, controllerExpand: true, nodeExpand: undefined, modify: true, offlineOnly: false },
    gates: { volumeAttributesClass: true },
    usedBy: undefined,
    now: new Date(),
  });
}

/** The row's claim bound to pv-1, a volume of the driver that claims it back. */
function bound(row: { pvc: Pvc }): { claim: Pvc; volume: Pv } {
  const claim: Pvc = { ...row.pvc, metadata: { ...row.pvc.metadata, uid: 'uid-1' }, spec: { ...row.pvc.spec, volumeName: 'pv-1' } };
  const volume = pv({ name: 'pv-1', capacity: '1Gi', driver: DRIVER, claim: { namespace: 'ns', name: 'data', uid: 'uid-1' } });
  return { claim, volume };
}

test('the gauge, doctor and explain agree on every resize state of a claim (doctor and explain have no queue: rows without failures)', async () => {
  const rows = RESIZE_ROWS.filter((row) => (row.failures ?? 0) === 0);
  // The table holds every state, so agreement is checked on each.
  for (const state of CLAIM_STATES)
    assert.ok(
      rows.some((row) => row.expect === state),
      `no row in state ${state}`,
    );
  for (const row of rows) {
    const { claim, volume } = bound(row);
    const explained = explainStates(claim, volume);
    const seen = { gauge: await gaugeState(claim, volume), doctor: doctorState(claim, volume, 'resize'), explain: explained.resizeState };
    assert.deepEqual(seen, { gauge: row.expect, doctor: row.expect, explain: row.expect }, row.name);
    // explain's decision reads the same state: it backs off exactly where the gauge counts backoff.
    assert.equal(explained.verdict.startsWith('Retry with backoff'), row.expect === 'backoff', `${row.name}: ${explained.verdict}`);
  }
});

test('doctor and explain agree on every modify state of a claim (the gauge counts resizes only)', () => {
  for (const row of MODIFY_ROWS) {
    const { claim, volume } = bound(row);
    const seen = { doctor: doctorState(claim, volume, 'modify'), explain: explainStates(claim, volume).modifyState };
    assert.deepEqual(seen, { doctor: row.expect, explain: row.expect }, row.name);
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
