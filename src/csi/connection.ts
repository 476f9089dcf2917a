// The one gRPC channel to the CSI driver's unix socket: dial and wait until connected, run unary
// calls with a deadline, a signal, metrics and sanitized logging, and watch the channel so that a
// lost connection is reported (and re-established) instead of going unnoticed. gRPC is
// @grpc/grpc-js; messages are the generated csi.v1 schemas of ./proto/gen, turned into bytes
// with @bufbuild/protobuf. See docs/architecture.md, "The CSI layer".
import * as grpc from '@grpc/grpc-js';
import { create, fromBinary, toBinary, type DescMessage, type DescMethodUnary, type MessageInitShape, type MessageShape } from '@bufbuild/protobuf';
import { messageOf } from '../base/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { MAX_TIMER_DELAY_MS, setLongTimeout } from '../base/long-timer.js';
import { abortReason } from '../base/signals.js';
import { DEADLINE_EXCEEDED_DETAILS, oneResponseMessage, reportedStatus, statusError } from './call-status.js';
import { grpcCodeName, grpcCodeOf } from './errors.js';
import { stripSecrets } from './sanitize.js';
import { socketAccessProblem } from './socket-access.js';

export const UNKNOWN_DRIVER_NAME = 'unknown-driver';

/** gRPC's default receive limit; a larger answer ends the call ResourceExhausted. */
export const MAX_RECEIVE_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * The channel options, each chosen on purpose (everything else is grpc-js's default):
 * - reconnect backoff fixed at 1 s, as csi-lib-utils dials (a local socket comes back quickly;
 *   gRPC would back off up to 120 s);
 * - no idle timeout within a Node timer's reach: csi-lib-utils never lets the connection idle;
 * - gRPC's default 4 MiB receive limit, stated;
 * - a subchannel of our own, so closing this connection closes its socket, whoever else in the
 *   process dials the same path;
 * - no channelz: nothing serves it.
 * No keepalive (csi-lib-utils sets none) and no service config: the only retry is grpc-js's
 * transparent one, for a call the driver refused before processing it.
 */
const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.initial_reconnect_backoff_ms': 1000,
  'grpc.max_reconnect_backoff_ms': 1000,
  'grpc.client_idle_timeout_ms': MAX_TIMER_DELAY_MS,
  'grpc.max_receive_message_length': MAX_RECEIVE_MESSAGE_BYTES,
  'grpc.use_local_subchannel_pool': 1,
  'grpc.enable_channelz': 0,
};

/**
 * How long a failed call waits to see whether its connection is going away. grpc-js can hand a
 * new call a connection that is already broken (a protocol error or a close it has read but not
 * yet acted on): the call fails Unavailable, or Internal when the session was destroyed under
 * it, and the channel leaves READY once the close is handled, within a few turns of the event
 * loop. A driver's own Unavailable or Internal answer leaves the channel READY and is returned
 * after this wait.
 */
const CONNECTION_LOSS_GRACE_MS = 250;
const LOST_CONNECTION_CODES: ReadonlySet<number> = new Set([grpc.status.UNAVAILABLE, grpc.status.INTERNAL]);

export class CsiAddressError extends Error {
  constructor(address: string) {
    super(
      `invalid --csi-address ${JSON.stringify(address)}: only unix domain sockets are supported; ` +
        'use an absolute path (/csi/csi.sock) or unix:///csi/csi.sock',
    );
    this.name = 'CsiAddressError';
  }
}

/**
 * Normalises --csi-address to a gRPC target and its socket path. An absolute path becomes
 * unix://<path>, as in csi-lib-utils. `unix://rel/x.sock` is rejected: gRPC would read "rel" as
 * the authority.
 */
export function parseCsiAddress(address: string): { target: string; socketPath: string } {
  const trimmed = address.trim();
  let path: string;
  if (trimmed.startsWith('/')) path = trimmed;
  else if (trimmed.startsWith('unix://')) path = trimmed.slice('unix://'.length);
  else throw new CsiAddressError(address);
  if (!path.startsWith('/') || path.length < 2) throw new CsiAddressError(address);
  return { target: `unix://${path}`, socketPath: path };
}

export type ConnectionState = 'connecting' | 'ready' | 'lost' | 'closed';

export interface CsiConnectionOptions {
  address: string;
  log: Logger;
  metrics: Metrics;
  /** How long to wait for the first connection (reference: a fixed 30 s). */
  connectTimeoutMs?: number;
  /** How often "still connecting" is logged while waiting (reference: 10 s). */
  connectLogIntervalMs?: number;
  /**
   * How long one connection attempt may take before the channel is dialed anew (gRPC's minimum
   * connect timeout: 20 s). grpc-js waits for the driver's HTTP/2 SETTINGS without a bound, so a
   * peer that accepts the socket and never answers would hold the channel in CONNECTING.
   */
  connectAttemptTimeoutMs?: number;
}

export interface CallOptions {
  /** The deadline of this call; the reference uses --timeout for every call. */
  timeoutMs: number;
}

type StateListener = (state: ConnectionState) => void;

interface InFlightCall {
  readonly client: grpc.Client;
  /** Ends the call now with `err`. */
  end(err: grpc.ServiceError): void;
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

export class CsiConnection {
  readonly target: string;
  // Replaced (closed, and a new one made) when a connection attempt hangs; see replaceChannel().
  private client: grpc.Client;
  private readonly connectAttemptTimeoutMs: number;
  // The channel's current connection attempt, while it is CONNECTING.
  private connecting: { channel: ReturnType<grpc.Client['getChannel']>; sinceMs: number } | undefined;
  // Calls not yet ended, with the client they went out on.
  private readonly inFlight = new Set<InFlightCall>();
  private readonly log: Logger;
  private readonly metrics: Metrics;
  private metricsDriverName = UNKNOWN_DRIVER_NAME;
  private stateValue: ConnectionState = 'connecting';
  private readonly listeners = new Set<StateListener>();
  // Set once the first connection is up; only then is a drop a "loss" worth reporting.
  private everReady = false;

  private constructor(target: string, options: CsiConnectionOptions) {
    this.target = target;
    // csi-lib-utils logs through a logr.Logger: JSON lines carry their verbosity.
    this.log = options.log.contextual();
    this.metrics = options.metrics;
    this.connectAttemptTimeoutMs = options.connectAttemptTimeoutMs ?? 20_000;
    this.client = this.newClient();
  }

  private newClient(): grpc.Client {
    return new grpc.Client(this.target, grpc.credentials.createInsecure(), { ...CHANNEL_OPTIONS, interceptors: [oneResponseMessage] });
  }

  /**
   * A connection attempt that outlived connectAttemptTimeoutMs: close this channel (calls waiting
   * on it fail Unavailable and are sent once more on the new one) and dial on a new channel.
   */
  private replaceChannel(): void {
    this.log.warn('Connection attempt to CSI driver timed out, dialing again', { address: this.target, timeoutMs: this.connectAttemptTimeoutMs });
    const old = this.client;
    this.client = this.newClient();
    // The driver never answered these: Unavailable, so unary() sends them on the new channel.
    for (const call of this.inFlight) if (call.client === old) call.end(unavailable('the connection attempt to the CSI driver timed out'));
    old.close();
    this.client.getChannel().getConnectivityState(true);
  }

  /**
   * Waits until the channel's state is no longer `state`, or `untilMs` passes. A channel stuck
   * CONNECTING past connectAttemptTimeoutMs is replaced.
   */
  private async waitForChange(state: grpc.connectivityState, untilMs: number): Promise<void> {
    const channel = this.client.getChannel();
    if (state !== grpc.connectivityState.CONNECTING) this.connecting = undefined;
    else if (this.connecting?.channel !== channel) this.connecting = { channel, sinceMs: Date.now() };
    const attemptEndsMs = this.connecting ? this.connecting.sinceMs + this.connectAttemptTimeoutMs : Infinity;
    const changed = await new Promise<boolean>((resolve) => {
      try {
        channel.watchConnectivityState(state, Math.min(untilMs, attemptEndsMs), (err) => resolve(!err));
      } catch {
        resolve(true); // the channel is shut down
      }
    });
    if (
      !changed &&
      !this.isClosed() &&
      Date.now() >= attemptEndsMs &&
      channel === this.client.getChannel() &&
      channel.getConnectivityState(false) === grpc.connectivityState.CONNECTING
    ) {
      this.replaceChannel();
    }
  }

  /**
   * Dials the socket and waits until the channel is connected. Gives up after connectTimeoutMs
   * with "failed to connect to CSI driver: ...". The returned connection watches for loss.
   */
  static async connect(options: CsiConnectionOptions, signal: AbortSignal): Promise<CsiConnection> {
    const { target } = parseCsiAddress(options.address);
    const connection = new CsiConnection(target, options);
    try {
      await connection.waitUntilConnected(options.connectTimeoutMs ?? 30_000, options.connectLogIntervalMs ?? 10_000, signal);
    } catch (err) {
      connection.close();
      throw err;
    }
    connection.everReady = true;
    connection.setState('ready');
    void connection.watch();
    return connection;
  }

  get state(): ConnectionState {
    return this.stateValue;
  }

  /** Calls listener on every state change; returns an unsubscribe function. */
  onStateChange(listener: StateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The driver_name label of csi_sidecar_operations_seconds from now on. */
  setMetricsDriverName(name: string): void {
    this.metricsDriverName = name || UNKNOWN_DRIVER_NAME;
  }

  /** Idempotent: closes the channel; calls in flight end Cancelled, later calls fail at once. */
  close(): void {
    if (this.stateValue === 'closed') return;
    this.setState('closed');
    for (const call of this.inFlight) call.end(statusError(grpc.status.CANCELLED, 'CSI connection closed'));
    this.client.close();
  }

  /**
   * One unary call. The deadline is `timeoutMs` from now (any length: beyond Node's timer limit
   * our own timer ends the call, and the driver is told the whole deadline in grpc-timeout);
   * aborting `signal` cancels the call (gRPC Cancelled). A call made while the driver is away
   * waits for it until the deadline (gRPC's wait-for-ready). A call that fails (Unavailable or
   * Internal) because its connection went away (broken, closed, the driver restarted) is sent once more,
   * on the next connection and within the same deadline: the driver produced no answer, and
   * CSI requires every call to be idempotent. A failed attempt's status is the one grpc-go
   * would report (call-status.ts). Every attempt is recorded in csi_sidecar_operations_seconds,
   * and at -v=5 each request and response is logged with secrets stripped.
   */
  async unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    init: MessageInitShape<I>,
    options: CallOptions,
    signal: AbortSignal,
  ): Promise<MessageShape<O>> {
    if (this.stateValue === 'closed') throw new Error(`CSI connection to ${this.target} is closed`);
    if (signal.aborted) throw abortReason(signal);
    const wire = wireMethod(method);
    const request = create(method.input, init);
    const deadline = Date.now() + options.timeoutMs;
    try {
      return await this.attempt(method, wire, request, deadline, signal);
    } catch (err) {
      if (!LOST_CONNECTION_CODES.has(grpcCodeOf(err) ?? -1) || signal.aborted || !(await this.connectionWentAway())) throw err;
      return await this.attempt(method, wire, request, deadline, signal);
    }
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

  /**
   * After a call failed Unavailable or Internal: is its connection going away? Yes once the channel is not
   * READY; a channel that stays READY through the grace period means the driver itself answered.
   */
  private connectionWentAway(): Promise<boolean> {
    const channel = this.client.getChannel();
    if (this.isClosed()) return Promise.resolve(false);
    if (channel.getConnectivityState(false) !== grpc.connectivityState.READY) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      channel.watchConnectivityState(grpc.connectivityState.READY, Date.now() + CONNECTION_LOSS_GRACE_MS, (err) => {
        resolve(!err && !this.isClosed() && channel.getConnectivityState(false) !== grpc.connectivityState.READY);
      });
    });
  }

  private call<I extends DescMessage, O extends DescMessage>(
    wire: WireMethod<I, O>,
    request: MessageShape<I>,
    deadline: number,
    signal: AbortSignal,
  ): Promise<MessageShape<O>> {
    return new Promise<MessageShape<O>>((resolve, reject) => {
      const client = this.client;
      let call: grpc.ClientUnaryCall | undefined;
      let deadlineTimer: { cancel(): void } | undefined;
      let settled = false;
      // Set when the caller's signal cancels the call, so grpc-js's Cancelled is known to be ours.
      let cancelledByCaller = false;
      const settle = (err: grpc.ServiceError | null, value?: MessageShape<O>) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        deadlineTimer?.cancel();
        this.inFlight.delete(inFlight);
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
      // When the channel is replaced or closed, a call still on it is ended by us (grpc-js does
      // not end a call that waits for a connection on a closed channel).
      const inFlight: InFlightCall = { client, end };
      this.inFlight.add(inFlight);
      signal.addEventListener('abort', onAbort, { once: true });
      // Our own timer ends the call at its deadline whatever grpc-js does: grpc-js treats a
      // deadline beyond Node's timer limit as none (the driver still receives the whole
      // grpc-timeout).
      deadlineTimer = setLongTimeout(() => end(statusError(grpc.status.DEADLINE_EXCEEDED, DEADLINE_EXCEEDED_DETAILS)), deadline - Date.now());
      call = client.makeUnaryRequest<MessageShape<I>, MessageShape<O>>(
        wire.path,
        wire.serialize,
        wire.deserialize,
        request,
        new grpc.Metadata({ waitForReady: true }),
        { deadline },
        (err, value) => settle(err && reportedStatus(err, { deadlineMs: deadline, endedMs: Date.now(), cancelledByCaller }), value),
      );
    });
  }

  private isClosed(): boolean {
    return this.stateValue === 'closed';
  }

  private setState(state: ConnectionState): void {
    if (this.stateValue === state) return;
    if (this.stateValue === 'closed') return;
    this.stateValue = state;
    for (const listener of this.listeners) {
      try {
        listener(state);
      } catch (err) {
        this.log.error('CSI connection state listener failed', { err });
      }
    }
  }

  private async waitUntilConnected(timeoutMs: number, logIntervalMs: number, signal: AbortSignal): Promise<void> {
    this.log.v(5).info('Connecting', { address: this.target });
    const started = Date.now();
    const deadline = started + timeoutMs;
    let nextLog = started + logIntervalMs;
    for (;;) {
      const state = this.client.getChannel().getConnectivityState(true);
      if (state === grpc.connectivityState.READY) return;
      if (signal.aborted) throw abortReason(signal);
      const now = Date.now();
      if (now >= deadline) {
        const problem = this.socketProblem();
        throw new Error(
          `failed to connect to CSI driver: no connection to ${this.target} within ${timeoutMs}ms ` +
            `(channel state ${grpc.connectivityState[state]})${problem === undefined ? '' : `: ${problem}`}`,
        );
      }
      if (now >= nextLog) {
        this.log.info('Still connecting', { address: this.target });
        const problem = this.socketProblem();
        if (problem !== undefined) this.log.warn('CSI driver socket cannot be dialled', { address: this.target, problem });
        nextLog += logIntervalMs;
      }
      // Short waits keep both the abort and the periodic log responsive.
      await this.waitForChange(state, Math.min(deadline, nextLog, now + 250));
    }
  }

  /** What visibly keeps the socket from being dialled (missing, not a socket, not writable for us). */
  private socketProblem(): string | undefined {
    return this.target.startsWith('unix://') ? socketAccessProblem(this.target.slice('unix://'.length)) : undefined;
  }

  /**
   * Runs for the life of the connection. Case "loss": the driver went away (restart, crash,
   * socket removed, a broken connection); we report 'lost' and ask the channel to connect again,
   * which it tries every second. Case "back": the channel is READY again; we report 'ready' and
   * the client re-checks the driver's name before trusting it. Case "stuck": an attempt that
   * never completes is abandoned for a new channel (waitForChange).
   */
  private async watch(): Promise<void> {
    let current = this.client.getChannel().getConnectivityState(false);
    while (!this.isClosed()) {
      await this.waitForChange(current, Infinity);
      if (this.isClosed()) return;
      current = this.client.getChannel().getConnectivityState(false);
      if (current === grpc.connectivityState.SHUTDOWN) return;
      if (current === grpc.connectivityState.READY) {
        if (this.stateValue === 'lost') this.log.info('Reconnected to CSI driver', { address: this.target });
        this.setState('ready');
        continue;
      }
      if (this.everReady && this.stateValue === 'ready') {
        this.log.warn('Lost connection to CSI driver, reconnecting', { address: this.target });
        this.setState('lost');
      }
      // A lost connection parks the channel in IDLE; connect again now, not at the next call.
      if (current === grpc.connectivityState.IDLE) current = this.client.getChannel().getConnectivityState(true);
    }
  }
}

function unavailable(details: string): grpc.ServiceError {
  return statusError(grpc.status.UNAVAILABLE, details);
}
