// The reconcile's paths that the integration tests can't reach cheaply, with in-memory fakes:
// what is written, what is recorded, what is thrown, for errors before and after the driver call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { Pv, Pvc, VolumeAttributesClass } from '../model/objects.js';
import { silentLogger } from '../observability/log/logger.js';
import { KeyLock } from '../queue/key-lock.js';
import { SlowSet } from '../queue/slow-set.js';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { RecordingEventRecorder } from '../../test/fakes/recording-events.js';
import { MemoryVolumeApi, type WriteFailure } from '../../test/fakes/memory-volume-api.js';
import { assertFailureTexts, driverError, noStatusError, pvcGone, pvGone } from '../../test/support/reconcile-errors.js';
import type { Modifier } from './modifier.js';
import { ModifyReconciler } from './reconcile.js';

const DRIVER = 'd.csi.test';

const never = new AbortController().signal;

function setup(
  opts: {
    pvc?: Partial<Pvc['spec']>;
    status?: Pvc['status'];
    classes?: string[];
    modify?: () => Promise<void>;
    pvDriver?: string;
    fail?: WriteFailure;
  } = {},
) {
  const pvc: Pvc = {
    metadata: { name: 'data', namespace: 'ns', resourceVersion: '10' },
    spec: { volumeName: 'pv-1', volumeAttributesClassName: 'gold', ...opts.pvc },
    status: { phase: 'Bound', ...opts.status },
  };
  const pv: Pv = { metadata: { name: 'pv-1' }, spec: { csi: { driver: opts.pvDriver ?? DRIVER, volumeHandle: 'vol-1' } } };
  const volumes = new MemoryVolumeApi(pvc, pv, opts.fail ? [opts.fail] : []);
  const classes = new Map(
    (opts.classes ?? ['gold', 'silver']).map((n): [string, VolumeAttributesClass] => [
      n,
      { metadata: { name: n }, driverName: DRIVER, parameters: { tier: n } },
    ]),
  );
  const calls: string[] = [];
  const modifier: Modifier = {
    name: DRIVER,
    async modify(_pv, _pvc, vac) {
      calls.push(vac.metadata.name);
      await (opts.modify ?? (async () => {}))();
    },
  };
  const clock = new FakeClock();
  const slowSet = new SlowSet<string>({ retentionMs: 60_000, clock });
  const events = new RecordingEventRecorder();
  const reconciler = new ModifyReconciler({
    modifier,
    pvcs: volumes.pvcCache,
    pvs: volumes.pvCache,
    classes: { get: (n) => classes.get(n) },
    api: volumes,
    events,
    slowSet,
    keyLock: new KeyLock(),
    clock,
    log: silentLogger,
  });
  return { reconciler, writes: volumes.writes, calls, events, slowSet, clock };
}

test('success: InProgress mark (RV-checked), VolumeModify, driver call, PV patch, then completion; events in order', async () => {
  const s = setup();
  assert.deepEqual(await s.reconciler.reconcile('ns/data', never), { kind: 'done' });
  assert.deepEqual(s.calls, ['gold']);
  assert.deepEqual(
    s.writes.map((w) => w.target),
    ['pvc', 'pv', 'pvc'],
  );
  assert.deepEqual((s.writes[0]!.body['metadata'] as Record<string, unknown>)['resourceVersion'], '10');
  assert.equal(JSON.stringify(s.writes[1]!.body), '{"spec":{"volumeAttributesClassName":"gold"}}');
  assert.equal(s.writes[2]!.body['metadata'], undefined, 'completion is not RV-checked');
  assert.deepEqual(
    s.events.events.map((e) => `${e.type} ${e.reason}: ${e.message}`),
    [
      'Normal VolumeModify: external resizer is modifying volume data with vac gold',
      'Normal VolumeModifySuccessful: external resizer modified volume data with vac gold successfully',
    ],
  );
});

test('a PV of another driver, an unbound PVC, a missing PV', async () => {
  const foreign = setup({ pvDriver: 'other.csi.test' });
  assert.deepEqual(await foreign.reconciler.reconcile('ns/data', never), { kind: 'done' });
  assert.deepEqual([foreign.calls, foreign.writes, foreign.events.events], [[], [], []]);
  const notBound = setup({ status: { phase: 'Pending' } });
  assert.deepEqual(await notBound.reconciler.reconcile('ns/data', never), { kind: 'done' });
  assert.deepEqual(notBound.calls, []);
  const noPv = setup({ pvc: { volumeName: 'pv-2' } });
  await assert.rejects(noPv.reconciler.reconcile('ns/data', never), /Get PV "pv-2" of pvc "ns\/data" in PVInformer cache failed/);
  assert.deepEqual(await noPv.reconciler.reconcile('ns/missing', never), { kind: 'done' });
});

const broken = new Error('not a CsiError');
const noDriverAnswer: { name: string; error: () => Error; rejects: (err: unknown) => boolean }[] = [
  {
    name: 'an error before the driver answers (no gRPC status): "cannot get error status"',
    error: () => noStatusError('error getting secret creds in namespace ns: forbidden', 'modify'),
    rejects: (err) =>
      err instanceof Error && err.message === 'cannot get error status from modify volume err: error getting secret creds in namespace ns: forbidden',
  },
  {
    name: 'a Modifier that breaks its port (rejects with a plain Error): the error passes up as it is',
    error: () => broken,
    rejects: (err) => err === broken,
  },
];

for (const row of noDriverAnswer) {
  test(`${row.name}; no status change, no event, not uncertain`, async () => {
    const s = setup({
      modify: async () => {
        throw row.error();
      },
    });
    await assert.rejects(s.reconciler.reconcile('ns/data', never), row.rejects);
    assert.deepEqual(
      s.writes.map((w) => w.target),
      ['pvc'],
      'only the InProgress mark',
    );
    assert.deepEqual(
      s.events.events.map((e) => e.reason),
      ['VolumeModify'],
    );
    assert.equal(s.reconciler.isUncertain('ns/data'), false);
  });
}

test('InvalidArgument: Infeasible written, key parked; the next sync with the same target waits for the slow set', async () => {
  const invalid = driverError(GrpcStatus.INVALID_ARGUMENT, 'bad tier', 'modify');
  const s = setup({
    modify: async () => {
      throw invalid;
    },
  });
  await assert.rejects(s.reconciler.reconcile('ns/data', never), /InvalidArgument desc = bad tier/);
  const status = s.writes[1]!.body['status'] as Record<string, unknown>;
  assert.equal((status['modifyVolumeStatus'] as Record<string, unknown>)['status'], 'Infeasible');
  assert.ok(s.slowSet.contains('ns/data'));
  // The cache now holds what the fake API returned, not the server's status; simulate the informer.
  const again = setup({
    status: { modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'Infeasible' } },
    modify: async () => {
      throw invalid;
    },
  });
  again.slowSet.add('ns/data');
  again.clock.advance(20_000);
  assert.deepEqual(await again.reconciler.reconcile('ns/data', never), { kind: 'retryAfter', ms: 40_000 });
  assert.deepEqual(again.calls, []);
});

test('uncertain with a target whose class was deleted: Warning VAC missing, error, no driver call', async () => {
  const s = setup({
    pvc: { volumeAttributesClassName: 'silver' },
    status: { modifyVolumeStatus: { targetVolumeAttributesClassName: 'gone', status: 'InProgress' } },
  });
  s.reconciler.seedUncertain([{ metadata: { name: 'data', namespace: 'ns' }, spec: {}, status: { modifyVolumeStatus: { status: 'InProgress' } } }]);
  await assert.rejects(s.reconciler.reconcile('ns/data', never), {
    message: 'get VAC with vac name gone in VACInformer cache failed: volumeattributesclass.storage.k8s.io "gone" not found',
  });
  assert.deepEqual(s.calls, []);
  assert.deepEqual(s.writes, []);
  assert.deepEqual(
    s.events.events.map((e) => `${e.type} ${e.reason}: ${e.message}`),
    ['Warning VolumeModifyFailed: VAC "gone" does not exist.'],
  );
});

test('a new class that does not exist: Warning, Pending (RV-checked), done without retry', async () => {
  const s = setup({ pvc: { volumeAttributesClassName: 'later' } });
  assert.deepEqual(await s.reconciler.reconcile('ns/data', never), { kind: 'done' });
  assert.deepEqual(s.writes, [{ target: 'pvc', body: { metadata: { resourceVersion: '10' }, status: { modifyVolumeStatus: { status: 'Pending' } } } }]);
  assert.deepEqual(
    s.events.events.map((e) => e.message),
    ['VAC "later" does not exist.'],
  );
});

test('the PV patch fails after the driver succeeded: "failed to mark pvc … completed", no success event', async () => {
  const s = setup({ fail: { target: 'pv', error: () => new Error('apiserver says no') } });
  await assert.rejects(s.reconciler.reconcile('ns/data', never), {
    message:
      'cannot get error status from modify volume err: modify volume failed to mark pvc data modify volume completed: ' +
      'update pv.Spec.VolumeAttributesClassName for PVC "data" failed, errored with: update capacity of PV pv-1 failed: apiserver says no ',
  });
  assert.deepEqual(
    s.events.events.map((e) => e.reason),
    ['VolumeModify'],
  );
});

test('deleting the PVC forgets its uncertain mark and slow-set entry', async () => {
  const s = setup();
  s.reconciler.seedUncertain([{ metadata: { name: 'data', namespace: 'ns' }, spec: {}, status: { modifyVolumeStatus: { status: 'InProgress' } } }]);
  s.slowSet.add('ns/data');
  s.reconciler.forget('ns/data');
  assert.equal(s.reconciler.isUncertain('ns/data'), false);
  assert.equal(s.slowSet.contains('ns/data'), false);
});

// Every failure path's text, as upstream's modify controller words it (v2.2.1): the returned
// error (logged by the worker) and the events. The API errors are the server's Status messages.
const unavailable = () => driverError(GrpcStatus.UNAVAILABLE, 'driver restarting', 'modify');
const internal = () => driverError(GrpcStatus.INTERNAL, 'backend down', 'modify');
const failureTexts: {
  name: string;
  opts: Parameters<typeof setup>[0];
  uncertain?: boolean;
  error: string;
  events: string[];
}[] = [
  {
    name: 'PVC gone before the InProgress mark',
    opts: { fail: { target: 'pvc', call: 1, error: pvcGone } },
    error: 'mark PVC "data" as modify volume failed, errored with: can\'t patch status of  PVC ns/data with persistentvolumeclaims "data" not found',
    events: [],
  },
  {
    name: 'PVC gone before the Pending mark (class missing)',
    opts: { pvc: { volumeAttributesClassName: 'later' }, fail: { target: 'pvc', call: 1, error: pvcGone } },
    error: 'mark PVC "data" as modify volume failed, errored with: can\'t patch status of  PVC ns/data with persistentvolumeclaims "data" not found',
    events: ['Warning VolumeModifyFailed: VAC "later" does not exist.'],
  },
  {
    name: 'PVC gone before the failure is recorded: the mark error, no failure event',
    opts: {
      modify: async () => {
        throw internal();
      },
      fail: { target: 'pvc', call: 2, error: pvcGone },
    },
    error: 'mark PVC "data" as modify volume failed, errored with: can\'t patch status of  PVC ns/data with persistentvolumeclaims "data" not found',
    events: ['Normal VolumeModify: external resizer is modifying volume data with vac gold'],
  },
  {
    name: "a final gRPC error: the driver's error, event with it",
    opts: {
      modify: async () => {
        throw internal();
      },
    },
    error: 'rpc error: code = Internal desc = backend down',
    events: [
      'Normal VolumeModify: external resizer is modifying volume data with vac gold',
      'Warning VolumeModifyFailed: rpc error: code = Internal desc = backend down',
    ],
  },
  {
    name: 'a non-final gRPC error: the event says it is still modifying',
    opts: {
      modify: async () => {
        throw unavailable();
      },
    },
    error: 'rpc error: code = Unavailable desc = driver restarting',
    events: [
      'Normal VolumeModify: external resizer is modifying volume data with vac gold',
      'Warning VolumeModifyFailed: rpc error: code = Unavailable desc = driver restarting. Still modifying to VAC gold',
    ],
  },
  {
    name: "PV gone after the driver succeeded (trailing space is upstream's)",
    opts: { fail: { target: 'pv', call: 1, error: pvGone } },
    error:
      'cannot get error status from modify volume err: modify volume failed to mark pvc data modify volume completed: ' +
      'update pv.Spec.VolumeAttributesClassName for PVC "data" failed, errored with: update capacity of PV pv-1 failed: persistentvolumes "pv-1" not found ',
    events: ['Normal VolumeModify: external resizer is modifying volume data with vac gold'],
  },
  {
    name: 'PVC gone after the driver succeeded and the PV was written',
    opts: { fail: { target: 'pvc', call: 2, error: pvcGone } },
    error:
      'cannot get error status from modify volume err: modify volume failed to mark pvc data modify volume completed: ' +
      'mark PVC "data" as ModifyVolumeCompleted failed, errored with: can\'t patch status of  PVC ns/data with persistentvolumeclaims "data" not found ',
    events: ['Normal VolumeModify: external resizer is modifying volume data with vac gold'],
  },
  {
    name: 'PVC gone while cancelling',
    opts: {
      pvc: { volumeAttributesClassName: null },
      status: {
        modifyVolumeStatus: { targetVolumeAttributesClassName: 'bad', status: 'Infeasible' },
        conditions: [{ type: 'ModifyingVolume', status: 'True' }],
      },
      fail: { target: 'pvc', call: 1, error: pvcGone },
    },
    error: 'mark PVC "data" as rolled back failed: can\'t patch status of  PVC ns/data with persistentvolumeclaims "data" not found',
    events: ['Normal VolumeModifyCanceled: Cancelled modify.'],
  },
  {
    name: 'PV not in the cache',
    opts: { pvc: { volumeName: 'pv-9' } },
    error: 'Get PV "pv-9" of pvc "ns/data" in PVInformer cache failed: persistentvolume "pv-9" not found',
    events: [],
  },
];

for (const c of failureTexts) {
  test(`failure text: ${c.name}`, async () => {
    const s = setup(c.opts);
    await assertFailureTexts(s.reconciler.reconcile('ns/data', never), s.events, c);
  });
}
