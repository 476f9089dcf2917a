// The one place that knows gRPC status codes. Every driver call's failure becomes a CsiError
// whose `failure` tells controllers what to do, so they never look at codes or messages:
//   inProgress  the outcome is unknown (the call may still complete at the driver): Canceled,
//               DeadlineExceeded, Unavailable, ResourceExhausted, Aborted, and any non-gRPC error.
//               Upstream calls these "non-final"; the previous target must be retried.
//   infeasible  final, and retrying the same request cannot succeed: for expand InvalidArgument,
//               OutOfRange, NotFound; for modify InvalidArgument only.
//   inUse       final FailedPrecondition: typically an offline-only driver with a published volume.
//   final       every other gRPC code.
import { messageOf } from '../base/errors.js';
import { status as GrpcStatus } from '@grpc/grpc-js';

/** A gRPC status code, as @grpc/grpc-js numbers them. */
export type GrpcCode = GrpcStatus;

/** Go's codes.Code.String() names, used in metrics labels and messages for parity. */
export const GRPC_CODE_NAMES: Readonly<Record<number, string>> = Object.freeze({
  0: 'OK',
  1: 'Canceled',
  2: 'Unknown',
  3: 'InvalidArgument',
  4: 'DeadlineExceeded',
  5: 'NotFound',
  6: 'AlreadyExists',
  7: 'PermissionDenied',
  8: 'ResourceExhausted',
  9: 'FailedPrecondition',
  10: 'Aborted',
  11: 'OutOfRange',
  12: 'Unimplemented',
  13: 'Internal',
  14: 'Unavailable',
  15: 'DataLoss',
  16: 'Unauthenticated',
});

/** The metrics label for failures that carry no gRPC status. */
export const NON_GRPC_CODE_NAME = 'unknown-non-grpc';

export type CsiFailure = 'final' | 'infeasible' | 'inUse' | 'inProgress';
export type CsiOperation = 'expand' | 'modify';

export interface CsiErrorOptions extends ErrorOptions {
  /** The gRPC status message (Go's status.Message()); the error's message when not given. */
  details?: string;
}

export class CsiError extends Error {
  /**
   * The gRPC status message as the driver sent it (what Go's status.Message() returns), without
   * the "rpc error: code = ... desc = " frame of `message`; for a failure without a gRPC status,
   * the message itself. Kept as a field where the error is made, so nobody reads it back out of
   * the message text.
   */
  readonly details: string;

  constructor(
    /** The gRPC status code, or null when the failure carried none. */
    readonly code: GrpcCode | null,
    readonly codeName: string,
    readonly failure: CsiFailure,
    message: string,
    options?: CsiErrorOptions,
  ) {
    super(message, options);
    this.name = 'CsiError';
    this.details = options?.details ?? message;
  }

  get isFinal(): boolean {
    return this.failure !== 'inProgress';
  }
}

interface StatusLike {
  code: number;
  details?: string;
}

const UINT32_MAX = 2 ** 32 - 1;

/**
 * A gRPC status error (grpc-js's ServiceError, or a CsiError) has a code that is a uint32, as in
 * grpc-go; one beyond the known codes is still a code (grpc-go's Code(99)), and final.
 */
export function grpcCodeOf(err: unknown): GrpcCode | null {
  if (err instanceof CsiError) return err.code;
  if (typeof err !== 'object' || err === null) return null;
  const candidate = err as Partial<StatusLike> & { metadata?: unknown };
  if (typeof candidate.code !== 'number' || !('details' in candidate) || !('metadata' in candidate)) return null;
  const code = candidate.code;
  return Number.isInteger(code) && code >= 0 && code <= UINT32_MAX ? (code as GrpcCode) : null;
}

/** Go's codes.Code.String(): the name of a known code, Code(n) for another. */
export function grpcCodeName(code: GrpcCode | null): string {
  return code === null ? NON_GRPC_CODE_NAME : (GRPC_CODE_NAMES[code] ?? `Code(${code})`);
}

const NON_FINAL_CODES: ReadonlySet<number> = new Set([
  GrpcStatus.CANCELLED,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.RESOURCE_EXHAUSTED,
  GrpcStatus.ABORTED,
]);
const INFEASIBLE_FOR_EXPAND: ReadonlySet<number> = new Set([GrpcStatus.INVALID_ARGUMENT, GrpcStatus.OUT_OF_RANGE, GrpcStatus.NOT_FOUND]);
const INFEASIBLE_FOR_MODIFY: ReadonlySet<number> = new Set([GrpcStatus.INVALID_ARGUMENT]);

function failureOf(code: GrpcCode | null, operation: CsiOperation): CsiFailure {
  if (code === null || NON_FINAL_CODES.has(code)) return 'inProgress';
  const infeasible = operation === 'expand' ? INFEASIBLE_FOR_EXPAND : INFEASIBLE_FOR_MODIFY;
  if (infeasible.has(code)) return 'infeasible';
  if (code === GrpcStatus.FAILED_PRECONDITION) return 'inUse';
  return 'final';
}

/**
 * Classifies any failure of a driver call. gRPC errors get Go's message shape
 * ("rpc error: code = NotFound desc = ..."), which is what events and conditions show upstream.
 */
export function classifyCsiError(err: unknown, operation: CsiOperation = 'expand'): CsiError {
  const code = grpcCodeOf(err);
  const failure = failureOf(code, operation);
  if (err instanceof CsiError) {
    return err.failure === failure ? err : new CsiError(err.code, err.codeName, failure, err.message, { cause: err.cause, details: err.details });
  }
  const codeName = grpcCodeName(code);
  if (code === null) return new CsiError(code, codeName, failure, messageOf(err), { cause: err });
  const details = (err as StatusLike).details ?? '';
  return new CsiError(code, codeName, failure, `rpc error: code = ${codeName} desc = ${details}`, { cause: err, details });
}
