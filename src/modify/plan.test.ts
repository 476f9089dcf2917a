// §4.4 and §4.7 as a table: the PVC's class, current class and modify status, and what the
// controller remembers (slow set, uncertain), in; the slow-set action and the plan, out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modifyFacts, planModify, type ModifyDecision, type ModifyFacts } from './plan.js';
import type { Pvc } from '../model/objects.js';

function facts(overrides: Partial<ModifyFacts>): ModifyFacts {
  return { specClass: null, currentClass: '', status: null, inSlowSet: false, uncertain: false, hasModifyingCondition: false, ...overrides };
}
const st = (status: string, target: string) => ({ status, target });

const rows: { name: string; facts: Partial<ModifyFacts>; expect: ModifyDecision }[] = [
  // Step 2: nothing to do.
  { name: 'no class, no current, no status: nothing', facts: {}, expect: { slowSet: 'remove', plan: { kind: 'nothing', why: 'class already applied' } } },
  {
    name: 'class equals current, no status: nothing',
    facts: { specClass: 'gold', currentClass: 'gold' },
    expect: { slowSet: 'remove', plan: { kind: 'nothing', why: 'class already applied' } },
  },
  {
    name: 'empty class, no current, no status: nothing',
    facts: { specClass: '' },
    expect: { slowSet: 'remove', plan: { kind: 'nothing', why: 'class already applied' } },
  },
  // Step 7: new targets.
  {
    name: 'class set on a PVC without one: modify to it',
    facts: { specClass: 'gold' },
    expect: { slowSet: 'remove', plan: { kind: 'modify', target: 'gold' } },
  },
  {
    name: 'class changed from the current one: modify to the new one',
    facts: { specClass: 'gold', currentClass: 'silver' },
    expect: { slowSet: 'remove', plan: { kind: 'modify', target: 'gold' } },
  },
  {
    name: 'Pending (class was missing), same class: look it up again',
    facts: { specClass: 'gold', status: st('Pending', '') },
    expect: { slowSet: 'remove', plan: { kind: 'modify', target: 'gold' } },
  },
  {
    name: 'Pending with the same target: modify, slow set left alone',
    facts: { specClass: 'gold', status: st('Pending', 'gold') },
    expect: { slowSet: 'leave', plan: { kind: 'modify', target: 'gold' } },
  },
  {
    name: 'InProgress after a final error, not uncertain, same target: retry as a new target',
    facts: { specClass: 'gold', status: st('InProgress', 'gold') },
    expect: { slowSet: 'leave', plan: { kind: 'modify', target: 'gold' } },
  },
  {
    name: 'InProgress after a final error, class changed: the new class is accepted (§4.8)',
    facts: { specClass: 'silver', status: st('InProgress', 'gold') },
    expect: { slowSet: 'remove', plan: { kind: 'modify', target: 'silver' } },
  },
  // §4.7: the slow set.
  {
    name: 'Infeasible, same target, not yet parked: park it and try once more',
    facts: { specClass: 'bad', status: st('Infeasible', 'bad') },
    expect: { slowSet: 'add', plan: { kind: 'modify', target: 'bad' } },
  },
  {
    name: 'Infeasible, same target, parked: delay, no driver call',
    facts: { specClass: 'bad', status: st('Infeasible', 'bad'), inSlowSet: true },
    expect: { slowSet: 'add', plan: { kind: 'delay' } },
  },
  {
    name: 'Infeasible, user chose another class: leave the slow set, modify to it',
    facts: { specClass: 'gold', status: st('Infeasible', 'bad'), inSlowSet: true },
    expect: { slowSet: 'remove', plan: { kind: 'modify', target: 'gold' } },
  },
  {
    name: 'Infeasible, user rolled back to the current class: re-apply it',
    facts: { specClass: 'silver', currentClass: 'silver', status: st('Infeasible', 'bad'), inSlowSet: true },
    expect: { slowSet: 'remove', plan: { kind: 'modify', target: 'silver' } },
  },
  {
    name: 'parked but InProgress with the same target: still delayed (as upstream)',
    facts: { specClass: 'gold', status: st('InProgress', 'gold'), inSlowSet: true },
    expect: { slowSet: 'leave', plan: { kind: 'delay' } },
  },
  // Step 4: cancel.
  {
    name: 'Infeasible, class cleared (field absent), ModifyingVolume present: cancel',
    facts: { specClass: null, status: st('Infeasible', 'bad'), hasModifyingCondition: true, inSlowSet: true },
    expect: { slowSet: 'remove', plan: { kind: 'cancel' } },
  },
  {
    name: 'Infeasible, class set to "", ModifyingVolume present: cancel',
    facts: { specClass: '', status: st('Infeasible', 'bad'), hasModifyingCondition: true },
    expect: { slowSet: 'remove', plan: { kind: 'cancel' } },
  },
  {
    name: 'Pending, class cleared, no ModifyingVolume: nothing to cancel',
    facts: { specClass: null, status: st('Pending', '') },
    expect: { slowSet: 'remove', plan: { kind: 'nothing', why: 'class cleared, nothing to cancel' } },
  },
  // Steps 5 and 6: keep the previous target.
  {
    name: 'InProgress, uncertain, class changed: retry the previous target',
    facts: { specClass: 'silver', status: st('InProgress', 'gold'), uncertain: true },
    expect: { slowSet: 'remove', plan: { kind: 'retryPrevious', target: 'gold' } },
  },
  {
    name: 'InProgress, uncertain, same class: retry it without re-marking',
    facts: { specClass: 'gold', status: st('InProgress', 'gold'), uncertain: true },
    expect: { slowSet: 'leave', plan: { kind: 'retryPrevious', target: 'gold' } },
  },
  {
    name: 'InProgress, class cleared (not uncertain): no new target, retry the previous one',
    facts: { specClass: null, status: st('InProgress', 'gold'), hasModifyingCondition: true },
    expect: { slowSet: 'remove', plan: { kind: 'retryPrevious', target: 'gold' } },
  },
  {
    name: 'InProgress, uncertain, class cleared: retry the previous target, no cancel',
    facts: { specClass: '', status: st('InProgress', 'gold'), uncertain: true, hasModifyingCondition: true },
    expect: { slowSet: 'remove', plan: { kind: 'retryPrevious', target: 'gold' } },
  },
];

for (const row of rows) {
  test(`planModify: ${row.name}`, () => {
    assert.deepEqual(planModify(facts(row.facts)), row.expect);
  });
}

test('modifyFacts reads the PVC: absent class is null, empty current is "", any ModifyingVolume counts', () => {
  const pvc: Pvc = {
    metadata: { name: 'p', namespace: 'ns' },
    spec: {},
    status: {
      modifyVolumeStatus: { status: 'Infeasible', targetVolumeAttributesClassName: 'bad' },
      conditions: [{ type: 'ModifyingVolume', status: 'False' }],
    },
  };
  assert.deepEqual(modifyFacts(pvc, true, false), {
    specClass: null,
    currentClass: '',
    status: { target: 'bad', status: 'Infeasible' },
    inSlowSet: true,
    uncertain: false,
    hasModifyingCondition: true,
  });
  const withClass: Pvc = {
    metadata: { name: 'p' },
    spec: { volumeAttributesClassName: 'gold' },
    status: { currentVolumeAttributesClassName: 'silver', modifyVolumeStatus: { status: 'Pending' } },
  };
  assert.deepEqual(modifyFacts(withClass, false, true), {
    specClass: 'gold',
    currentClass: 'silver',
    status: { target: '', status: 'Pending' },
    inSlowSet: false,
    uncertain: true,
    hasModifyingCondition: false,
  });
});
