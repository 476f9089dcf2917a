// The resize reconcile with in-memory fakes, in three parts: the failure paths' texts (the
// returned error the worker logs, the events and the condition messages, each as upstream
// v2.2.1's controller words them); a table of what each path writes, records and decides per
// driver answer; and what the reconciler remembers across reconciles. The API errors are the
// server's Status messages, as our HTTP layer produces them; the driver errors are gRPC statuses
// as grpc-js reports them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { KubeApiError } from '../kube/api/errors.js';
import type { Pv, Pvc } from '../model/objects.js';
import { silentLogger } from '../observability/log/logger.js';
import { KeyLock } from '../queue/key-lock.js';
import { SlowSet } from '../queue/slow-set.js';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { RecordingEventRecorder } from '../../test/fakes/recording-events.js';
import { MemoryVolumeApi, type WriteFailure } from '../../test/fakes/memory-volume-api.js';
import { assertFailureTexts, conflict, driverError, pvcGone, pvGone } from '../../test/support/reconcile-errors.js';
import { ResizeReconciler } from './reconcile.js';
import type { Resizer, ResizeResult, ResizeTarget } from './resizer.js';
import { CsiResizer } from './csi-resizer.js';
import { TrivialResizer } from './trivial-resizer.js';
import { ClaimUsage, PodClaimUsage } from './in-use.js';
import type { CsiClient } from '../csi/client.js';

const DRIVER = 'd.csi.test';
const never = new AbortController().signal;
const GiB = 1024n ** 3n;

const grpc = (code: GrpcStatus, details: string) => driverError(code, details, 'expand');

interface Setup {
  resize?: (target: ResizeTarget) => Promise<ResizeResult>;
  /** With --handle-volume-inuse-error: the claims pods use. */
  claimUsage?: ClaimUsage;
  expansionMode?: Resizer['expansionMode'];
  resizer?: Resizer;
  /** The Nth PVC status write (1-based) fails with this error. */
  failPvc?: { call: number; error: () => Error };
  failPv?: { call: number; error: () => Error };
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
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      claimRef: { namespace: 'ns', name: 'data', uid: 'u-1' },
      csi: { driver: DRIVER, volumeHandle: 'vol-1' },
      ...o.pv,
    },
  };
  const failures: WriteFailure[] = [];
  if (o.failPvc) failures.push({ target: 'pvc', ...o.failPvc });
  if (o.failPv) failures.push({ target: 'pv', ...o.failPv });
  const volumes = new MemoryVolumeApi(pvc, pv, failures);
  /** The targets the driver was asked for, in order. */
  const calls: string[] = [];
  const resizer: Resizer = o.resizer ?? {
    name: DRIVER,
    supportsControlPlaneExpansion: true,
    expansionMode: o.expansionMode ?? 'online',
    canSupport: () => true,
    resize: async (_pv, target) => {
      calls.push(target.quantity);
      return (o.resize ?? (async (t) => ({ capacityBytes: t.bytes, capacity: t.quantity, nodeExpansionRequired: false })))(target);
    },
  };
  const clock = new FakeClock();
  const slowSet = new SlowSet<string>({ retentionMs: 60_000, clock });
  const events = new RecordingEventRecorder();
  const reconciler = new ResizeReconciler({
    resizer,
    pvcs: volumes.pvcCache,
    pvs: volumes.pvCache,
    api: volumes,
    events,
    gates: { annotateFsResize: true },
    slowSet,
    claimUsage: o.claimUsage,
    keyLock: new KeyLock(),
    clock,
    log: silentLogger,
  });
  return { reconciler, writes: volumes.writes, events, calls, slowSet, clock, pvcs: volumes.pvcs };
}

const csiResizer = (csi: Partial<CsiClient>) =>
  new CsiResizer({
    driverName: DRIVER,
    csi: csi as CsiClient,
    secrets: {
      getSecret: async () => {
        throw KubeApiError.fromStatus(404, { message: 'secrets "creds" not found' }, { method: 'GET', path: '/api/v1/namespaces/ns/secrets/creds' });
      },
    },
    supportsSingleNodeMultiWriter: false,
    expansionMode: 'online',
    timeoutMs: 10_000,
  });

const RESIZING = 'Normal Resizing: External resizer is resizing volume pv-1';
const failed = (text: string) => `Warning VolumeResizeFailed: ${text}`;
const failedVolume = (text: string) => `resize volume "pv-1" by resizer "${DRIVER}" failed: ${text}`;
const patchPvc = 'can\'t patch status of  PVC ns/data with persistentvolumeclaims "data" not found';
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
    setup: {
      resize: async () => {
        throw grpc(GrpcStatus.OUT_OF_RANGE, 'too big');
      },
    },
    error: failedVolume('rpc error: code = OutOfRange desc = too big'),
    events: [RESIZING, failed(failedVolume('rpc error: code = OutOfRange desc = too big'))],
    condition: 'failed to expand pvc with rpc error: code = OutOfRange desc = too big',
  },
  {
    name: 'a final error the PVC could not record: both texts, as one',
    setup: {
      resize: async () => {
        throw grpc(GrpcStatus.INTERNAL, 'boom');
      },
      failPvc: { call: 2, error: pvcGone },
    },
    error:
      'resizing failed in controller with rpc error: code = Internal desc = boom but failed to update PVC ns/data with: ' +
      `mark PVC "ns/data" as controller expansion failed, errored with: ${patchPvc}`,
    events: [
      RESIZING,
      failed(
        'resizing failed in controller with rpc error: code = Internal desc = boom but failed to update PVC ns/data with: ' +
          `mark PVC "ns/data" as controller expansion failed, errored with: ${patchPvc}`,
      ),
    ],
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
      status: { phase: 'Bound', capacity: { storage: '2Gi' } },
      pv: { capacity: { storage: '2Gi' } },
      pvAnnotations: { 'volume.alpha.kubernetes.io/pre-resize-capacity': '1Gi' },
      failPv: { call: 1, error: pvGone },
    },
    error: `failed removing annotation volume.alpha.kubernetes.io/pre-resize-capacity from pv "pv-1": ${patchPv}`,
    events: [],
  },
  {
    name: 'access modes with no CSI mode',
    setup: { resizer: csiResizer({}), pv: { accessModes: ['ReadOnlyMany', 'ReadWriteOnce'] } },
    error: failedVolume('failed to get capabilities of volume pv-1 with CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume'),
    events: [
      RESIZING,
      failed(failedVolume('failed to get capabilities of volume pv-1 with CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume')),
    ],
  },
  {
    name: 'the expand secret is missing',
    setup: { resizer: csiResizer({}), pv: { csi: { driver: DRIVER, volumeHandle: 'vol-1', controllerExpandSecretRef: { name: 'creds', namespace: 'ns' } } } },
    error: failedVolume('error getting secret creds in namespace ns: secrets "creds" not found'),
    events: [RESIZING, failed(failedVolume('error getting secret creds in namespace ns: secrets "creds" not found'))],
  },
];

for (const c of table) {
  test(`failure text: ${c.name}`, async () => {
    const s = setup(c.setup);
    await assertFailureTexts(s.reconciler.reconcile('ns/data', never), s.events, c);
    if (c.condition !== undefined) {
      const conditions = s.writes
        .filter((w) => w.target === 'pvc')
        .flatMap((w) => (w.body['status'] as { conditions?: { type: string; message?: string }[] })?.conditions ?? []);
      assert.equal(conditions.find((x) => x.type === 'ControllerResizeError')?.message, c.condition);
    }
  });
}

test("the trivial resizer's size is written in the PVC's own spelling, the driver's bytes in BinarySI", async () => {
  const decimal = setup({
    request: '2G',
    status: { phase: 'Bound', capacity: { storage: '1G' } },
    resizer: new TrivialResizer(DRIVER),
  });
  await decimal.reconciler.reconcile('ns/data', never);
  const pvWrite = decimal.writes.find((w) => w.target === 'pv')!;
  assert.equal(
    JSON.stringify(pvWrite.body),
    '{"metadata":{"annotations":{"volume.alpha.kubernetes.io/pre-resize-capacity":"1G"}},"spec":{"capacity":{"storage":"2G"}}}',
  );
  const bytes = await csiResizer({ expandVolume: async () => ({ capacityBytes: 2_000_000_000n, nodeExpansionRequired: false }) }).resize(
    { metadata: { name: 'pv-1' }, spec: { accessModes: ['ReadWriteOnce'], csi: { driver: DRIVER, volumeHandle: 'v' } } },
    { bytes: 2n * GiB, quantity: '2Gi' },
    never,
  );
  assert.equal(bytes.capacity, '1953125Ki');
});

// What each path writes, records and decides, per driver answer (§3.4, §3.5, §3.7): the patches
// (summarised to the fields they set), the events, the driver calls and the requeue decision
// (`backoff` is a thrown error: the worker requeues with backoff).
type Summary = string;

/** One write as `<target> [rv=<precondition>] <field>=<value> … +Condition -Condition`. */
function summarise(w: { target: 'pvc' | 'pv'; body: Record<string, unknown> }): Summary {
  const body = w.body as {
    metadata?: { resourceVersion?: string; annotations?: Record<string, string | null> | null };
    spec?: { capacity?: Record<string, string> };
    status?: {
      allocatedResources?: Record<string, string>;
      allocatedResourceStatuses?: Record<string, string> | null;
      capacity?: Record<string, string>;
      conditions?: { type: string; $patch?: string; message?: string }[] | null;
    };
  };
  const parts: string[] = [w.target];
  if (body.metadata?.resourceVersion !== undefined) parts.push(`rv=${body.metadata.resourceVersion}`);
  const preResize = body.metadata?.annotations?.['volume.alpha.kubernetes.io/pre-resize-capacity'];
  if (preResize !== undefined) parts.push(`pre-resize=${preResize}`);
  if (body.spec?.capacity?.['storage'] !== undefined) parts.push(`capacity=${body.spec.capacity['storage']}`);
  const st = body.status;
  if (st?.allocatedResources?.['storage'] !== undefined) parts.push(`A=${st.allocatedResources['storage']}`);
  if (st?.allocatedResourceStatuses === null) parts.push('R=null');
  else if (st?.allocatedResourceStatuses?.['storage'] !== undefined) parts.push(`R=${st.allocatedResourceStatuses['storage']}`);
  if (st?.capacity?.['storage'] !== undefined) parts.push(`capacity=${st.capacity['storage']}`);
  if (st?.conditions === null) parts.push('conditions=null');
  for (const c of st?.conditions ?? []) {
    parts.push(c.$patch === 'delete' ? `-${c.type}` : `+${c.type}${c.type === 'ControllerResizeError' ? `(${c.message ?? ''})` : ''}`);
  }
  return parts.join(' ');
}

async function decision(run: Promise<{ kind: string; ms?: number }>): Promise<string> {
  try {
    const outcome = await run;
    return outcome.kind === 'retryAfter' ? `retryAfter ${outcome.ms}` : outcome.kind;
  } catch {
    return 'backoff';
  }
}

const internal = () => grpc(GrpcStatus.INTERNAL, 'backend down');
const outOfRange = () => grpc(GrpcStatus.OUT_OF_RANGE, 'too big');
const deadline = () => grpc(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded');
const unavailable = () => grpc(GrpcStatus.UNAVAILABLE, 'driver restarting');
const failedPrecondition = () => grpc(GrpcStatus.FAILED_PRECONDITION, 'volume is attached');
const bogus = async () => ({ capacityBytes: 1n * GiB, capacity: '1Gi', nodeExpansionRequired: false });
const nodeWork = async (t: ResizeTarget) => ({ capacityBytes: t.bytes, capacity: t.quantity, nodeExpansionRequired: true });
const usedByPod = () => {
  const usage = new ClaimUsage();
  usage.add(new PodClaimUsage('ns/app', 'ns/data'));
  return usage;
};

const MARK = 'pvc rv=10 A=2Gi R=ControllerResizeInProgress +Resizing';
const SUCCESS = 'Normal VolumeResizeSuccessful: Resize volume succeeded';
const FS_REQUIRED = 'Normal FileSystemResizeRequired: Require file system resize of volume on node';
const rpcFailed = (code: string, desc: string) => failed(failedVolume(`rpc error: code = ${code} desc = ${desc}`));
const controllerError = (code: string, desc: string) => `+ControllerResizeError(failed to expand pvc with rpc error: code = ${code} desc = ${desc})`;
const conflictText =
  'Operation cannot be fulfilled on persistentvolumeclaims "data": the object has been modified; please apply your changes to the latest version and try again';

const writeTable: { name: string; setup: Setup; decision: string; calls: string[]; writes: Summary[]; events: string[] }[] = [
  // Recovery-aware path (§3.5).
  {
    name: 'recovery, final: done, expansion finished',
    setup: {},
    decision: 'done',
    calls: ['2Gi'],
    writes: [MARK, 'pv capacity=2Gi', 'pvc rv=11 capacity=2Gi'],
    events: [RESIZING, SUCCESS],
  },
  {
    name: 'recovery, final with node work: NodeResizePending, the PV remembers the old size',
    setup: { resize: nodeWork },
    decision: 'done',
    calls: ['2Gi'],
    writes: [MARK, 'pv pre-resize=1Gi capacity=2Gi', 'pvc rv=11 R=NodeResizePending +FileSystemResizePending'],
    events: [RESIZING, FS_REQUIRED],
  },
  {
    name: 'recovery, infeasible (OutOfRange): ControllerResizeInfeasible and the error condition, not RV-checked',
    setup: {
      resize: async () => {
        throw outOfRange();
      },
    },
    decision: 'backoff',
    calls: ['2Gi'],
    writes: [MARK, `pvc R=ControllerResizeInfeasible ${controllerError('OutOfRange', 'too big')}`],
    events: [RESIZING, rpcFailed('OutOfRange', 'too big')],
  },
  {
    name: 'recovery, a final error (Internal): the error condition, the status stays in progress',
    setup: {
      resize: async () => {
        throw internal();
      },
    },
    decision: 'backoff',
    calls: ['2Gi'],
    writes: [MARK, `pvc ${controllerError('Internal', 'backend down')}`],
    events: [RESIZING, rpcFailed('Internal', 'backend down')],
  },
  {
    name: 'recovery, uncertain (DeadlineExceeded): nothing written after the mark, the driver may still finish',
    setup: {
      resize: async () => {
        throw deadline();
      },
    },
    decision: 'backoff',
    calls: ['2Gi'],
    writes: [MARK],
    events: [RESIZING, rpcFailed('DeadlineExceeded', 'Deadline exceeded')],
  },
  {
    name: 'recovery, uncertain (Unavailable): nothing written after the mark',
    setup: {
      resize: async () => {
        throw unavailable();
      },
    },
    decision: 'backoff',
    calls: ['2Gi'],
    writes: [MARK],
    events: [RESIZING, rpcFailed('Unavailable', 'driver restarting')],
  },
  {
    name: 'recovery, bogus capacity (less than asked): a final error, the PV is not written',
    setup: { resize: bogus },
    decision: 'backoff',
    calls: ['2Gi'],
    writes: [
      MARK,
      `pvc +ControllerResizeError(failed to expand pvc with CSI driver reported capacity ${GiB} bytes, less than the requested ${2n * GiB} bytes)`,
    ],
    events: [RESIZING, failed(failedVolume(`CSI driver reported capacity ${GiB} bytes, less than the requested ${2n * GiB} bytes`))],
  },
  {
    name: 'recovery, in use (FailedPrecondition, pods watched): a final error',
    setup: {
      claimUsage: usedByPod(),
      resize: async () => {
        throw failedPrecondition();
      },
    },
    decision: 'backoff',
    calls: ['2Gi'],
    writes: [MARK, `pvc ${controllerError('FailedPrecondition', 'volume is attached')}`],
    events: [RESIZING, rpcFailed('FailedPrecondition', 'volume is attached')],
  },
  {
    name: 'recovery, in use by a pod and the driver expands offline only: no driver call',
    setup: { claimUsage: usedByPod(), expansionMode: 'offline' },
    decision: 'backoff',
    calls: [],
    writes: [MARK],
    events: [failed('Unable to expand ns/data because CSI driver d.csi.test only supports offline expansion and volume is currently in-use')],
  },
  {
    name: 'recovery, conflict (409) on the in-progress mark: nothing else, no event',
    setup: { failPvc: { call: 1, error: conflict } },
    decision: 'backoff',
    calls: [],
    writes: [MARK],
    events: [],
  },
  {
    name: 'recovery, conflict (409) on the finished mark: the PV is written, the failure recorded',
    setup: { failPvc: { call: 2, error: conflict } },
    decision: 'backoff',
    calls: ['2Gi'],
    writes: [MARK, 'pv capacity=2Gi', 'pvc rv=11 capacity=2Gi'],
    events: [RESIZING, failed(`mark PVC "ns/data" as resize finished failed: can't patch status of  PVC ns/data with ${conflictText}`)],
  },
  {
    name: 'recovery, conflict (409) on the node-pending mark: the failure recorded',
    setup: { resize: nodeWork, failPvc: { call: 2, error: conflict } },
    decision: 'backoff',
    calls: ['2Gi'],
    writes: [MARK, 'pv pre-resize=1Gi capacity=2Gi', 'pvc rv=11 R=NodeResizePending +FileSystemResizePending'],
    events: [RESIZING, failed(`mark PVC "ns/data" as node expansion required failed: can't patch status of  PVC ns/data with ${conflictText}`)],
  },
];

for (const c of writeTable) {
  test(`writes: ${c.name}`, async () => {
    const s = setup(c.setup);
    assert.equal(await decision(s.reconciler.reconcile('ns/data', never)), c.decision);
    assert.deepEqual(s.calls, c.calls, 'driver calls');
    assert.deepEqual(s.writes.map(summarise), c.writes, 'writes');
    assert.deepEqual(
      s.events.events.map((e) => `${e.type} ${e.reason}: ${e.message}`),
      c.events,
      'events',
    );
  });
}

test('a Resizer that breaks its port (rejects with a plain Error): the error passes up as it is, no failure written on the PVC', async () => {
  const broken = new Error('not a CsiError');
  const s = setup({
    resize: async () => {
      throw broken;
    },
  });
  await assert.rejects(s.reconciler.reconcile('ns/data', never), (err) => err === broken);
  assert.deepEqual(s.writes.map(summarise), [MARK], 'only the in-progress mark');
  assert.deepEqual(
    s.events.events.map((e) => `${e.type} ${e.reason}: ${e.message}`),
    [RESIZING, failed('not a CsiError')],
  );
});

// Across reconciles: what the reconciler remembers about a key decides the next one.
const IN_USE = failed('Unable to expand ns/data because CSI driver d.csi.test only supports offline expansion and volume is currently in-use');

test('in use: after FailedPrecondition the driver is not called again while a pod uses the claim', async () => {
  const usage = usedByPod();
  const s = setup({
    claimUsage: usage,
    resize: async () => {
      throw failedPrecondition();
    },
  });
  assert.equal(await decision(s.reconciler.reconcile('ns/data', never)), 'backoff');
  s.events.clear();
  const before = s.writes.length;
  assert.equal(await decision(s.reconciler.reconcile('ns/data', never)), 'backoff');
  assert.deepEqual(s.calls, ['2Gi'], 'no second driver call');
  assert.deepEqual(
    s.writes.slice(before).map(summarise),
    // The failure was written too, so the cached PVC is one version further.
    ['pvc rv=12 A=2Gi R=ControllerResizeInProgress +Resizing'],
    'only the mark',
  );
  assert.deepEqual(
    s.events.events.map((e) => `${e.type} ${e.reason}: ${e.message}`),
    [IN_USE],
  );
  // The pod is gone: the driver is asked again.
  usage.remove(new PodClaimUsage('ns/app', 'ns/data'));
  assert.equal(await decision(s.reconciler.reconcile('ns/data', never)), 'backoff');
  assert.deepEqual(s.calls, ['2Gi', '2Gi']);
});

for (const [kind, error, next] of [
  ['a final error (Internal)', internal, '3Gi'],
  ['an uncertain error (DeadlineExceeded)', deadline, '5Gi'],
] as const) {
  test(`recovery, in progress to 5Gi, request lowered to 3Gi: after ${kind} the next attempt asks for ${next}`, async () => {
    const s = setup({
      request: '3Gi',
      status: {
        phase: 'Bound',
        capacity: { storage: '1Gi' },
        allocatedResources: { storage: '5Gi' },
        allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' },
      },
      resize: async () => {
        throw error();
      },
    });
    assert.equal(await decision(s.reconciler.reconcile('ns/data', never)), 'backoff');
    assert.equal(await decision(s.reconciler.reconcile('ns/data', never)), 'backoff');
    assert.deepEqual(s.calls, ['5Gi', next]);
  });
}

test('recovery, infeasible: parked, the same size waits out the slow set without a write; a new size is tried at once', async () => {
  const s = setup({
    status: {
      phase: 'Bound',
      capacity: { storage: '1Gi' },
      allocatedResources: { storage: '2Gi' },
      allocatedResourceStatuses: { storage: 'ControllerResizeInfeasible' },
    },
    resize: async () => {
      throw outOfRange();
    },
  });
  // Not parked yet (a restart, or the first sync after the failure was written): one more try, and parked.
  assert.equal(await decision(s.reconciler.reconcile('ns/data', never)), 'backoff');
  assert.deepEqual(s.calls, ['2Gi']);
  assert.ok(s.slowSet.contains('ns/data'));
  const written = s.writes.length;
  assert.equal(await decision(s.reconciler.reconcile('ns/data', never)), 'retryAfter 60000');
  s.clock.advance(20_000);
  assert.equal(await decision(s.reconciler.reconcile('ns/data', never)), 'retryAfter 40000');
  assert.deepEqual(
    [s.calls.length, s.writes.length, s.events.withReason('VolumeResizeFailed').length],
    [1, written, 1],
    'no driver call, write or event while waiting',
  );
  // The user asks for a smaller size (recovery): tried at once.
  const pvc = s.pvcs.get('ns/data')!;
  s.pvcs.set('ns/data', { ...pvc, spec: { ...pvc.spec, resources: { requests: { storage: '1536Mi' } } } });
  assert.equal(await decision(s.reconciler.reconcile('ns/data', never)), 'backoff');
  assert.deepEqual(s.calls, ['2Gi', '1536Mi']);
});
