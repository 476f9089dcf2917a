// How a driver call's ending is reported: grpc-js's status, except for the endings where grpc-js
// and grpc-go (upstream's client) report the same thing differently. There we report what grpc-go
// reports, because upstream's events, conditions and csi_sidecar_operations_seconds show grpc-go's
// codes, and because grpc-js leaves some endings without a code at all. Pure: the caller says
// when the call ended and whether it cancelled the call itself. See docs/architecture.md,
// "The CSI layer".
import * as grpc from '@grpc/grpc-js';

/** grpc-go's text for a call that ran out of time (Go's context.DeadlineExceeded). */
export const DEADLINE_EXCEEDED_DETAILS = 'context deadline exceeded';

/**
 * grpc-js's own deadline timer runs on Node's timer clock, which can fire up to a millisecond
 * before the deadline reads as passed on Date.now().
 */
const DEADLINE_TIMER_SLACK_MS = 1;

export interface CallEnding {
  /** The call's deadline, on Date.now()'s clock. */
  readonly deadlineMs: number;
  /** When the status arrived, on the same clock. */
  readonly endedMs: number;
  /** The caller cancelled the call (its signal aborted): a Cancelled status is then ours. */
  readonly cancelledByCaller: boolean;
}

/** A grpc-js style status error, for an ending our code decides. */
export function statusError(code: grpc.status, details: string, options?: { metadata?: grpc.Metadata; cause?: unknown }): grpc.ServiceError {
  const err = new Error(`${code} ${grpc.status[code]}: ${details}`, options?.cause === undefined ? undefined : { cause: options.cause });
  return Object.assign(err, { code, details, metadata: options?.metadata ?? new grpc.Metadata() });
}

/**
 * The status to report for a call grpc-js ended with `err`:
 * - case "refused before decoding": grpc-js's receive filter rejects a message flagged compressed
 *   whose grpc-encoding it cannot decompress (identity, none, or not deflate/gzip) with a plain
 *   Error, which becomes a status without code or details. grpc-go's client says Internal.
 * - case "malformed grpc-status": a status that is not an integer reaches grpc-js as NaN.
 *   grpc-go's client says Unknown.
 * - case "cancelled at the deadline": a grpc-go driver resets the stream with RST_STREAM CANCEL
 *   when its copy of the deadline (grpc-timeout) runs out, often just before grpc-js's own timer.
 *   grpc-go's client reports a Cancelled reset as DeadlineExceeded once the call's deadline has
 *   passed; before it, Cancelled stays. A cancellation of the caller's own stays Cancelled.
 * - case "deadline": DeadlineExceeded at the deadline, however it was noticed, reads as grpc-go's,
 *   so events about the same timeout are alike.
 * Every other status is reported as grpc-js gave it.
 */
export function reportedStatus(err: grpc.ServiceError, ending: CallEnding): grpc.ServiceError {
  const code: unknown = err.code;
  if (typeof code !== 'number') {
    return statusError(
      grpc.status.INTERNAL,
      "grpc: cannot decompress the driver's response: it is flagged compressed, but its grpc-encoding is identity, absent or not one of deflate and gzip",
      { cause: err },
    );
  }
  if (!Number.isInteger(code)) {
    return statusError(grpc.status.UNKNOWN, "transport: malformed grpc-status: the driver's status code is not an integer", {
      metadata: err.metadata,
      cause: err,
    });
  }
  const deadlinePassed = ending.endedMs >= ending.deadlineMs;
  if (code === grpc.status.CANCELLED && deadlinePassed && !ending.cancelledByCaller) {
    return statusError(grpc.status.DEADLINE_EXCEEDED, DEADLINE_EXCEEDED_DETAILS, { metadata: err.metadata, cause: err });
  }
  if (code === grpc.status.DEADLINE_EXCEEDED && ending.endedMs >= ending.deadlineMs - DEADLINE_TIMER_SLACK_MS && err.details !== DEADLINE_EXCEEDED_DETAILS) {
    return statusError(grpc.status.DEADLINE_EXCEEDED, DEADLINE_EXCEEDED_DETAILS, { metadata: err.metadata, cause: err });
  }
  return err;
}
