// The CsiError a CSI client call rejects with, for the tests that drive calls into failures.
import assert from 'node:assert/strict';
import { CsiError } from '../../src/csi/errors.js';

/** Waits for a call that must fail; returns its CsiError (a success or another error fails the test). */
export async function failure(promise: Promise<unknown>): Promise<CsiError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof CsiError, `not a CsiError: ${String(err)}`);
    return err;
  }
  assert.fail('the call succeeded');
}
