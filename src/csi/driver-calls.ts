// The unary calls to the CSI driver, made on the DriverChannel (driver-channel.ts): each with a
// deadline, the caller's signal, one sample of csi_sidecar_operations_seconds per attempt and
// sanitized logging at -v=5, sent once more when the connection under it broke before the driver
// answered. Messages are the generated csi.v1 schemas of ./proto/gen, turned into bytes with
// @bufbuild/protobuf. Each grpc-js behaviour worked around here is pinned by
// grpc-js-pins.test.ts. See docs/architecture.md, "The CSI layer".
import * as grpc from '@grpc/grpc-js';
import { create, fromBinary, toBinary, type DescMessage, type DescMethodUnary, type MessageInitShape, type MessageShape } from '@bufbuild/protobuf';
import { messageOf } from '../base/errors.js';
import type { Logger } from '../observability/log/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { MAX_TIMER_DELAY_MS, setLongTimeout } from '../base/long-timer.js';
import { abortReason } from '../base/signals.js';
import { DEADLINE_EXCEEDED_DETAILS, oneResponseMessage, reportedStatus, statusError } from './call-status.js';
import type { DriverChannel } from './driver-channel.js';
import { grpcCodeName, grpcCodeOf } from './errors.js';
import { stripSecrets } from './sanitize.js';

export const UNKNOWN_DRIVER_NAME = 'unknown-driver';

/** The codes grpc-js gives a call whose connection broke under it. */
const LOST_CONNECTION_CODES: ReadonlySet<number> = new Set([grpc.status.UNAVAILABLE, grpc.status.INTERNAL]);

export interface CallOptions {
  /** The deadline of this call; the reference uses --timeout for every call. */
  timeoutMs: number;
}

/** How one method travels: its gRPC path and its (de)serializers, made once per method. */
interface WireMethod<I extends DescMessage, O extends DescMessage> {
  readonly path: string;
  readonly serialize: (message: MessageShape<I>) => Buffer;
  readonly deserialize: (bytes: Buffer) => MessageShape<O>;
}

const wireMethods = new WeakMap<object, WireMethod<DescMessage, DescMessage>>();

function wireMethod<I extends DescMessage, O extends DescMessage>(method: DescMethodUnary<I, O>): WireMethod<I, O> {
  let wire = wireMethods.get(method) as WireMethod<I, O> | undefined;
  if (!wire) {
    wire = {
      path: `/${method.parent.typeName}/${method.name}`,
      serialize: (message) => {
        const bytes = toBinary(method.input, message);
        return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      },
      deserialize: (bytes) => fromBinary(method.output, bytes),
    };
    wireMethods.set(method, wire as unknown as WireMethod<DescMessage, DescMessage>);
  }
  return wire;
}

/** The gRPC path of a method, e.g. /csi.v1.Controller/ControllerExpandVolume (the metrics' method_name). */
export function grpcPath(method: DescMethodUnary): string {
  return wireMethod(method).path;
}

/**
 * The failures that carry no answer of the driver's: the call got no response headers, neither
 * before a status nor as a Trailers-Only status (whose headers grpc-js keeps as the status's
 * metadata; every gRPC response's headers carry content-type). Only these can be a connection
 * that broke under the call; a driver's own status always came with its headers, so it is
 * returned at once (grpc-js-pins.test.ts, "a driver's own status comes with its response headers ...").
 */
const unanswered = new WeakSet<object>();

/** Every call waits for the driver (gRPC's wait-for-ready) until its deadline. */
const WAIT_FOR_READY = { waitForReady: true } as const;
/** Every call reads on after the first message (call-status.ts). */
const CALL_INTERCEPTORS: grpc.Interceptor[] = [oneResponseMessage];

/**
 * The calls waiting on each caller's signal, behind one 'abort' listener per signal: Node's
 * EventTarget walks a signal's listeners to add or remove one, so a listener per call would make
 * N concurrent calls on one signal (a reconcile's, the process's) cost N².
 */
const abortWaiters = new WeakMap<AbortSignal, Set<() => void>>();

/** Runs `cancel` when `signal` aborts, until the returned function is called. */
function whenAborted(signal: AbortSignal, cancel: () => void): () => void {
  let waiters = abortWaiters.get(signal);
  if (!waiters) {
    const calls = new Set<() => void>();
    abortWaiters.set(signal, calls);
    signal.addEventListener(
      'abort',
      () => {
        for (const waiter of calls) waiter();
      },
      { once: true },
    );
    waiters = calls;
  }
  const own = waiters;
  own.add(cancel);
  return () => own.delete(cancel);
}

export interface DriverCallsOptions {
  log: Logger;
  metrics: Metrics;
}

export class DriverCalls {
  private readonly channel: DriverChannel;
  private readonly log: Logger;
  private readonly metrics: Metrics;
  private metricsDriverName = UNKNOWN_DRIVER_NAME;
  // Ends each call not yet ended, with `err`, at once (close()).
  private readonly inFlight = new Set<(err: grpc.ServiceError) => void>();

  constructor(channel: DriverChannel, options: DriverCallsOptions) {
    this.channel = channel;
    this.log = options.log.contextual();
    this.metrics = options.metrics;
  }

  /** The driver_name label of csi_sidecar_operations_seconds from now on. */
  setMetricsDriverName(name: string): void {
    this.metricsDriverName = name || UNKNOWN_DRIVER_NAME;
  }

  /** Idempotent: ends every call in flight Cancelled and closes the channel; later calls fail at once. */
  close(): void {
    // grpc-js workaround: closing a channel leaves a call already sent running to its deadline
    // (grpc-js-pins.test.ts, "closing a channel leaves a call already sent ..."), so we end them.
    for (const end of this.inFlight) end(statusError(grpc.status.CANCELLED, 'CSI connection closed'));
    this.channel.close();
  }

  /**
   * One unary call. The deadline is `timeoutMs` from now (any length: beyond Node's timer limit
   * our own timer ends the call, and the driver is told the whole deadline in grpc-timeout);
   * aborting `signal` cancels the call (gRPC Cancelled). A call made while the driver is away
   * waits for it until the deadline (gRPC's wait-for-ready). A call that failed Unavailable or
   * Internal without any answer from the driver because its connection went away (broken,
   * closed, the driver restarted) is sent once more, on the next connection and within the same
   * deadline: CSI requires every call to be idempotent. A failed attempt's status is the one
   * grpc-go would report (call-status.ts). Every attempt is recorded in
   * csi_sidecar_operations_seconds, and at -v=5 each request and response is logged with secrets
   * stripped.
   */
  async unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    init: MessageInitShape<I>,
    options: CallOptions,
    signal: AbortSignal,
  ): Promise<MessageShape<O>> {
    if (this.channel.state === 'closed') throw new Error(`CSI connection to ${this.channel.target} is closed`);
    if (signal.aborted) throw abortReason(signal);
    const wire = wireMethod(method);
    const request = create(method.input, init);
    const deadline = Date.now() + options.timeoutMs;
    try {
      return await this.attempt(method, wire, request, deadline, signal);
    } catch (err) {
      if (!(await this.connectionBrokeUnder(err, deadline, signal))) throw err;
      return await this.attempt(method, wire, request, deadline, signal);
    }
  }

  /** Did `err` come from a connection that broke under the call, before the driver answered? */
  private async connectionBrokeUnder(err: unknown, deadline: number, signal: AbortSignal): Promise<boolean> {
    if (!LOST_CONNECTION_CODES.has(grpcCodeOf(err) ?? -1) || signal.aborted) return false;
    if (typeof err !== 'object' || err === null || !unanswered.has(err)) return false;
    return await this.channel.connectionWentAway(deadline);
  }

  private async attempt<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    wire: WireMethod<I, O>,
    request: MessageShape<I>,
    deadline: number,
    signal: AbortSignal,
  ): Promise<MessageShape<O>> {
    const verbose = this.log.enabled(5);
    if (verbose) this.log.v(5).info('GRPC call', { method: wire.path, request: stripSecrets(method.input, request) });
    const started = process.hrtime.bigint();
    const record = (err: unknown) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      this.metrics.csiOperations.observe(
        {
          driver_name: this.metricsDriverName,
          method_name: wire.path,
          grpc_status_code: err === undefined ? 'OK' : grpcCodeName(grpcCodeOf(err)),
        },
        seconds,
      );
    };
    try {
      const response = await this.call(wire, request, deadline, signal);
      record(undefined);
      if (verbose) this.log.v(5).info('GRPC response', { response: stripSecrets(method.output, response), err: null });
      return response;
    } catch (err) {
      record(err);
      if (verbose) this.log.v(5).info('GRPC response', { response: {}, err: messageOf(err) });
      throw err;
    }
  }

  private call<I extends DescMessage, O extends DescMessage>(
    wire: WireMethod<I, O>,
    request: MessageShape<I>,
    deadline: number,
    signal: AbortSignal,
  ): Promise<MessageShape<O>> {
    return new Promise<MessageShape<O>>((resolve, reject) => {
      let call: grpc.ClientUnaryCall | undefined;
      let deadlineTimer: { cancel(): void } | undefined;
      let stopWaitingForAbort: (() => void) | undefined;
      let settled = false;
      // Set when the caller's signal cancels the call, so grpc-js's Cancelled is known to be ours.
      let cancelledByCaller = false;
      // Set when the driver's response headers arrive (not for a Trailers-Only status).
      let headersReceived = false;
      const settle = (err: grpc.ServiceError | null, value?: MessageShape<O>) => {
        if (settled) return;
        settled = true;
        stopWaitingForAbort?.();
        deadlineTimer?.cancel();
        this.inFlight.delete(end);
        if (err) reject(err);
        else resolve(value as MessageShape<O>);
      };
      // Ends the call on our side: grpc-js is told to cancel, the caller gets `err` at once.
      const end = (err: grpc.ServiceError) => {
        call?.cancel();
        settle(err);
      };
      const onAbort = () => {
        cancelledByCaller = true;
        call?.cancel();
      };
      const onStatus = (err: grpc.ServiceError | null, value?: MessageShape<O>) => {
        if (!err) return settle(null, value);
        const reported = reportedStatus(err, { deadlineMs: deadline, endedMs: Date.now(), cancelledByCaller });
        if (!headersReceived && !hasResponseHeaders(err.metadata)) unanswered.add(reported);
        settle(reported);
      };
      this.inFlight.add(end);
      stopWaitingForAbort = whenAborted(signal, onAbort);
      // grpc-js workaround: it treats a deadline beyond Node's timer limit as none
      // (grpc-js-pins.test.ts, "a deadline beyond ..."); there our own timer ends the call at its
      // deadline, and the driver still receives the whole grpc-timeout.
      if (deadline - Date.now() > MAX_TIMER_DELAY_MS) {
        deadlineTimer = setLongTimeout(() => end(statusError(grpc.status.DEADLINE_EXCEEDED, DEADLINE_EXCEEDED_DETAILS)), deadline - Date.now());
      }
      call = this.channel.client.makeUnaryRequest<MessageShape<I>, MessageShape<O>>(
        wire.path,
        wire.serialize,
        wire.deserialize,
        request,
        new grpc.Metadata(WAIT_FOR_READY),
        { deadline, interceptors: CALL_INTERCEPTORS },
        onStatus,
      );
      call.on('metadata', () => {
        headersReceived = true;
      });
    });
  }
}

/** A Trailers-Only status: grpc-js keeps the response's headers, content-type among them, as its metadata. */
function hasResponseHeaders(metadata: grpc.Metadata | undefined): boolean {
  return metadata !== undefined && metadata.get('content-type').length > 0;
}
