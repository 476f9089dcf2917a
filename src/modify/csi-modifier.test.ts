// The CSI back-end keeps the Modifier port's promise: whatever fails, before the driver call or in
// it, leaves as a CsiError (§4.6); one without a gRPC status has no code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { CsiClient } from '../csi/client.js';
import { CsiError } from '../csi/errors.js';
import type { Pv, VolumeAttributesClass } from '../model/objects.js';
import { driverError } from '../../test/support/reconcile-errors.js';
import { CsiModifier } from './csi-modifier.js';

const DRIVER = 'd.csi.test';
const never = new AbortController().signal;
const gold: VolumeAttributesClass = { metadata: { name: 'gold' }, driverName: DRIVER, parameters: { tier: 'gold' } };
const claim = { metadata: { name: 'data', namespace: 'ns' }, spec: {} };

function modifier(modifyVolume: CsiClient['modifyVolume']): CsiModifier {
  return new CsiModifier({
    driverName: DRIVER,
    csi: { modifyVolume } as CsiClient,
    secrets: {
      getSecret: async () => {
        throw new Error('secrets "creds" not found');
      },
    },
    extraModifyMetadata: false,
    timeoutMs: 10_000,
  });
}

const notCalled: CsiClient['modifyVolume'] = async () => assert.fail('the driver is not called');
const csiVolume = (csi: Partial<NonNullable<Pv['spec']['csi']>> = {}): Pv => ({
  metadata: { name: 'pv-1' },
  spec: { csi: { driver: DRIVER, volumeHandle: 'vol-1', ...csi } },
});

const rows: { name: string; run: () => Promise<void>; code: number | null; message: RegExp }[] = [
  {
    name: 'a volume that is not CSI',
    run: () => modifier(notCalled).modify({ metadata: { name: 'pv-1' }, spec: {} }, claim, gold, never),
    code: null,
    message: /^volume pv-1 is not a CSI volumes, modify volume feature only supports CSI volumes$/,
  },
  {
    name: 'a secret that cannot be read',
    run: () => modifier(notCalled).modify(csiVolume({ controllerExpandSecretRef: { name: 'creds', namespace: 'ns' } }), claim, gold, never),
    code: null,
    message: /^error getting secret creds in namespace ns: secrets "creds" not found$/,
  },
  {
    name: "the driver's gRPC status, as the client classified it",
    run: () =>
      modifier(async () => {
        throw driverError(GrpcStatus.INVALID_ARGUMENT, 'bad tier', 'modify');
      }).modify(csiVolume(), claim, gold, never),
    code: GrpcStatus.INVALID_ARGUMENT,
    message: /^rpc error: code = InvalidArgument desc = bad tier$/,
  },
];

for (const row of rows) {
  test(`CsiModifier rejects with a CsiError: ${row.name}`, async () => {
    await assert.rejects(row.run(), (err) => {
      assert.ok(err instanceof CsiError, String(err));
      assert.equal(err.code, row.code);
      assert.match(err.message, row.message);
      return true;
    });
  });
}
