import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pv, pvc, volumeAttributesClass } from '../../test/support/builders.js';
import type { ClaimState } from '../model/claim-state.js';
import { explainClaim, type ClaimFacts, type DriverFacts, type EventFacts } from './explain-decision.js';

const NOW = new Date('2026-12-01T10:00:00Z');

// The claim app/data bound to pv-1: asks for 2Gi, has 1Gi.
const claim = { namespace: 'app', uid: 'uid-1', storageClassName: 'fast', request: '2Gi', capacity: '1Gi' };
const volume = { capacity: '1Gi', driver: 'hostpath.csi.k8s.io', claim: { namespace: 'app', name: 'data', uid: 'uid-1' } };

const driver: DriverFacts = { name: 'hostpath.csi.k8s.io', controllerExpand: true, nodeExpand: undefined, modify: true, offlineOnly: false };

function facts(over: Partial<ClaimFacts> = {}): ClaimFacts {
  return {
    key: 'app/data',
    pvc: pvc(claim),
    pv: pv(volume),
    storageClass: { name: 'fast', provisioner: driver.name, allowVolumeExpansion: true },
    attributesClass: undefined,
    events: [],
    driver,
    gates: { volumeAttributesClass: true },
    usedBy: [],
    now: NOW,
    ...over,
  };
}

const outOfRange: EventFacts = {
  type: 'Warning',
  reason: 'VolumeResizeFailed',
  count: 3,
  at: new Date(NOW.getTime() - 180_000),
  message: 'resize volume "pv-1" by resizer "hostpath.csi.k8s.io" failed: rpc error: code = OutOfRange desc = 10Ti exceeds the maximum',
};

const rows: {
  name: string;
  facts: ClaimFacts;
  verdict: RegExp;
  state?: ClaimState | undefined;
  modifyState?: ClaimState;
  reason?: RegExp;
  next?: RegExp;
  noNext?: RegExp;
}[] = [
  { name: 'missing claim', facts: facts({ pvc: undefined, pv: undefined }), verdict: /does not exist/ },
  { name: 'unbound claim', facts: facts({ pvc: pvc({ ...claim, phase: 'Pending' }) }), verdict: /not bound/ },
  { name: 'PV gone', facts: facts({ pv: undefined }), verdict: /PV pv-1 .* does not exist/ },
  {
    name: 'PV of another driver',
    facts: facts({ pv: pv({ ...volume, driver: 'other.csi.io' }) }),
    verdict: /belongs to CSI driver other\.csi\.io/,
    state: undefined,
    next: /resizer runs beside other\.csi\.io/,
  },
  {
    name: 'claimRef UID mismatch',
    facts: facts({ pv: pv({ ...volume, claim: { ...volume.claim, uid: 'uid-old' } }) }),
    verdict: /claimed by another PVC .*uid-old/,
  },
  {
    name: 'class forbids expansion',
    facts: facts({ storageClass: { name: 'fast', provisioner: driver.name, allowVolumeExpansion: false } }),
    verdict: /Expand the volume to 2Gi/,
    reason: /does not set allowVolumeExpansion/,
    next: /allowVolumeExpansion: true/,
  },
  { name: 'class missing', facts: facts({ storageClass: null }), verdict: /Expand/, reason: /StorageClass fast does not exist/ },
  { name: 'fresh request', facts: facts(), verdict: /Expand the volume to 2Gi: the driver will be called/, state: 'waiting' },
  { name: 'already big enough', facts: facts({ pvc: pvc({ ...claim, request: '1Gi' }) }), verdict: /Nothing to resize/ },
  {
    name: 'a final error, retried with backoff: the event is shown, its text not parsed',
    facts: facts({
      pvc: pvc({
        ...claim,
        request: '10Ti',
        allocated: '10Ti',
        resizeStatus: 'ControllerResizeInProgress',
        conditions: [{ type: 'ControllerResizeError', status: 'True', message: 'failed to expand pvc with ...' }],
      }),
      events: [outOfRange],
    }),
    verdict: /Retry with backoff: expand the volume to 10Ti/,
    state: 'backoff',
    reason: /answered 3m0s ago: .*OutOfRange/,
    next: /Read the driver's log for the failed ControllerExpandVolume call/,
    noNext: /out of range|lower the request/i,
  },
  {
    name: 'ControllerResizeError=False is no failure: the expansion in progress is repeated, not backed off',
    facts: facts({
      pvc: pvc({
        ...claim,
        request: '10Ti',
        allocated: '10Ti',
        resizeStatus: 'ControllerResizeInProgress',
        conditions: [{ type: 'ControllerResizeError', status: 'False' }],
      }),
    }),
    verdict: /Expand the volume to 10Ti: an expansion to that size is in progress or its outcome is unknown/,
    state: 'in_progress',
  },
  {
    name: 'infeasible, request lowered since: tried at once; the Infeasible status says what the driver answered',
    facts: facts({ pvc: pvc({ ...claim, request: '5Gi', allocated: '10Ti', resizeStatus: 'ControllerResizeInfeasible' }), events: [outOfRange] }),
    verdict: /Expand the volume to 5Gi: the driver will be called/,
    state: 'infeasible',
    reason: /The last attempt failed/,
    next: /called the last size infeasible; if it refuses 5Gi too, lower the request \(to at least the current capacity, 1Gi\)/,
  },
  {
    name: 'infeasible, unchanged request',
    facts: facts({ pvc: pvc({ ...claim, request: '10Ti', allocated: '10Ti', resizeStatus: 'ControllerResizeInfeasible' }), events: [outOfRange] }),
    verdict: /the driver called 10Ti infeasible, so the resizer retries only after --retry-interval-max/,
    state: 'infeasible',
    next: /Lower the request/,
  },
  {
    name: 'kubelet must finish',
    facts: facts({ pvc: pvc({ ...claim, allocated: '2Gi', resizeStatus: 'NodeResizePending' }), pv: pv({ ...volume, capacity: '2Gi' }) }),
    verdict: /Waiting for kubelet: node expansion pending/,
    state: 'node_pending',
    next: /No pod uses the claim/,
  },
  {
    name: 'offline-only driver, volume in use',
    facts: facts({ driver: { ...driver, offlineOnly: true }, usedBy: ['web-0'] }),
    verdict: /once no pod uses the volume/,
    reason: /Used by web-0/,
  },
  {
    name: 'unreadable size on the PV',
    facts: facts({ pv: pv({ ...volume, capacity: '1.x.Gi' }) }),
    verdict: /cannot be read/,
    reason: /spec\.capacity\.storage/,
  },
  {
    name: 'request lowered below an earlier allocation (recovery)',
    facts: facts({ pvc: pvc({ ...claim, request: '1Gi', allocated: '2Gi' }) }),
    verdict: /Nothing to resize/,
    reason: /lowered below an earlier allocation of 2Gi/,
  },
  { name: 'no expansion at all', facts: facts({ driver: { ...driver, controllerExpand: false, nodeExpand: false } }), verdict: /Never/ },
  {
    name: 'modify to a class that does not exist',
    facts: facts({ pvc: pvc({ ...claim, request: '1Gi', attributesClass: 'gold' }), attributesClass: null }),
    verdict: /Nothing to resize/,
    reason: /VolumeAttributesClass gold does not exist/,
    next: /Create VolumeAttributesClass gold/,
  },
  {
    name: 'modify to an existing class',
    facts: facts({
      pvc: pvc({ ...claim, request: '1Gi', attributesClass: 'gold' }),
      attributesClass: volumeAttributesClass({ name: 'gold', driverName: driver.name }),
    }),
    verdict: /Nothing to resize/,
    reason: /call ControllerModifyVolume with the parameters of class gold/,
  },
  {
    name: 'modify infeasible',
    facts: facts({
      pvc: pvc({ ...claim, request: '1Gi', attributesClass: 'gold', modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'Infeasible' } }),
    }),
    verdict: /Nothing to resize/,
    reason: /called class gold infeasible/,
    modifyState: 'infeasible',
    next: /another VolumeAttributesClass/,
  },
  {
    name: 'modify on a driver without MODIFY_VOLUME',
    facts: facts({ pvc: pvc({ ...claim, request: '1Gi', attributesClass: 'gold' }), driver: { ...driver, modify: false } }),
    verdict: /Nothing to resize/,
    reason: /does not support ControllerModifyVolume/,
  },
];

for (const row of rows) {
  test(`explain: ${row.name}`, () => {
    const e = explainClaim(row.facts);
    assert.match(e.verdict, row.verdict);
    if ('state' in row) assert.equal(e.resizeState, row.state);
    if (row.modifyState) assert.equal(e.modifyState, row.modifyState);
    if (row.reason)
      assert.ok(
        e.reasons.some((r) => row.reason!.test(r)),
        `no reason matches ${row.reason}: ${JSON.stringify(e.reasons)}`,
      );
    if (row.next)
      assert.ok(
        e.nextSteps.some((s) => row.next!.test(s)),
        `no next step matches ${row.next}: ${JSON.stringify(e.nextSteps)}`,
      );
    if (row.noNext) assert.ok(!e.nextSteps.some((s) => row.noNext!.test(s)), `a next step matches ${row.noNext}: ${JSON.stringify(e.nextSteps)}`);
  });
}
