import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Metadata, status } from '@grpc/grpc-js';
import { classifyCsiError, CsiError, NON_GRPC_CODE_NAME } from './errors.js';

function grpcError(code: status, details = 'boom') {
  return Object.assign(new Error(`${code} ${status[code]}: ${details}`), { code, details, metadata: new Metadata() });
}

// [code, Go name, expand failure, modify failure]
const table: [status, string, string, string][] = [
  [status.CANCELLED, 'Canceled', 'inProgress', 'inProgress'],
  [status.UNKNOWN, 'Unknown', 'final', 'final'],
  [status.INVALID_ARGUMENT, 'InvalidArgument', 'infeasible', 'infeasible'],
  [status.DEADLINE_EXCEEDED, 'DeadlineExceeded', 'inProgress', 'inProgress'],
  [status.NOT_FOUND, 'NotFound', 'infeasible', 'final'],
  [status.ALREADY_EXISTS, 'AlreadyExists', 'final', 'final'],
  [status.PERMISSION_DENIED, 'PermissionDenied', 'final', 'final'],
  [status.RESOURCE_EXHAUSTED, 'ResourceExhausted', 'inProgress', 'inProgress'],
  [status.FAILED_PRECONDITION, 'FailedPrecondition', 'inUse', 'inUse'],
  [status.ABORTED, 'Aborted', 'inProgress', 'inProgress'],
  [status.OUT_OF_RANGE, 'OutOfRange', 'infeasible', 'final'],
  [status.UNIMPLEMENTED, 'Unimplemented', 'final', 'final'],
  [status.INTERNAL, 'Internal', 'final', 'final'],
  [status.UNAVAILABLE, 'Unavailable', 'inProgress', 'inProgress'],
  [status.DATA_LOSS, 'DataLoss', 'final', 'final'],
  [status.UNAUTHENTICATED, 'Unauthenticated', 'final', 'final'],
];

for (const [code, name, expand, modify] of table) {
  test(`${name}: expand → ${expand}, modify → ${modify}`, () => {
    const err = grpcError(code, 'driver says no');
    const e = classifyCsiError(err, 'expand');
    assert.ok(e instanceof CsiError);
    assert.equal(e.code, code);
    assert.equal(e.codeName, name);
    assert.equal(e.failure, expand);
    assert.equal(e.message, `rpc error: code = ${name} desc = driver says no`);
    assert.equal(e.details, 'driver says no', 'the status message is a field, not parsed back out of the text');
    assert.equal(e.cause, err);
    assert.equal(classifyCsiError(err, 'modify').failure, modify);
    assert.equal(e.isFinal, expand !== 'inProgress');
    assert.equal(e.failure === 'inUse', code === status.FAILED_PRECONDITION);
  });
}

test('a non-gRPC error is non-final and labelled unknown-non-grpc', () => {
  const err = new Error('secret lookup failed');
  const e = classifyCsiError(err);
  assert.equal(e.code, null);
  assert.equal(e.codeName, NON_GRPC_CODE_NAME);
  assert.equal(e.failure, 'inProgress');
  assert.equal(e.message, 'secret lookup failed');
  assert.equal(e.details, 'secret lookup failed');
  assert.equal(e.isFinal, false);
  // An object with a numeric code but no gRPC shape is not a status.
  assert.equal(classifyCsiError({ code: 3 }).isFinal, false);
  assert.equal(classifyCsiError({ code: 3 }).code, null);
  assert.equal(classifyCsiError('plain string').failure, 'inProgress');
});

test('a code beyond the known ones is a code, final, named as Go names it (Code(n))', () => {
  const e = classifyCsiError(grpcError(99 as status, 'odd'), 'expand');
  assert.equal(e.code, 99);
  assert.equal(e.codeName, 'Code(99)');
  assert.equal(e.failure, 'final');
  assert.equal(e.message, 'rpc error: code = Code(99) desc = odd');
  assert.equal(classifyCsiError(grpcError(4294967295 as status)).codeName, 'Code(4294967295)');
  // Not a uint32: no status (call-status.ts has made grpc-js's oddities into codes before this).
  for (const code of [-1, 1.5, Number.NaN, 2 ** 32]) assert.equal(classifyCsiError(grpcError(code as status)).code, null, String(code));
});

test('a CsiError is re-classified for the other operation, keeping the code', () => {
  const expand = classifyCsiError(grpcError(status.NOT_FOUND), 'expand');
  assert.equal(expand.failure, 'infeasible');
  const modify = classifyCsiError(expand, 'modify');
  assert.equal(modify.failure, 'final');
  assert.equal(modify.code, status.NOT_FOUND);
  assert.equal(modify.details, 'boom', 'the status message survives re-classification');
  assert.equal(classifyCsiError(expand, 'expand'), expand);
  assert.equal(expand.failure, 'infeasible', 'the expand error itself is left as it was');
});

test('details of a gRPC status whose message looks like a framed error is taken as sent', () => {
  // A driver message that itself contains "desc = " is not split again.
  const e = classifyCsiError(grpcError(status.INVALID_ARGUMENT, 'outer: rpc error: code = Internal desc = inner'), 'modify');
  assert.equal(e.details, 'outer: rpc error: code = Internal desc = inner');
  assert.equal(e.message, 'rpc error: code = InvalidArgument desc = outer: rpc error: code = Internal desc = inner');
});
