// The resize reconcile's failure paths, with in-memory fakes: the text of the returned error
// (what the worker logs), the events and the condition messages, each as upstream v2.2.1's
// controller words them. The API errors are the server's Status messages, as our HTTP layer
// produces them; the driver errors are gRPC statuses as grpc-js reports them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { KubeApiError } from '../kube/errors.js';
import type { Pv, Pvc } from '../model/objects.js';
import { silentLogger } from '../observability/logger.js';
import { KeyLock } from '../queue/key-lock.js';
import { SlowSet } from '../queue/slow-set.js';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { RecordingEventRecorder } from '../../test/fakes/recording-events.js';
import { ResizeReconciler } from './reconcile.js';
import type { Resizer, ResizeResult, ResizeTarget } from './resizer.js';
import { CsiResizer } from './csi-resizer.js';
import { TrivialResizer } from './trivial-resizer.js';
import type { CsiClient } from '../csi/client.js';

const DRIVER = 'd.csi.test';
const never = new AbortController().signal;
const GiB = 1024n ** 3n;

const pvcGone = () => KubeApiError.fromStatus(404, { kind: 'Status', reason: 'NotFound', code: 404, message: 'persistentvolumeclaims "data" not found' },
  { method: 'PATCH', path: '/api/v1/namespaces/ns/persistentvolumeclaims/data/status' });
const pvGone = () => KubeApiError.fromStatus(404, { kind: 'Status', reason: 'NotFound', code: 404, message: 'persistentvolumes "pv-1" not found' },
  { method: 'PATCH', path: '/api/v1/persistentvolumes/pv-1' });
const conflict = () => KubeApiError.fromStatus(409, {
  kind: 'Status', reason: 'Conflict', code: 409,
  message: 'Operation cannot be fulfilled on persistentvolumeclaims "data": the object has been modified; please apply your changes to the latest version and try again',
}, { method: 'PATCH', path: '/api/v1/namespaces/ns/persistentvolumeclaims/data/status' });
const grpc = (code: GrpcStatus, details: string) => Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });

interface Setup {
  resize?: (target: ResizeTarget) => Promise<ResizeResult>;
  resizer?: Resizer;
  /** The Nth PVC status write (1-based) fails with this error. */
  failPvc?: { call: number; error: () => Error };
  failPv?: { call: number; error: () => Error };
  legacy?: boolean;
  pv?: Partial<Pv['spec']>;
  pvAnnotations?: Record<string, string>;
  status?: Pvc['status'];
  request?: string;
}

function setup(o: Setup = {}) {
  const pvc: Pvc = {
    metadata: { name: 'data', namespace: 'ns', uid: 'u-1', resourceVersion: '10' },
    spec: { volumeName: 'pv-1', resources: { requests: { storage: o.request ?? '2Gi' } } },
    status: { phase: 'Bound', capacity: { storage: '1Gi' }, ...o.status },
  };
  const pv: Pv = {
    metadata: { name: 'pv-1', ...(o.pvAnnotations ? { annotations: o.pvAnnotations } : {}) },
    spec: {
      capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'],
      claimRef: { namespace: 'ns', name: 'data', uid: 'u-1' }, csi: { driver: DRIVER, volumeHandle: 'vol-1' }, ...o.pv,
    },
  };
  const pvcs = new Map([['ns/data', pvc]]);
  const pvs = new Map([['pv-1', pv]]);
  const writes: { target: 'pvc' | 'pv'; body: Record<string, unknown> }[] = [];
  let rv = 10;
  const resizer: Resizer = o.resizer ?? {
    name: DRIVER,
    supportsControlPlaneExpansion: true,
    expansionMode: 'online',
    canSupport: () => true,
    resize: async (_pv, target) => (o.resize ?? (async (t) => ({ capacityBytes: t.bytes, capacity: '2Gi', nodeExpansionRequired: false })))(target),
  };
  const clock = new FakeClock();
  const events = new RecordingEventRecorder();
  const count = (target: 'pvc' | 'pv') => writes.filter((w) => w.target === target).length;
  const reconciler = new ResizeReconciler({
    resizer,
    pvcs: { get: (k) => pvcs.get(k), writeBack: (obj) => (pvcs.set('ns/data', obj), true) },
    pvs: { get: (k) => pvs.get(k), writeBack: (obj) => (pvs.set('pv-1', obj), true) },
    api: {
      async patchPvcStatus(_ns, _name, body) {
        writes.push({ target: 'pvc', body });
        if (o.failPvc?.call === count('pvc')) throw o.failPvc.error();
        rv += 1;
        const current = pvcs.get('ns/data')!;
        return { ...current, metadata: { ...current.metadata, resourceVersion: String(rv) } };
      },
      async patchPv(_name, body) {
        writes.push({ target: 'pv', body });
        if (o.failPv?.call === count('pv')) throw o.failPv.error();
        return pvs.get('pv-1')!;
      },
    },
    events,
    gates: { recoverVolumeExpansionFailure: !o.legacy, annotateFsResize: true },
    slowSet: new SlowSet<string>({ retentionMs: 60_000, clock }),
    claimUsage: undefined,
    keyLock: new KeyLock(),
    clock,
    log: silentLogger,
  });
  return { reconciler, writes, events };
}

const csiResizer = (csi: Partial<CsiClient>) => new CsiResizer({
  driverName: DRIVER,
  csi: csi as CsiClient,
  secrets: { getSecret: async () => { throw KubeApiError.fromStatus(404, { message: 'secrets "creds" not found' }, { method: 'GET', path: '/api/v1/namespaces/ns/secrets/creds' }); } },
  supportsSingleNodeMultiWriter: false,
  expansionMode: 'online',
});

const RESIZING = 'Normal Resizing: External resizer is resizing volume pv-1';
const failed = (text: string) => `Warning VolumeResizeFailed: ${text}`;
const failedVolume = (text: string) => `resize volume "pv-1" by resizer "${DRIVER}" failed: ${text}`;
const patchPvc = "can't patch status of  PVC ns/data with persistentvolumeclaims \"data\" not found";
const patchPv = 'update capacity of PV pv-1 failed: persistentvolumes "pv-1" not found';

const table: { name: string; setup: Setup; error: string; events: string[]; condition?: string }[] = [
  {
    name: 'PVC gone before the in-progress mark: logged only, no event',
    setup: { failPvc: { call: 1, error: pvcGone } },
    error: `marking pvc "ns/data" as resizing failed: ${patchPvc}`,
    events: [],
  },
  {
    name: 'OutOfRange: the condition and the event carry the gRPC text',
    setup: { resize: async () => { throw grpc(GrpcStatus.OUT_OF_RANGE, 'too big'); } },
    error: failedVolume('rpc error: code = OutOfRange desc = too big'),
    events: [RESIZING, failed(failedVolume('rpc error: code = OutOfRange desc = too big'))],
    condition: 'failed to expand pvc with rpc error: code = OutOfRange desc = too big',
  },
  {
    name: 'a final error the PVC could not record: both texts, as one',
    setup: { resize: async () => { throw grpc(GrpcStatus.INTERNAL, 'boom'); }, failPvc: { call: 2, error: pvcGone } },
    error: 'resizing failed in controller with rpc error: code = Internal desc = boom but failed to update PVC ns/data with: '
      + `mark PVC "ns/data" as controller expansion failed, errored with: ${patchPvc}`,
    events: [RESIZING, failed('resizing failed in controller with rpc error: code = Internal desc = boom but failed to update PVC ns/data with: '
      + `mark PVC "ns/data" as controller expansion failed, errored with: ${patchPvc}`)],
  },
  {
    name: 'PVC deleted while the driver worked, node expansion required',
    setup: { resize: async (t) => ({ capacityBytes: t.bytes, capacity: '2Gi', nodeExpansionRequired: true }), failPvc: { call: 2, error: pvcGone } },
    error: `mark PVC "ns/data" as node expansion required failed: ${patchPvc}`,
    events: [RESIZING, failed(`mark PVC "ns/data" as node expansion required failed: ${patchPvc}`)],
  },
  {
    name: 'PVC deleted while the driver worked, done',
    setup: { failPvc: { call: 2, error: pvcGone } },
    error: `mark PVC "ns/data" as resize finished failed: ${patchPvc}`,
    events: [RESIZING, failed(`mark PVC "ns/data" as resize finished failed: ${patchPvc}`)],
  },
  {
    name: 'PV deleted while the driver worked',
    setup: { failPv: { call: 1, error: pvGone } },
    error: `error updating pv "pv-1" by resizer: updating capacity of PV "pv-1" to 2Gi failed: ${patchPv}`,
    events: [RESIZING, failed(`error updating pv "pv-1" by resizer: updating capacity of PV "pv-1" to 2Gi failed: ${patchPv}`)],
  },
  {
    name: 'PV annotation removal fails: logged only',
    setup: {
      status: { phase: 'Bound', capacity: { storage: '2Gi' } }, pv: { capacity: { storage: '2Gi' } },
      pvAnnotations: { 'volume.alpha.kubernetes.io/pre-resize-capacity': '1Gi' }, failPv: { call: 1, error: pvGone },
    },
    error: `failed removing annotation volume.alpha.kubernetes.io/pre-resize-capacity from pv "pv-1": ${patchPv}`,
    events: [],
  },
  {
    name: 'access modes with no CSI mode',
    setup: { resizer: csiResizer({}), pv: { accessModes: ['ReadOnlyMany', 'ReadWriteOnce'] } },
    error: failedVolume('failed to get capabilities of volume pv-1 with CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume'),
    events: [RESIZING, failed(failedVolume('failed to get capabilities of volume pv-1 with CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume'))],
  },
  {
    name: 'the expand secret is missing',
    setup: { resizer: csiResizer({}), pv: { csi: { driver: DRIVER, volumeHandle: 'vol-1', controllerExpandSecretRef: { name: 'creds', namespace: 'ns' } } } },
    error: failedVolume('error getting secret creds in namespace ns: secrets "creds" not found'),
    events: [RESIZING, failed(failedVolume('error getting secret creds in namespace ns: secrets "creds" not found'))],
  },
  {
    name: 'legacy: PVC gone before the Resizing mark',
    setup: { legacy: true, failPvc: { call: 1, error: pvcGone } },
    error: `marking pvc "ns/data" as resizing failed: Mark PVC "ns/data" as resize as in progress failed: ${patchPvc}`,
    events: [],
  },
  {
    name: 'legacy: PV gone',
    setup: { legacy: true, failPv: { call: 1, error: pvGone } },
    error: `updating capacity of PV "pv-1" to 2Gi failed: ${patchPv}`,
    events: [RESIZING, failed(`updating capacity of PV "pv-1" to 2Gi failed: ${patchPv}`)],
  },
  {
    name: 'legacy: file system resize required, PVC gone',
    setup: { legacy: true, resize: async (t) => ({ capacityBytes: t.bytes, capacity: '2Gi', nodeExpansionRequired: true }), failPvc: { call: 2, error: pvcGone } },
    error: `mark PVC "ns/data" as file system resize required failed: ${patchPvc}`,
    events: [RESIZING, failed(`mark PVC "ns/data" as file system resize required failed: ${patchPvc}`)],
  },
  {
    name: 'legacy: finished, a conflict is recorded too (as upstream, whose conflict check never matches)',
    setup: { legacy: true, failPvc: { call: 2, error: conflict } },
    error: 'Mark PVC "ns/data" as resize finished failed: can\'t patch status of  PVC ns/data with Operation cannot be fulfilled on persistentvolumeclaims "data": '
      + 'the object has been modified; please apply your changes to the latest version and try again',
    events: [RESIZING, failed('Mark PVC "ns/data" as resize finished failed: can\'t patch status of  PVC ns/data with Operation cannot be fulfilled on persistentvolumeclaims "data": '
      + 'the object has been modified; please apply your changes to the latest version and try again')],
  },
];

for (const c of table) {
  test(`failure text: ${c.name}`, async () => {
    const s = setup(c.setup);
    await assert.rejects(s.reconciler.reconcile('ns/data', never), (err: Error) => {
      assert.equal(err.message, c.error);
      return true;
    });
    assert.deepEqual(s.events.events.map((e) => `${e.type} ${e.reason}: ${e.message}`), c.events);
    if (c.condition !== undefined) {
      const conditions = s.writes.filter((w) => w.target === 'pvc').flatMap((w) => ((w.body['status'] as { conditions?: { type: string; message?: string }[] })?.conditions ?? []));
      assert.equal(conditions.find((x) => x.type === 'ControllerResizeError')?.message, c.condition);
    }
  });
}

test('the trivial resizer\'s size is written in the PVC\'s own spelling, the driver\'s bytes in BinarySI', async () => {
  const decimal = setup({
    request: '2G',
    status: { phase: 'Bound', capacity: { storage: '1G' } },
    resizer: new TrivialResizer(DRIVER),
  });
  await decimal.reconciler.reconcile('ns/data', never);
  const pvWrite = decimal.writes.find((w) => w.target === 'pv')!;
  assert.equal(JSON.stringify(pvWrite.body),
    '{"metadata":{"annotations":{"volume.alpha.kubernetes.io/pre-resize-capacity":"1G"}},"spec":{"capacity":{"storage":"2G"}}}');
  const bytes = await csiResizer({ expandVolume: async () => ({ capacityBytes: 2_000_000_000n, nodeExpansionRequired: false }) })
    .resize({ metadata: { name: 'pv-1' }, spec: { accessModes: ['ReadWriteOnce'], csi: { driver: DRIVER, volumeHandle: 'v' } } }, { bytes: 2n * GiB, quantity: '2Gi' }, never);
  assert.equal(bytes.capacity, '1953125Ki');
});
