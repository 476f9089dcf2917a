import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { DEADLINE_EXCEEDED_DETAILS, reportedStatus, statusError, type CallEnding } from './call-status.js';

/** What grpc-js hands the callback: its status as an Error (code and details possibly missing). */
function fromGrpcJs(code: unknown, details: unknown): ServiceError {
  const message = `${String(code)} ${String(status[code as status])}: ${String(details)}`;
  return Object.assign(new Error(message), { code, details, metadata: new Metadata() }) as ServiceError;
}

const DEADLINE_MS = 1_000_000;
const at = (endedMs: number, cancelledByCaller = false): CallEnding => ({ deadlineMs: DEADLINE_MS, endedMs, cancelledByCaller });

const rows: Array<{ name: string; err: ServiceError; ending: CallEnding; code: status; details: string | RegExp }> = [
  {
    name: "a driver's RST_STREAM CANCEL at the deadline is DeadlineExceeded (grpc-go: the deadline had passed)",
    err: fromGrpcJs(status.CANCELLED, 'Call cancelled'),
    ending: at(DEADLINE_MS),
    code: status.DEADLINE_EXCEEDED,
    details: DEADLINE_EXCEEDED_DETAILS,
  },
  {
    name: "a driver's CANCEL after the deadline is DeadlineExceeded",
    err: fromGrpcJs(status.CANCELLED, 'Call cancelled'),
    ending: at(DEADLINE_MS + 40),
    code: status.DEADLINE_EXCEEDED,
    details: DEADLINE_EXCEEDED_DETAILS,
  },
  {
    name: "a driver's CANCEL a millisecond before the deadline stays Cancelled",
    err: fromGrpcJs(status.CANCELLED, 'Call cancelled'),
    ending: at(DEADLINE_MS - 1),
    code: status.CANCELLED,
    details: 'Call cancelled',
  },
  {
    name: 'our own cancellation stays Cancelled, even after the deadline',
    err: fromGrpcJs(status.CANCELLED, 'Cancelled on client'),
    ending: at(DEADLINE_MS + 5, true),
    code: status.CANCELLED,
    details: 'Cancelled on client',
  },
  {
    name: "grpc-js's own deadline reads as grpc-go's, whatever grpc-js measured",
    err: fromGrpcJs(status.DEADLINE_EXCEEDED, 'Deadline exceeded after 1.002s,LB pick: 0.000s,remote_addr=/tmp/x.sock'),
    ending: at(DEADLINE_MS - 1),
    code: status.DEADLINE_EXCEEDED,
    details: DEADLINE_EXCEEDED_DETAILS,
  },
  {
    name: "a driver's own DeadlineExceeded well before the deadline keeps its message",
    err: fromGrpcJs(status.DEADLINE_EXCEEDED, 'backend timed out'),
    ending: at(DEADLINE_MS - 500),
    code: status.DEADLINE_EXCEEDED,
    details: 'backend timed out',
  },
  {
    name: 'a message refused before decoding (no code, no details) is Internal and says why',
    err: fromGrpcJs(undefined, undefined),
    ending: at(DEADLINE_MS - 500),
    code: status.INTERNAL,
    details:
      /^grpc: cannot decompress the driver's response: it is flagged compressed, but its grpc-encoding is identity, absent or not one of deflate and gzip$/,
  },
  {
    name: 'a malformed grpc-status (NaN) is Unknown',
    err: fromGrpcJs(Number.NaN, 'whatever'),
    ending: at(DEADLINE_MS - 500),
    code: status.UNKNOWN,
    details: /^transport: malformed grpc-status/,
  },
  {
    name: 'a grpc-status beyond 32 bits is Unknown, as grpc-go cannot parse it',
    err: fromGrpcJs(99999999999, 'odd'),
    ending: at(DEADLINE_MS - 500),
    code: status.UNKNOWN,
    details: /^transport: malformed grpc-status/,
  },
  {
    name: 'a negative grpc-status is its uint32, as grpc-go keeps it',
    err: fromGrpcJs(-1, 'odd'),
    ending: at(DEADLINE_MS - 500),
    code: 4294967295 as status,
    details: 'odd',
  },
  {
    name: "any other status is the driver's",
    err: fromGrpcJs(status.NOT_FOUND, 'no such volume'),
    ending: at(DEADLINE_MS + 10),
    code: status.NOT_FOUND,
    details: 'no such volume',
  },
];

for (const row of rows) {
  test(row.name, () => {
    const reported = reportedStatus(row.err, row.ending);
    assert.equal(reported.code, row.code);
    if (typeof row.details === 'string') assert.equal(reported.details, row.details);
    else assert.match(reported.details, row.details);
    assert.equal(reported.message, `${row.code} ${status[row.code]}: ${reported.details}`);
    assert.ok(reported.metadata instanceof Metadata);
    if (reported !== row.err) assert.equal(reported.cause, row.err, 'what grpc-js said stays the cause');
  });
}

test('a reported status keeps the trailers the driver sent', () => {
  const metadata = new Metadata();
  metadata.set('x-driver', 'yes');
  const err = Object.assign(fromGrpcJs(status.CANCELLED, 'Call cancelled'), { metadata });
  assert.equal(reportedStatus(err, at(DEADLINE_MS)).metadata.get('x-driver')[0], 'yes');
});

test('statusError: grpc-js shape, with a cause when given', () => {
  const cause = new Error('inner');
  const err = statusError(status.UNAVAILABLE, 'gone', { cause });
  assert.equal(err.code, status.UNAVAILABLE);
  assert.equal(err.details, 'gone');
  assert.equal(err.message, '14 UNAVAILABLE: gone');
  assert.equal(err.cause, cause);
  assert.equal(statusError(status.OK, 'x').cause, undefined);
});
