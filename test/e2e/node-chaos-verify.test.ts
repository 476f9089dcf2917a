// The node chaos verdict (e2e/node-chaos/verify.ts) and its table (report.ts): what counts as
// lost, a wrong size, damaged data, a condition left behind, a layer grown twice or never, and
// how the driver's log is read (calls cut mid-way, retries after a success).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LoopfsOperation } from '../../e2e/loopfs-oplog.js';
import { failed, nodeChaosTable } from '../../e2e/node-chaos/report.js';
import type { NodeChaosResult } from '../../e2e/node-chaos/run.js';
import { dfMatches, interruptedCalls, verify, type ClaimPlan, type ClaimState, type PodView } from '../../e2e/node-chaos/verify.js';

const GI = 1n << 30n;
const claim = (name: string, volumeId = `pv-${name}`): ClaimPlan => ({
  name,
  volumeId,
  pvName: volumeId,
  kind: 'online-xfs',
  pod: `pod-${name}`,
  fromBytes: GI,
  toBytes: 2n * GI,
});
const finalState = (over: Partial<ClaimState> = {}): ClaimState => ({
  capacityBytes: 2n * GI,
  conditions: [],
  allocatedResourceStatuses: {},
  pvBytes: 2n * GI,
  fileBytes: 2n * GI,
  ...over,
});
const goodView: PodView = { dfBytes: 2 * 2 ** 30 - 70 * 2 ** 20, checks: ['file-0: OK', 'file-1: OK'] };

let op = 0;
function call(volume: string, name: string, result: LoopfsOperation['result'] | 'cut', extra: Partial<LoopfsOperation> = {}): LoopfsOperation[] {
  const opId = `op${++op}`;
  const start: LoopfsOperation = { time: 't', op: name, phase: 'start', opId, pid: 1, volume };
  return result === 'cut' ? [start] : [start, { ...start, phase: 'end', result, ...extra }];
}
const grewOnce = (volume: string) => [
  ...call(volume, 'ControllerExpandVolume', 'grown', { layer: 'file', sizeBefore: 2 ** 30, sizeAfter: 2 ** 31 }),
  ...call(volume, 'NodeExpandVolume', 'grown', { layer: 'filesystem', sizeBefore: 2 ** 30, sizeAfter: 2 ** 31 }),
];

function judge(states: Map<string, ClaimState>, log: LoopfsOperation[], views = new Map([['a', goodView]]), claims = [claim('a')]) {
  return verify({ claims, states, views, log, files: 2 });
}

test('a claim final at its size, with its data and one growth per layer, has no problem', () => {
  const v = judge(new Map([['a', finalState({ conditions: [{ type: 'Unused', status: 'False' }] })]]), grewOnce('pv-a'));
  assert.deepEqual([v.lost, v.wrongSizes, v.dataDamaged, v.badConditions, v.grownTwice, v.neverGrown], [[], [], [], [], [], []]);
});

test('a claim still resizing or at the old size is lost, and its condition is reported', () => {
  const v = judge(
    new Map([
      [
        'a',
        finalState({
          capacityBytes: GI,
          conditions: [{ type: 'FileSystemResizePending', status: 'True' }],
          allocatedResourceStatuses: { storage: 'NodeResizePending' },
        }),
      ],
    ]),
    grewOnce('pv-a'),
  );
  assert.equal(v.lost.length, 1);
  assert.match(v.lost[0]!, /FileSystemResizePending/);
  assert.equal(v.badConditions.length, 1);
  assert.deepEqual(v.lostOnNode, ['a (online-xfs): PV grown, NodeResizePending'], "the PV had grown: the node's part was left");
});

test("a lost claim is the node's only when its PV has grown and its status leaves only the node's part", () => {
  const pending = { capacityBytes: GI, conditions: [{ type: 'Resizing', status: 'True' }] };
  const controllerLeft = judge(
    new Map([['a', finalState({ ...pending, pvBytes: GI, allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' } })]]),
    [],
  );
  assert.equal(controllerLeft.lost.length, 1);
  assert.deepEqual(controllerLeft.lostOnNode, []);
  const pvNotGrown = judge(new Map([['a', finalState({ ...pending, pvBytes: GI, allocatedResourceStatuses: { storage: 'NodeResizePending' } })]]), []);
  assert.deepEqual(pvNotGrown.lostOnNode, []);
  const nodeLeft = judge(new Map([['a', finalState({ ...pending, allocatedResourceStatuses: { storage: 'NodeResizeFailed' } })]]), grewOnce('pv-a'));
  assert.equal(nodeLeft.lostOnNode.length, 1);
});

test('sizes: a PV beyond the request, a PV above its volume, a final claim whose filesystem did not grow', () => {
  const states = new Map([
    ['a', finalState({ pvBytes: 3n * GI, fileBytes: 3n * GI })],
    ['b', finalState({ fileBytes: GI })],
    ['c', finalState()],
  ]);
  const views = new Map([
    ['a', goodView],
    ['b', goodView],
    ['c', { ...goodView, dfBytes: 2 ** 30 }],
  ]);
  const v = judge(states, [...grewOnce('pv-a'), ...grewOnce('pv-b'), ...grewOnce('pv-c')], views, [claim('a'), claim('b'), claim('c')]);
  assert.equal(v.wrongSizes.length, 3, v.wrongSizes.join('\n'));
  assert.match(v.wrongSizes[0]!, /beyond/);
  assert.match(v.wrongSizes[1]!, /says more than the volume/);
  assert.match(v.wrongSizes[2]!, /df in pod-c/);
});

test('data: a failed checksum, a missing file and a pod that could not be asked are damage', () => {
  const states = new Map(['a', 'b', 'c'].map((n) => [n, finalState()]));
  const views = new Map<string, PodView>([
    ['a', { ...goodView, checks: ['file-0: OK', 'file-1: FAILED', 'sha256sum: WARNING: 1 computed checksum did NOT match'] }],
    ['b', { ...goodView, checks: ['file-0: OK'] }],
    ['c', { checks: [], error: 'kubectl exec failed' }],
  ]);
  const log = ['a', 'b', 'c'].flatMap((n) => grewOnce(`pv-${n}`));
  const v = judge(states, log, views, [claim('a'), claim('b'), claim('c')]);
  assert.equal(v.dataDamaged.length, 3);
});

test('growths: twice is reported; none is, unless a call was cut after it may have grown', () => {
  const states = new Map(['a', 'b', 'c'].map((n) => [n, finalState()]));
  const views = new Map(['a', 'b', 'c'].map((n) => [n, goodView]));
  const log = [
    ...grewOnce('pv-a'),
    ...call('pv-a', 'ControllerExpandVolume', 'grown', { layer: 'file', sizeBefore: 2 ** 30, sizeAfter: 2 ** 31, host: 'replica-b' }),
    ...call('pv-b', 'ControllerExpandVolume', 'grown', { layer: 'file', sizeBefore: 2 ** 30, sizeAfter: 2 ** 31 }),
    ...call('pv-b', 'NodeExpandVolume', 'unchanged', { layer: 'filesystem', sizeBefore: 2 ** 31, sizeAfter: 2 ** 31 }),
    ...call('pv-c', 'ControllerExpandVolume', 'cut'),
    ...call('pv-c', 'ControllerExpandVolume', 'unchanged', { layer: 'file', sizeBefore: 2 ** 31, sizeAfter: 2 ** 31 }),
    ...call('pv-c', 'NodeExpandVolume', 'grown', { layer: 'filesystem', sizeBefore: 2 ** 30, sizeAfter: 2 ** 31 }),
  ];
  const v = judge(states, log, views, [claim('a'), claim('b'), claim('c')]);
  assert.equal(v.grownTwice.length, 1);
  assert.match(v.grownTwice[0]!, /a \(pv-a\): file grown 2 times.*replica-b/);
  assert.deepEqual(v.neverGrown, ['b (pv-b): final, but the log shows no filesystem growth']);
  assert.equal(v.controllerCallsAfterSuccess, 1);
  assert.deepEqual(v.interrupted, { ControllerExpandVolume: 1 });
  assert.equal(interruptedCalls(log).length, 1);
});

test('failed driver calls are counted by operation and code', () => {
  const log = [...grewOnce('pv-a'), ...call('pv-a', 'NodeExpandVolume', 'error', { code: 'FailedPrecondition' })];
  assert.deepEqual(judge(new Map([['a', finalState()]]), log).failedCalls, { 'NodeExpandVolume FailedPrecondition': 1 });
});

test('df within 8 % below the volume matches; above it or further below does not', () => {
  assert.ok(dfMatches(2 * 2 ** 30 - 64 * 2 ** 20, 2n * GI));
  assert.ok(!dfMatches(2 * 2 ** 30 + 4096, 2n * GI));
  assert.ok(!dfMatches(2 ** 30, 2n * GI));
});

test('the table: one row per run, a run with a problem or a dirty teardown counts as failed', () => {
  const base: NodeChaosResult = {
    fault: 'kubelet-kill',
    title: 'kubelet | killed',
    image: 'ours',
    imageRef: 'x',
    n: 4,
    kinds: { 'online-xfs': 2, 'offline-ext4': 1, 'offline-xfs': 1 },
    lost: 0,
    lostOnNode: 0,
    wrongSizes: 0,
    dataDamaged: 0,
    badConditions: 0,
    grownTwice: 0,
    neverGrown: 0,
    controllerCallsAfterSuccess: 0,
    interrupted: {},
    failedCalls: {},
    resizerRestarts: 0,
    allFinalS: 12.34,
    leaders: ['a at 0 s'],
    facts: ['kubelet SIGKILLed'],
    problems: [],
    teardownClean: true,
    phasesS: {},
  };
  const table = nodeChaosTable([base, { ...base, image: 'upstream', lost: 2, lostOnNode: 1, allFinalS: undefined }]);
  const rows = table.split('\n');
  assert.equal(rows.length, 4);
  assert.match(rows[2]!, /^\| kubelet \\\| killed \| ours \| 4 \| 0 \|.*\| 12\.3 s \| kubelet SIGKILLed; lease holders: a at 0 s \|$/);
  assert.match(rows[3]!, /\| upstream \| 4 \| 2 \(1\) \|.*\| — \|/);
  assert.ok(!failed(base));
  assert.ok(failed({ ...base, lost: 1 }));
  assert.ok(failed({ ...base, teardownClean: false }));
  assert.ok(failed({ ...base, error: 'boom' }));
});
