import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { classifyCsiError, CsiError } from '../csi/errors.js';
import { errorCountingModifier, type Modifier } from '../modify/modifier.js';
import { errorCountingResizer, type Resizer } from '../resize/resizer.js';
import { pv, pvc, volumeAttributesClass } from '../../test/support/builders.js';
import { createMetrics, OPERATION_DURATION_BUCKETS, OperationName, recordOperationError } from './metrics.js';

const FAMILIES = [
  ['csi_resizer_resize_controller_duration_seconds', 'histogram'],
  ['csi_resizer_resize_duration_seconds', 'histogram'],
  ['csi_resizer_modify_duration_seconds', 'histogram'],
  ['csi_resizer_operation_errors_total', 'counter'],
] as const;

test('the operation families are on the registry with their types, and the duration buckets reach a day', async () => {
  const metrics = createMetrics();
  const text = await metrics.registry.metrics();
  for (const [name, type] of FAMILIES) assert.match(text, new RegExp(`^# TYPE ${name} ${type}$`, 'm'), name);
  metrics.operations.resizeDuration.observe(7_200);
  const after = await metrics.registry.metrics();
  assert.match(after, /^csi_resizer_resize_duration_seconds_bucket\{le="600"\} 0$/m);
  assert.match(after, /^csi_resizer_resize_duration_seconds_bucket\{le="7200"\} 1$/m);
  assert.equal(OPERATION_DURATION_BUCKETS.at(-1), 86_400);
});

async function errorCounts(metrics: ReturnType<typeof createMetrics>): Promise<Record<string, number>> {
  const values = (await metrics.operations.errors.get()).values;
  return Object.fromEntries(values.map((v) => [`${v.labels['operation_name']} ${v.labels['grpc_status_code']}`, v.value]));
}

const failingResizer = (err: unknown): Resizer => ({
  name: 'd',
  supportsControlPlaneExpansion: true,
  expansionMode: 'online',
  canSupport: () => true,
  resize: () => Promise.reject(err),
});

test('a failed expand is counted under the gRPC code the driver answered, unknown-non-grpc before the call, and still fails', async () => {
  const metrics = createMetrics();
  const grpcError = classifyCsiError(Object.assign(new Error('x'), { code: GrpcStatus.OUT_OF_RANGE, details: 'too big', metadata: {} }));
  assert.ok(grpcError instanceof CsiError);
  const signal = AbortSignal.timeout(1_000);
  const target = { bytes: 2n, quantity: '2' };
  for (const err of [grpcError, grpcError, new Error('failed to translate persistent volume: nope')]) {
    const resizer = errorCountingResizer(failingResizer(err), recordOperationError(metrics.operations, OperationName.Expand));
    await assert.rejects(resizer.resize(pv(), target, signal), (thrown) => thrown === err);
  }
  const ok = errorCountingResizer(
    { ...failingResizer(undefined), resize: async () => ({ capacityBytes: 2n, capacity: '2', nodeExpansionRequired: false }) },
    recordOperationError(metrics.operations, OperationName.Expand),
  );
  await ok.resize(pv(), target, signal);
  assert.deepEqual(await errorCounts(metrics), { 'expand_volume OutOfRange': 2, 'expand_volume unknown-non-grpc': 1 });
});

test('a failed modify is counted the same way, under modify_volume', async () => {
  const metrics = createMetrics();
  const unavailable = classifyCsiError(Object.assign(new Error('x'), { code: GrpcStatus.UNAVAILABLE, details: 'down', metadata: {} }), 'modify');
  const failing = (err: unknown): Modifier => ({ name: 'd', modify: () => Promise.reject(err) });
  const record = recordOperationError(metrics.operations, OperationName.Modify);
  const vac = volumeAttributesClass({ name: 'gold', driverName: 'd' });
  for (const err of [unavailable, new Error('empty volume handle')]) {
    await assert.rejects(errorCountingModifier(failing(err), record).modify(pv(), pvc(), vac, AbortSignal.timeout(1_000)));
  }
  assert.deepEqual(await errorCounts(metrics), { 'modify_volume Unavailable': 1, 'modify_volume unknown-non-grpc': 1 });
});
