import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeGrpcMessage,
  GrpcStatus,
  GrpcStatusError,
  grpcStatusOfHttpStatus,
  grpcStatusOfResetCode,
  grpcTimeoutHeader,
  parseGrpcStatus,
} from './grpc-status.js';
import { classifyCsiError, grpcCodeOf } from './errors.js';

test('a status error has the shape and message text callers read', () => {
  const err = new GrpcStatusError(GrpcStatus.NOT_FOUND, 'volume vol-1 not found', { 'grpc-status': '5' });
  assert.equal(err.message, '5 NOT_FOUND: volume vol-1 not found');
  assert.equal(err.code, 5);
  assert.equal(err.details, 'volume vol-1 not found');
  assert.deepEqual(err.metadata, { 'grpc-status': '5' });
  assert.equal(grpcCodeOf(err), GrpcStatus.NOT_FOUND);
  assert.equal(classifyCsiError(err).message, 'rpc error: code = NotFound desc = volume vol-1 not found');
  assert.equal(new GrpcStatusError(GrpcStatus.DEADLINE_EXCEEDED, 'x').message, '4 DEADLINE_EXCEEDED: x');
});

for (const [value, code] of [
  ['0', 0], ['5', 5], ['16', 16], ['17', 2], ['99', 2], ['-1', 2], ['', 2], ['1x', 2], ['007', 2], [' 3', 2],
] as const) {
  test(`grpc-status ${JSON.stringify(value)} reads as ${code}`, () => assert.equal(parseGrpcStatus(value), code));
}

for (const [raw, decoded] of [
  ['plain text', 'plain text'],
  ['100%25 done', '100% done'],
  ['caf%C3%A9', 'café'],
  ['%E2%9C%93 ok%0Anext line', '✓ ok\nnext line'],
  ['50% off', '50% off'], // not an escape: kept
  ['trailing %', 'trailing %'],
  ['bad %zz hex', 'bad %zz hex'],
  ['lower %c3%a9', 'lower é'],
  ['broken %C3 utf8', 'broken \uFFFD utf8'],
] as const) {
  test(`grpc-message ${JSON.stringify(raw)} decodes to ${JSON.stringify(decoded)}`, () => assert.equal(decodeGrpcMessage(raw), decoded));
}

for (const [http, code] of [
  [400, GrpcStatus.INTERNAL], [401, GrpcStatus.UNAUTHENTICATED], [403, GrpcStatus.PERMISSION_DENIED], [404, GrpcStatus.UNIMPLEMENTED],
  [429, GrpcStatus.UNAVAILABLE], [502, GrpcStatus.UNAVAILABLE], [503, GrpcStatus.UNAVAILABLE], [504, GrpcStatus.UNAVAILABLE],
  [500, GrpcStatus.UNKNOWN], [418, GrpcStatus.UNKNOWN], [301, GrpcStatus.UNKNOWN],
] as const) {
  test(`HTTP ${http} without grpc-status means ${code}`, () => assert.equal(grpcStatusOfHttpStatus(http), code));
}

for (const [rst, code] of [
  [0x0, GrpcStatus.INTERNAL], [0x1, GrpcStatus.INTERNAL], [0x2, GrpcStatus.INTERNAL], [0x3, GrpcStatus.INTERNAL],
  [0x6, GrpcStatus.INTERNAL], [0x7, GrpcStatus.UNAVAILABLE], [0x8, GrpcStatus.CANCELLED], [0x9, GrpcStatus.INTERNAL],
  [0xa, GrpcStatus.INTERNAL], [0xb, GrpcStatus.RESOURCE_EXHAUSTED], [0xc, GrpcStatus.PERMISSION_DENIED],
] as const) {
  test(`RST_STREAM 0x${rst.toString(16)} means ${code}`, () => assert.equal(grpcStatusOfResetCode(rst), code));
}

for (const [ms, header] of [
  [0, '0m'], [1, '1m'], [0.2, '1m'], [2000, '2000m'], [99_999_999, '99999999m'], [100_000_000, '100000S'], [100_000_001, '100001S'],
  [600 * 3_600_000, '2160000S'], [99_999_999_000, '99999999S'], [100_000_000_000, '1666667M'], [1e14, '27777778H'], [1e15, '99999999H'], [1e20, '99999999H'],
] as const) {
  test(`a deadline ${ms} ms away is sent as grpc-timeout ${header}`, () => assert.equal(grpcTimeoutHeader(ms), header));
}
