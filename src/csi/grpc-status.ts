// gRPC status codes and the parts of the gRPC-over-HTTP/2 protocol that are plain data: how a
// call's status is read from what the server sent (grpc-status and percent-encoded grpc-message,
// else the HTTP status, else the RST_STREAM code), and how a deadline is written (grpc-timeout).
// The rules follow grpc/grpc doc/PROTOCOL-HTTP2.md, statuscodes.md and http-grpc-status-mapping.md.

/** The canonical codes, by the names the gRPC libraries use. */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcStatus = (typeof GrpcStatus)[keyof typeof GrpcStatus];

const CONSTANT_NAMES: readonly string[] = Object.keys(GrpcStatus);

/**
 * A call that ended with a status other than OK. Same shape as the errors of @grpc/grpc-js, which
 * the rest of the program and its tests were written against: numeric `code`, the status message
 * as `details`, the trailers as `metadata`, and the message "<code> <NAME>: <details>".
 */
export class GrpcStatusError extends Error {
  readonly code: GrpcStatus;
  readonly details: string;
  readonly metadata: Readonly<Record<string, string>>;

  constructor(code: GrpcStatus, details: string, metadata: Readonly<Record<string, string>> = {}, options?: ErrorOptions) {
    super(`${code} ${CONSTANT_NAMES[code] ?? 'UNKNOWN'}: ${details}`, options);
    this.name = 'GrpcStatusError';
    this.code = code;
    this.details = details;
    this.metadata = metadata;
  }
}

/** A grpc-status header value; anything that is not one of the canonical codes reads as UNKNOWN. */
export function parseGrpcStatus(value: string): GrpcStatus {
  if (!/^\d{1,2}$/.test(value)) return GrpcStatus.UNKNOWN;
  const code = Number(value);
  return code <= GrpcStatus.UNAUTHENTICATED ? (code as GrpcStatus) : GrpcStatus.UNKNOWN;
}

/**
 * grpc-message is UTF-8, percent-encoded. A `%` not followed by two hex digits is kept as it is,
 * as the protocol asks of a lenient reader; invalid UTF-8 becomes U+FFFD.
 */
export function decodeGrpcMessage(value: string): string {
  if (!value.includes('%')) return value;
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const hex = value.charCodeAt(i) === 0x25 ? value.slice(i + 1, i + 3) : '';
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
      continue;
    }
    for (const b of Buffer.from(value[i]!, 'utf8')) bytes.push(b);
  }
  return Buffer.from(bytes).toString('utf8');
}

/** For a response without grpc-status only: what its HTTP status means for the call. */
export function grpcStatusOfHttpStatus(httpStatus: number): GrpcStatus {
  switch (httpStatus) {
    case 400:
      return GrpcStatus.INTERNAL;
    case 401:
      return GrpcStatus.UNAUTHENTICATED;
    case 403:
      return GrpcStatus.PERMISSION_DENIED;
    case 404:
      return GrpcStatus.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return GrpcStatus.UNAVAILABLE;
    default:
      return GrpcStatus.UNKNOWN;
  }
}

/** A stream reset by the server (RST_STREAM) before any status arrived. */
export function grpcStatusOfResetCode(http2ErrorCode: number): GrpcStatus {
  switch (http2ErrorCode) {
    case 0x7: // REFUSED_STREAM: nothing was processed, the call may be sent again
      return GrpcStatus.UNAVAILABLE;
    case 0x8: // CANCEL
      return GrpcStatus.CANCELLED;
    case 0xb: // ENHANCE_YOUR_CALM
      return GrpcStatus.RESOURCE_EXHAUSTED;
    case 0xc: // INADEQUATE_SECURITY
      return GrpcStatus.PERMISSION_DENIED;
    default: // NO_ERROR without a status, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR ...
      return GrpcStatus.INTERNAL;
  }
}

const TIMEOUT_UNITS: ReadonlyArray<readonly [string, number]> = [['m', 1], ['S', 1000], ['M', 60_000], ['H', 3_600_000]];
const TIMEOUT_MAX_DIGITS_VALUE = 99_999_999;

/**
 * The grpc-timeout header for a deadline `timeoutMs` from now: at most 8 digits and a unit, in the
 * finest unit that fits, rounded up so the server never sees a shorter deadline than ours.
 */
export function grpcTimeoutHeader(timeoutMs: number): string {
  const ms = Math.max(0, Math.ceil(timeoutMs));
  for (const [unit, unitMs] of TIMEOUT_UNITS) {
    const amount = Math.ceil(ms / unitMs);
    if (amount <= TIMEOUT_MAX_DIGITS_VALUE) return `${amount}${unit}`;
  }
  return `${TIMEOUT_MAX_DIGITS_VALUE}H`;
}
