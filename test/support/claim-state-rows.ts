// The PVC states every classification of a claim is checked on: the classifier's own table
// (src/model/claim-state.test.ts) and the test that the resize-state gauge, doctor's table and
// explain agree on each (src/diagnose/claim-progress.test.ts). Every state, and the cases where a
// reading could go wrong: conditions that are False or Unknown, unbound claims, malformed sizes,
// unknown statuses.
import type { Pvc, PvcCondition } from '../../src/model/objects.js';
import type { ClaimState } from '../../src/model/claim-state.js';
import { pvc } from './builders.js';

export const cond = (type: string, status = 'True', at = '2024-01-01T00:00:00Z', message?: string): PvcCondition => ({
  type,
  status,
  lastTransitionTime: at,
  ...(message ? { message } : {}),
});

// A bound 1Gi claim asking for 2Gi.
export const growing = { request: '2Gi', capacity: '1Gi' };

export const RESIZE_ROWS: ReadonlyArray<{ name: string; pvc: Pvc; failures?: number; expect: ClaimState | undefined }> = [
  { name: 'request = capacity: nothing unfinished', pvc: pvc({ request: '1Gi', capacity: '1Gi' }), expect: undefined },
  { name: 'request > capacity, not started: waiting', pvc: pvc(growing), expect: 'waiting' },
  { name: 'request > capacity, failed before any status write: backoff', pvc: pvc(growing), failures: 2, expect: 'backoff' },
  { name: 'request > capacity but not bound yet: not a resize', pvc: pvc({ request: '2Gi', phase: 'Pending' }), expect: undefined },
  { name: 'request > capacity, no capacity reported yet: not a resize', pvc: pvc({ request: '2Gi' }), expect: undefined },
  {
    name: 'ControllerResizeInProgress: in progress',
    pvc: pvc({ ...growing, allocated: '2Gi', resizeStatus: 'ControllerResizeInProgress', conditions: [cond('Resizing')] }),
    expect: 'in_progress',
  },
  {
    name: 'ControllerResizeInProgress after a transient error: backoff',
    pvc: pvc({ ...growing, allocated: '2Gi', resizeStatus: 'ControllerResizeInProgress' }),
    failures: 1,
    expect: 'backoff',
  },
  {
    name: 'ControllerResizeInProgress with ControllerResizeError=True (final error): backoff',
    pvc: pvc({ ...growing, allocated: '2Gi', resizeStatus: 'ControllerResizeInProgress', conditions: [cond('ControllerResizeError')] }),
    expect: 'backoff',
  },
  {
    name: 'ControllerResizeInProgress with ControllerResizeError=False: in progress',
    pvc: pvc({
      ...growing,
      allocated: '2Gi',
      resizeStatus: 'ControllerResizeInProgress',
      conditions: [cond('Resizing'), cond('ControllerResizeError', 'False')],
    }),
    expect: 'in_progress',
  },
  {
    name: 'ControllerResizeInProgress with ControllerResizeError=Unknown: in progress',
    pvc: pvc({ ...growing, allocated: '2Gi', resizeStatus: 'ControllerResizeInProgress', conditions: [cond('ControllerResizeError', 'Unknown')] }),
    expect: 'in_progress',
  },
  {
    name: 'ControllerResizeInfeasible: infeasible, whatever the queue says',
    pvc: pvc({ ...growing, allocated: '2Gi', resizeStatus: 'ControllerResizeInfeasible' }),
    failures: 3,
    expect: 'infeasible',
  },
  { name: 'NodeResizeInfeasible: infeasible', pvc: pvc({ ...growing, allocated: '2Gi', resizeStatus: 'NodeResizeInfeasible' }), expect: 'infeasible' },
  {
    name: 'NodeResizePending: node pending',
    pvc: pvc({ ...growing, allocated: '2Gi', resizeStatus: 'NodeResizePending', conditions: [cond('FileSystemResizePending')] }),
    expect: 'node_pending',
  },
  { name: 'NodeResizeInProgress: node pending', pvc: pvc({ ...growing, allocated: '2Gi', resizeStatus: 'NodeResizeInProgress' }), expect: 'node_pending' },
  { name: 'a status this version does not know: in progress', pvc: pvc({ ...growing, resizeStatus: 'SomethingNew' }), expect: 'in_progress' },
  {
    name: 'a status this version does not know, after a failure: backoff',
    pvc: pvc({ ...growing, resizeStatus: 'SomethingNew' }),
    failures: 1,
    expect: 'backoff',
  },
  {
    name: 'legacy: FileSystemResizePending=True: node pending',
    pvc: pvc({ ...growing, conditions: [cond('FileSystemResizePending')] }),
    expect: 'node_pending',
  },
  {
    name: 'legacy: FileSystemResizePending=False, nothing else: not a resize',
    pvc: pvc({ request: '1Gi', capacity: '1Gi', conditions: [cond('FileSystemResizePending', 'False')] }),
    expect: undefined,
  },
  {
    name: 'legacy: FileSystemResizePending=Unknown on a growing claim: waiting',
    pvc: pvc({ ...growing, conditions: [cond('FileSystemResizePending', 'Unknown')] }),
    expect: 'waiting',
  },
  { name: 'legacy: Resizing=True: in progress', pvc: pvc({ ...growing, conditions: [cond('Resizing')] }), expect: 'in_progress' },
  { name: 'legacy: Resizing=True after a failure: backoff', pvc: pvc({ ...growing, conditions: [cond('Resizing')] }), failures: 1, expect: 'backoff' },
  {
    name: 'legacy: Resizing=True and ControllerResizeError=True: backoff',
    pvc: pvc({ ...growing, conditions: [cond('Resizing'), cond('ControllerResizeError')] }),
    expect: 'backoff',
  },
  {
    name: 'a False Resizing on a finished claim: not a resize',
    pvc: pvc({ request: '1Gi', capacity: '1Gi', conditions: [cond('Resizing', 'False')] }),
    expect: undefined,
  },
  {
    name: 'a False Resizing on a growing claim: waiting, not in progress',
    pvc: pvc({ ...growing, conditions: [cond('Resizing', 'False')] }),
    expect: 'waiting',
  },
  {
    name: 'an Unknown Resizing on a growing claim: waiting, not in progress',
    pvc: pvc({ ...growing, conditions: [cond('Resizing', 'Unknown')] }),
    expect: 'waiting',
  },
  {
    name: 'ControllerResizeError=True without a status on a growing claim: backoff',
    pvc: pvc({ ...growing, conditions: [cond('ControllerResizeError')] }),
    expect: 'backoff',
  },
  {
    name: 'ControllerResizeError=True without a status on a finished claim: not a resize',
    pvc: pvc({ request: '1Gi', capacity: '1Gi', conditions: [cond('ControllerResizeError')] }),
    expect: undefined,
  },
  {
    name: 'ControllerResizeError=False on a growing claim: waiting',
    pvc: pvc({ ...growing, conditions: [cond('ControllerResizeError', 'False')] }),
    expect: 'waiting',
  },
  { name: 'finished with a larger capacity than requested', pvc: pvc({ request: '2Gi', capacity: '3Gi', allocated: '2Gi' }), expect: undefined },
  { name: 'malformed request: not guessed', pvc: pvc({ request: 'lots', capacity: '1Gi' }), expect: undefined },
];

// A bound 1Gi claim that has the size it asks for, for the modify rows.
const sized = { request: '1Gi', capacity: '1Gi' };
const inProgress = { targetVolumeAttributesClassName: 'gold', status: 'InProgress' };

export const MODIFY_ROWS: ReadonlyArray<{ name: string; pvc: Pvc; expect: ClaimState | undefined }> = [
  { name: 'no class asked for', pvc: pvc(sized), expect: undefined },
  { name: 'the class is applied', pvc: pvc({ ...sized, attributesClass: 'gold', currentAttributesClass: 'gold' }), expect: undefined },
  { name: 'another class asked for, untouched', pvc: pvc({ ...sized, attributesClass: 'gold' }), expect: 'waiting' },
  {
    name: 'Pending (the class does not exist yet)',
    pvc: pvc({ ...sized, attributesClass: 'gold', modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'Pending' } }),
    expect: 'waiting',
  },
  {
    name: 'InProgress',
    pvc: pvc({ ...sized, attributesClass: 'gold', modifyVolumeStatus: inProgress, conditions: [cond('ModifyingVolume')] }),
    expect: 'in_progress',
  },
  {
    name: 'InProgress with ModifyVolumeError=True: backoff',
    pvc: pvc({ ...sized, attributesClass: 'gold', modifyVolumeStatus: inProgress, conditions: [cond('ModifyVolumeError')] }),
    expect: 'backoff',
  },
  {
    name: 'InProgress with ModifyVolumeError=False: in progress',
    pvc: pvc({ ...sized, attributesClass: 'gold', modifyVolumeStatus: inProgress, conditions: [cond('ModifyVolumeError', 'False')] }),
    expect: 'in_progress',
  },
  {
    name: 'Infeasible',
    pvc: pvc({ ...sized, attributesClass: 'gold', modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'Infeasible' } }),
    expect: 'infeasible',
  },
];
