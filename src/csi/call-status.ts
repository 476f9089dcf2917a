// How a driver call's ending is reported: grpc-js's status, except for the endings where grpc-js
// and grpc-go (upstream's client) report the same thing differently. There we report what grpc-go
// reports, because upstream's events, conditions and csi_sidecar_operations_seconds show grpc-go's
// codes, and because grpc-js leaves some endings without a code at all. What grpc-js hands over in
// each case below is pinned by grpc-js-pins.test.ts. reportedStatus is pure
// (the caller says when the call ended and whether it cancelled it); oneResponseMessage is the
// interceptor for the rules grpc-js applies before a status reaches the caller. See
// docs/architecture.md, "The CSI layer".
import * as grpc from '@grpc/grpc-js';

/** grpc-go's text for a call that ran out of time (Go's context.DeadlineExceeded). */
export const DEADLINE_EXCEEDED_DETAILS = 'context deadline exceeded';

/**
 * grpc-js's own deadline timer runs on Node's timer clock, which can fire up to a millisecond
 * before the deadline reads as passed on Date.now().
 */
const DEADLINE_TIMER_SLACK_MS = 1;

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** grpc-go's client, like gRPC everywhere, wants exactly one message in a unary response. */
const NO_RESPONSE_MESSAGE_DETAILS = 'grpc: cardinality violation: the driver ended the call OK without a (complete) response message';
const SECOND_RESPONSE_MESSAGE_DETAILS = 'grpc: cardinality violation: the driver sent a second response message on a unary call';

/**
 * A unary response must be one message, and a violation is Internal as in grpc-go (grpc-js says
 * Unimplemented). Case "second message": grpc-js reads one message and keeps the status back
 * while more are unread, so a driver that sends two would hold the call until its deadline;
 * reading on lets grpc-js see the second at once and end the call, and that ending is reported
 * as the violation. Case "no message" (none, or one cut short before the status): grpc-js would
 * say "No message received".
 */
export const oneResponseMessage: grpc.Interceptor = (options, nextCall) => {
  let messages = 0;
  const call: grpc.InterceptingCall = new grpc.InterceptingCall(nextCall(options), {
    start(metadata, _listener, next) {
      next(metadata, {
        onReceiveMessage(message, nextMessage) {
          // grpc-js passes null for "no message" just before the status of a unary call.
          if (message !== null) messages += 1;
          nextMessage(message);
          call.startRead();
        },
        onReceiveStatus(status, nextStatus) {
          if (messages > 1) nextStatus({ ...status, code: grpc.status.INTERNAL, details: SECOND_RESPONSE_MESSAGE_DETAILS });
          else if (status.code === grpc.status.OK && messages === 0)
            nextStatus({ ...status, code: grpc.status.INTERNAL, details: NO_RESPONSE_MESSAGE_DETAILS });
          else nextStatus(status);
        },
      });
    },
  });
  return call;
};

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
 * - case "malformed grpc-status": a status that is not an integer reaches grpc-js as NaN, one
 *   beyond 32 bits as it is. grpc-go's client says Unknown.
 * - case "cancelled at the deadline": a grpc-go driver resets the stream with RST_STREAM CANCEL
 *   when its copy of the deadline (grpc-timeout) runs out, often just before grpc-js's own timer.
 *   grpc-go's client reports a CANCEL reset as DeadlineExceeded once the call's deadline has
 *   passed (and by then its own deadline ends the call, whatever else arrives), so a Cancelled
 *   we did not cause, at or after the deadline, is DeadlineExceeded; before it, Cancelled stays.
 *   A cancellation of the caller's own stays Cancelled.
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
  if (!Number.isInteger(code) || code < INT32_MIN || code > INT32_MAX) {
    return statusError(grpc.status.UNKNOWN, "transport: malformed grpc-status: the driver's status code is not a 32-bit integer", {
      metadata: err.metadata,
      cause: err,
    });
  }
  // grpc-go keeps a code outside the known ones, as a uint32 (Code(99), Code(4294967295)).
  if (code < 0) return statusError((code >>> 0) as grpc.status, err.details, { metadata: err.metadata, cause: err });
  const deadlinePassed = ending.endedMs >= ending.deadlineMs;
  if (code === grpc.status.CANCELLED && deadlinePassed && !ending.cancelledByCaller) {
    return statusError(grpc.status.DEADLINE_EXCEEDED, DEADLINE_EXCEEDED_DETAILS, { metadata: err.metadata, cause: err });
  }
  if (code === grpc.status.DEADLINE_EXCEEDED && ending.endedMs >= ending.deadlineMs - DEADLINE_TIMER_SLACK_MS && err.details !== DEADLINE_EXCEEDED_DETAILS) {
    return statusError(grpc.status.DEADLINE_EXCEEDED, DEADLINE_EXCEEDED_DETAILS, { metadata: err.metadata, cause: err });
  }
  return err;
}
