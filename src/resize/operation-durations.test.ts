import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { pv, pvc, type PvcOptions } from '../../test/support/builders.js';
import type { Pv, Pvc, PvcCondition } from '../model/objects.js';
import { OperationDurations, type DurationObserver } from './operation-durations.js';

const DRIVER = 'mock.csi.k8s.io';
const T0 = Date.parse('2024-01-01T00:00:00Z');

class Recorded implements DurationObserver {
  readonly seconds: number[] = [];
  observe(seconds: number): void {
    this.seconds.push(seconds);
  }
}

const cond = (type: string, atMs: number, status = 'True'): PvcCondition => ({ type, status, lastTransitionTime: new Date(atMs).toISOString() });

/** A tracker over a cache holding `pvs`, with a fake clock at T0 and every histogram recorded. */
function tracker(pvs: Pv[] = [pv({ name: 'pv-1', capacity: '1Gi', driver: DRIVER })], options: { modify?: boolean } = {}) {
  const clock = new FakeClock(T0);
  const observed = { resizeController: new Recorded(), resize: new Recorded(), modify: new Recorded() };
  const durations = new OperationDurations({
    driverName: DRIVER,
    pvs: { get: (name) => pvs.find((v) => v.metadata.name === name) },
    resizeController: observed.resizeController,
    resize: observed.resize,
    modify: options.modify === false ? undefined : observed.modify,
    clock,
  });
  /** Feeds the claim's next state as an informer update and returns it. */
  let last: Pvc | undefined;
  const update = (o: PvcOptions) => {
    const next = pvc({ uid: 'uid-1', ...o });
    durations.handlers.update(last ?? next, next);
    last = next;
    return next;
  };
  const add = (o: PvcOptions) => {
    last = pvc({ uid: 'uid-1', ...o });
    durations.handlers.add(last);
    return last;
  };
  return { clock, observed, durations, update, add, seconds: (ms: number) => clock.advance(ms) };
}

const settled = { request: '1Gi', capacity: '1Gi' } satisfies PvcOptions;

test('controller-only resize: both histograms get the time from the request seen to the capacity written', () => {
  const t = tracker();
  t.add(settled);
  t.seconds(5_000);
  t.update({ request: '2Gi', capacity: '1Gi' });
  t.seconds(2_000);
  t.update({ request: '2Gi', capacity: '1Gi', allocated: '2Gi', resizeStatus: 'ControllerResizeInProgress', conditions: [cond('Resizing', t.clock.now())] });
  assert.deepEqual(t.observed.resize.seconds, []);
  t.seconds(3_000);
  t.update({ request: '2Gi', capacity: '2Gi', allocated: '2Gi' });
  assert.deepEqual(t.observed.resizeController.seconds, [5]);
  assert.deepEqual(t.observed.resize.seconds, [5]);
  assert.deepEqual(t.durations.running, { resizes: 0, modifies: 0 });
});

test('resize needing the node: controller done at NodeResizePending, node done when kubelet writes the capacity', () => {
  const t = tracker();
  t.add(settled);
  t.update({ request: '3Gi', capacity: '1Gi' });
  t.seconds(4_000);
  t.update({
    request: '3Gi',
    capacity: '1Gi',
    allocated: '3Gi',
    resizeStatus: 'NodeResizePending',
    conditions: [cond('FileSystemResizePending', t.clock.now())],
  });
  assert.deepEqual(t.observed.resizeController.seconds, [4]);
  assert.deepEqual(t.observed.resize.seconds, []);
  t.seconds(3_600_000);
  t.update({ request: '3Gi', capacity: '1Gi', allocated: '3Gi', resizeStatus: 'NodeResizeInProgress' });
  t.seconds(6_000);
  t.update({ request: '3Gi', capacity: '3Gi', allocated: '3Gi' });
  assert.deepEqual(t.observed.resizeController.seconds, [4], 'the controller part is observed once');
  assert.deepEqual(t.observed.resize.seconds, [3_610]);
});

test('legacy path: FileSystemResizePending without a resize status ends the controller part too', () => {
  const t = tracker();
  t.add(settled);
  t.update({ request: '2Gi', capacity: '1Gi' });
  t.seconds(1_000);
  t.update({ request: '2Gi', capacity: '1Gi', conditions: [cond('FileSystemResizePending', t.clock.now())] });
  assert.deepEqual(t.observed.resizeController.seconds, [1]);
});

test('a failing resize is not observed until it completes; a lowered (recovered) request counts from the first rise', () => {
  const t = tracker();
  t.add(settled);
  t.update({ request: '10Gi', capacity: '1Gi' });
  t.seconds(2_000);
  t.update({
    request: '10Gi',
    capacity: '1Gi',
    allocated: '10Gi',
    resizeStatus: 'ControllerResizeInfeasible',
    conditions: [cond('ControllerResizeError', t.clock.now())],
  });
  t.seconds(60_000);
  t.update({ request: '3Gi', capacity: '1Gi', allocated: '10Gi', resizeStatus: 'ControllerResizeInfeasible' });
  assert.deepEqual(t.observed.resize.seconds, []);
  t.seconds(1_000);
  t.update({ request: '3Gi', capacity: '3Gi', allocated: '3Gi' });
  assert.deepEqual(t.observed.resizeController.seconds, [63]);
  assert.deepEqual(t.observed.resize.seconds, [63]);
});

test('a second rise while the first is under way keeps the first clock until the claim has what it asks for', () => {
  const t = tracker();
  t.add(settled);
  t.update({ request: '2Gi', capacity: '1Gi' });
  t.seconds(1_000);
  t.update({ request: '3Gi', capacity: '1Gi', allocated: '2Gi', resizeStatus: 'ControllerResizeInProgress' });
  t.seconds(1_000);
  t.update({ request: '3Gi', capacity: '2Gi', allocated: '2Gi' }); // the first size done, the second still asked for
  assert.deepEqual(t.observed.resize.seconds, []);
  t.seconds(1_000);
  t.update({ request: '3Gi', capacity: '3Gi', allocated: '3Gi' });
  assert.deepEqual(t.observed.resize.seconds, [3]);
});

test('a claim deleted during its resize is dropped, never observed', () => {
  const t = tracker();
  t.add(settled);
  const growing = t.update({ request: '2Gi', capacity: '1Gi' });
  t.durations.handlers.delete(growing);
  assert.deepEqual(t.durations.running, { resizes: 0, modifies: 0 });
  t.update({ request: '2Gi', capacity: '2Gi' });
  assert.deepEqual(t.observed.resize.seconds, []);
});

test('after a restart: the start comes from the earliest True resize condition; a node-pending claim observes only the node part', () => {
  const t = tracker();
  t.seconds(600_000);
  t.add({
    request: '2Gi',
    capacity: '1Gi',
    allocated: '2Gi',
    resizeStatus: 'NodeResizePending',
    conditions: [cond('Resizing', T0 + 60_000), cond('FileSystemResizePending', T0 + 120_000), cond('ControllerResizeError', T0, 'False')],
  });
  t.seconds(30_000);
  t.update({ request: '2Gi', capacity: '2Gi', allocated: '2Gi' });
  assert.deepEqual(t.observed.resizeController.seconds, [], 'when the controller finished is not known');
  assert.deepEqual(t.observed.resize.seconds, [570]);
});

test('after a restart: a claim waiting with no conditions starts when listed; a condition stamped in the future starts now', () => {
  const t = tracker();
  t.add({ request: '2Gi', capacity: '1Gi' });
  t.seconds(2_000);
  t.update({ request: '2Gi', capacity: '2Gi', allocated: '2Gi' });
  assert.deepEqual(t.observed.resize.seconds, [2]);

  const skewed = tracker();
  skewed.add({ request: '2Gi', capacity: '1Gi', resizeStatus: 'ControllerResizeInProgress', conditions: [cond('Resizing', T0 + 3_600_000)] });
  skewed.seconds(1_000);
  skewed.update({ request: '2Gi', capacity: '2Gi', allocated: '2Gi' });
  assert.deepEqual(skewed.observed.resize.seconds, [1]);
});

test("another driver's claims and unbound claims are not timed; a claim whose PV was not cached yet is kept until it finishes", () => {
  const other = pv({ name: 'pv-other', capacity: '1Gi', driver: 'other.csi.example.com' });
  const late = pv({ name: 'pv-late', capacity: '1Gi', driver: DRIVER });
  const cache = [other];
  const t = tracker(cache);
  t.durations.handlers.add(pvc({ uid: 'a', volumeName: 'pv-other', request: '2Gi', capacity: '1Gi' }));
  t.durations.handlers.add(pvc({ uid: 'b', volumeName: null, phase: 'Pending', request: '2Gi' }));
  assert.deepEqual(t.durations.running, { resizes: 0, modifies: 0 });
  t.durations.handlers.add(pvc({ uid: 'c', volumeName: 'pv-late', request: '2Gi', capacity: '1Gi' }));
  assert.deepEqual(t.durations.running, { resizes: 1, modifies: 0 });
  cache.push(late);
  t.seconds(1_000);
  const done = pvc({ uid: 'c', volumeName: 'pv-late', request: '2Gi', capacity: '2Gi' });
  t.durations.handlers.update(done, done);
  assert.deepEqual(t.observed.resize.seconds, [1]);
});

test('modify: from the new class seen to the class applied; a cancelled first modify is dropped', () => {
  const t = tracker();
  t.add({ ...settled, attributesClass: 'gold', currentAttributesClass: 'gold' });
  t.update({ ...settled, attributesClass: 'platinum', currentAttributesClass: 'gold' });
  t.seconds(2_000);
  t.update({
    ...settled,
    attributesClass: 'platinum',
    currentAttributesClass: 'gold',
    modifyVolumeStatus: { targetVolumeAttributesClassName: 'platinum', status: 'InProgress' },
    conditions: [cond('ModifyingVolume', t.clock.now())],
  });
  t.seconds(1_500);
  t.update({ ...settled, attributesClass: 'platinum', currentAttributesClass: 'platinum' });
  assert.deepEqual(t.observed.modify.seconds, [3.5]);

  const cancelled = tracker();
  cancelled.add({ ...settled, attributesClass: 'missing' });
  cancelled.seconds(1_000);
  cancelled.update({ ...settled, attributesClass: null, modifyVolumeStatus: { targetVolumeAttributesClassName: 'missing', status: 'Pending' } });
  assert.deepEqual(cancelled.observed.modify.seconds, []);
  assert.deepEqual(cancelled.durations.running, { resizes: 0, modifies: 0 });
});

test('modify after a restart starts at the ModifyingVolume condition; without the modify controller nothing is timed', () => {
  const t = tracker();
  t.seconds(10_000);
  t.add({
    ...settled,
    attributesClass: 'gold',
    modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'InProgress' },
    conditions: [cond('ModifyingVolume', T0 + 4_000)],
  });
  t.update({ ...settled, attributesClass: 'gold', currentAttributesClass: 'gold' });
  assert.deepEqual(t.observed.modify.seconds, [6]);

  const off = tracker(undefined, { modify: false });
  off.add({ ...settled, attributesClass: 'gold' });
  assert.deepEqual(off.durations.running, { resizes: 0, modifies: 0 });
});
