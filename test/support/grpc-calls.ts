// Assertions on the outcome of a gRPC call, shared by the CSI channel's tests.
import assert from 'node:assert/strict';
import { GrpcStatusError } from '../../src/csi/grpc-status.js';

/** Waits for a call that must fail with `code` (and details matching `details`); returns the error. */
export async function callFails(promise: Promise<unknown>, code: number, details?: RegExp): Promise<GrpcStatusError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof GrpcStatusError, `not a status error: ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (details) assert.match(err.details, details);
    return err;
  }
  assert.fail('the call succeeded');
}
