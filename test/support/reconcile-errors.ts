// The errors a reconcile meets, made as the edges make them, for the resize and modify reconcile
// tests: the API server's Status answers as our HTTP layer turns them into KubeApiError, and the
// driver's answers as the Resizer and Modifier ports reject with them (a CsiError, §3.7, §4.6);
// and the check of a failed reconcile, by the texts upstream's controllers give.
import assert from 'node:assert/strict';
import type { status as GrpcStatus } from '@grpc/grpc-js';
import { classifyCsiError, type CsiError, type CsiOperation } from '../../src/csi/errors.js';
import { KubeApiError } from '../../src/kube/api/errors.js';
import type { RecordingEventRecorder } from '../fakes/recording-events.js';

const pvcStatusPatch = { method: 'PATCH', path: '/api/v1/namespaces/ns/persistentvolumeclaims/data/status' };

/** The PVC ns/data was deleted meanwhile: the answer to a status patch. */
export const pvcGone = (): KubeApiError =>
  KubeApiError.fromStatus(404, { kind: 'Status', reason: 'NotFound', code: 404, message: 'persistentvolumeclaims "data" not found' }, pvcStatusPatch);

/** The PV pv-1 was deleted meanwhile: the answer to a PV patch. */
export const pvGone = (): KubeApiError =>
  KubeApiError.fromStatus(
    404,
    { kind: 'Status', reason: 'NotFound', code: 404, message: 'persistentvolumes "pv-1" not found' },
    { method: 'PATCH', path: '/api/v1/persistentvolumes/pv-1' },
  );

/** A resourceVersion-checked status patch of ns/data lost the race. */
export const conflict = (): KubeApiError =>
  KubeApiError.fromStatus(
    409,
    {
      kind: 'Status',
      reason: 'Conflict',
      code: 409,
      message:
        'Operation cannot be fulfilled on persistentvolumeclaims "data": the object has been modified; please apply your changes to the latest version and try again',
    },
    pvcStatusPatch,
  );

/** The driver answered with a gRPC status: the CsiError the port rejects with. */
export const driverError = (code: GrpcStatus, details: string, operation: CsiOperation): CsiError =>
  classifyCsiError({ code, details, metadata: {} }, operation);

/** A failure before any driver answer (a secret, a volume handle): the port's CsiError without a code. */
export const noStatusError = (message: string, operation: CsiOperation): CsiError => classifyCsiError(new Error(message), operation);

/** The reconcile failed with exactly this error text (what the worker logs) and recorded these events, as `Type Reason: message`. */
export async function assertFailureTexts(
  reconcile: Promise<unknown>,
  recorded: RecordingEventRecorder,
  want: { error: string; events: readonly string[] },
): Promise<void> {
  await assert.rejects(reconcile, (err: Error) => {
    assert.equal(err.message, want.error);
    return true;
  });
  assert.deepEqual(
    recorded.events.map((e) => `${e.type} ${e.reason}: ${e.message}`),
    want.events,
  );
}
