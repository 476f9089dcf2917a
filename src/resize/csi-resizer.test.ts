// The CSI back-end keeps the Resizer port's promise: whatever fails, before the driver call or in
// it, leaves as a CsiError (§3.7), so the reconcile never classifies an error itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { CsiClient } from '../csi/client.js';
import { CsiError } from '../csi/errors.js';
import type { Pv } from '../model/objects.js';
import { driverError } from '../../test/support/reconcile-errors.js';
import { CsiResizer } from './csi-resizer.js';

const DRIVER = 'd.csi.test';
const never = new AbortController().signal;
const target = { bytes: 2n * 1024n ** 3n, quantity: '2Gi' };
const volume = (csi: Partial<NonNullable<Pv['spec']['csi']>> = {}): Pv => ({
  metadata: { name: 'pv-1' },
  spec: { accessModes: ['ReadWriteOnce'], csi: { driver: DRIVER, volumeHandle: 'vol-1', ...csi } },
});

function resizer(expandVolume: CsiClient['expandVolume']): CsiResizer {
  return new CsiResizer({
    driverName: DRIVER,
    csi: { expandVolume } as CsiClient,
    secrets: {
      getSecret: async () => {
        throw new Error('secrets "creds" is forbidden');
      },
    },
    supportsSingleNodeMultiWriter: false,
    expansionMode: 'online',
    timeoutMs: 10_000,
  });
}

const notCalled: CsiClient['expandVolume'] = async () => assert.fail('the driver is not called');

const rows: { name: string; run: () => Promise<unknown>; code: number | null; failure: string; message: RegExp }[] = [
  {
    name: 'an empty volume handle',
    run: () => resizer(notCalled).resize(volume({ volumeHandle: '' }), target, never),
    code: null,
    failure: 'inProgress',
    message: /^empty volume handle$/,
  },
  {
    name: 'a secret that cannot be read',
    run: () => resizer(notCalled).resize(volume({ controllerExpandSecretRef: { name: 'creds', namespace: 'ns' } }), target, never),
    code: null,
    failure: 'inProgress',
    message: /^error getting secret creds in namespace ns: secrets "creds" is forbidden$/,
  },
  {
    name: "the driver's gRPC status, as the client classified it",
    run: () =>
      resizer(async () => {
        throw driverError(GrpcStatus.OUT_OF_RANGE, 'too big', 'expand');
      }).resize(volume(), target, never),
    code: GrpcStatus.OUT_OF_RANGE,
    failure: 'infeasible',
    message: /^rpc error: code = OutOfRange desc = too big$/,
  },
];

for (const row of rows) {
  test(`CsiResizer rejects with a CsiError: ${row.name}`, async () => {
    await assert.rejects(row.run(), (err) => {
      assert.ok(err instanceof CsiError, String(err));
      assert.equal(err.code, row.code);
      assert.equal(err.failure, row.failure);
      assert.match(err.message, row.message);
      return true;
    });
  });
}
