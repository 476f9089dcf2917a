// The one gRPC channel to the CSI driver's unix socket and its state: dial and wait until
// connected, watch it so that a lost connection is reported and dialled again at once, give up a
// connection attempt that hangs, and tell, after a call failed without an answer, whether its
// connection is going away. The calls made on it are driver-calls.ts. gRPC is @grpc/grpc-js;
// each of its behaviours worked around here is pinned by grpc-js-pins.test.ts. See
// docs/architecture.md, "The CSI layer".
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../observability/log/logger.js';
import { MAX_TIMER_DELAY_MS } from '../base/long-timer.js';
import { abortReason } from '../base/signals.js';
import { socketAccessProblem } from './socket-access.js';

/** gRPC's default receive limit; a larger answer ends the call ResourceExhausted. */
export const MAX_RECEIVE_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * The channel options, each chosen on purpose (everything else is grpc-js's default):
 * - reconnect backoff fixed at 1 s, as csi-lib-utils dials (a local socket comes back quickly;
 *   gRPC would back off up to 120 s);
 * - no idle timeout within a Node timer's reach: csi-lib-utils never lets the connection idle;
 * - gRPC's default 4 MiB receive limit, stated;
 * - a subchannel of our own, so closing this channel closes its socket, whoever else in the
 *   process dials the same path;
 * - no channelz: nothing serves it.
 * No keepalive (csi-lib-utils sets none) and no service config: the only retry is grpc-js's
 * transparent one, for a call the driver refused before processing it.
 */
export const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.initial_reconnect_backoff_ms': 1000,
  'grpc.max_reconnect_backoff_ms': 1000,
  'grpc.client_idle_timeout_ms': MAX_TIMER_DELAY_MS,
  'grpc.max_receive_message_length': MAX_RECEIVE_MESSAGE_BYTES,
  'grpc.use_local_subchannel_pool': 1,
  'grpc.enable_channelz': 0,
};

/**
 * How long, after a call failed Unavailable or Internal without an answer from the driver, to
 * wait for the channel to leave READY. grpc-js can hand a new call a connection whose protocol
 * error it has read but not yet acted on, and reports the call's failure while the channel still
 * reads READY; the channel leaves READY a few turns of the event loop later. A channel still READY
 * after this wait means the connection is fine (the driver reset the call itself).
 */
export const CONNECTION_LOSS_GRACE_MS = 250;

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

export interface DriverChannelOptions {
  address: string;
  log: Logger;
  /** How long to wait for the first connection (reference: a fixed 30 s). */
  connectTimeoutMs?: number;
  /** How often "still connecting" is logged while waiting (reference: 10 s). */
  connectLogIntervalMs?: number;
  /**
   * How long one connection attempt may take before the channel is dialled anew (gRPC's minimum
   * connect timeout: 20 s). grpc-js waits for the driver's HTTP/2 SETTINGS without a bound, so a
   * peer that accepts the socket and never answers would hold the channel in CONNECTING.
   */
  connectAttemptTimeoutMs?: number;
  /** How long to wait for a failing connection to leave READY; tests only. */
  connectionLossGraceMs?: number;
}

type StateListener = (state: ConnectionState) => void;

export class DriverChannel {
  readonly target: string;
  // Replaced (closed, and a new one made) when a connection attempt hangs; see replaceClient().
  private currentClient: grpc.Client;
  private readonly connectAttemptTimeoutMs: number;
  private readonly connectionLossGraceMs: number;
  // The channel's current connection attempt, while it is CONNECTING.
  private connecting: { channel: ReturnType<grpc.Client['getChannel']>; sinceMs: number } | undefined;
  private readonly log: Logger;
  private stateValue: ConnectionState = 'connecting';
  private readonly listeners = new Set<StateListener>();
  // Set once the first connection is up; only then is a drop a "loss" worth reporting.
  private everReady = false;

  private constructor(target: string, options: DriverChannelOptions) {
    this.target = target;
    // csi-lib-utils logs through a logr.Logger: JSON lines carry their verbosity.
    this.log = options.log.contextual();
    this.connectAttemptTimeoutMs = options.connectAttemptTimeoutMs ?? 20_000;
    this.connectionLossGraceMs = options.connectionLossGraceMs ?? CONNECTION_LOSS_GRACE_MS;
    this.currentClient = newClient(target);
  }

  /**
   * Dials the socket and waits until the channel is connected. Gives up after connectTimeoutMs
   * with "failed to connect to CSI driver: ...". The returned channel watches for loss.
   */
  static async connect(options: DriverChannelOptions, signal: AbortSignal): Promise<DriverChannel> {
    const { target } = parseCsiAddress(options.address);
    const channel = new DriverChannel(target, options);
    try {
      await channel.waitUntilConnected(options.connectTimeoutMs ?? 30_000, options.connectLogIntervalMs ?? 10_000, signal);
    } catch (err) {
      channel.close();
      throw err;
    }
    channel.everReady = true;
    channel.setState('ready');
    void channel.watch();
    return channel;
  }

  get state(): ConnectionState {
    return this.stateValue;
  }

  /** The grpc-js client that new calls go out on (a new one after a hung attempt). */
  get client(): grpc.Client {
    return this.currentClient;
  }

  /** Calls listener on every state change; returns an unsubscribe function. */
  onStateChange(listener: StateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Idempotent: closes the channel. grpc-js fails the calls still waiting for a connection
   * (Unavailable); the caller ends the calls already sent (driver-calls.ts).
   */
  close(): void {
    if (this.stateValue === 'closed') return;
    this.setState('closed');
    this.currentClient.close();
  }

  /**
   * After a call failed Unavailable or Internal with no answer from the driver: is its connection
   * going away? Yes once the channel is not READY; a channel that stays READY through the grace
   * (or until `untilMs`, the call's deadline, if that is sooner) means the connection is fine.
   */
  connectionWentAway(untilMs: number): Promise<boolean> {
    const channel = this.currentClient.getChannel();
    if (this.isClosed()) return Promise.resolve(false);
    if (channel.getConnectivityState(false) !== grpc.connectivityState.READY) return Promise.resolve(true);
    // grpc-js workaround: it fails a call on a connection it has not yet seen break while the
    // channel still reads READY (grpc-js-pins.test.ts, "a new call on a connection that a
    // protocol error just broke ...").
    return new Promise<boolean>((resolve) => {
      channel.watchConnectivityState(grpc.connectivityState.READY, Math.min(untilMs, Date.now() + this.connectionLossGraceMs), (err) => {
        resolve(!err && !this.isClosed() && channel.getConnectivityState(false) !== grpc.connectivityState.READY);
      });
    });
  }

  /**
   * A connection attempt that outlived connectAttemptTimeoutMs: close this client and dial on a
   * new one. grpc-js fails the calls waiting on the old one Unavailable (grpc-js-pins.test.ts,
   * "closing a channel fails a call still waiting ..."), and driver-calls.ts sends them once more.
   */
  private replaceClient(): void {
    this.log.warn('Connection attempt to CSI driver timed out, dialing again', { address: this.target, timeoutMs: this.connectAttemptTimeoutMs });
    const old = this.currentClient;
    this.currentClient = newClient(this.target);
    old.close();
    this.currentClient.getChannel().getConnectivityState(true);
  }

  /**
   * Waits until the channel's state is no longer `state`, or `untilMs` passes. A channel stuck
   * CONNECTING past connectAttemptTimeoutMs is replaced.
   */
  private async waitForChange(state: grpc.connectivityState, untilMs: number): Promise<void> {
    const channel = this.currentClient.getChannel();
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
      channel === this.currentClient.getChannel() &&
      channel.getConnectivityState(false) === grpc.connectivityState.CONNECTING
    ) {
      // grpc-js workaround: it waits for the driver's SETTINGS without a bound
      // (grpc-js-pins.test.ts, "a connection attempt ...").
      this.replaceClient();
    }
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
      const state = this.currentClient.getChannel().getConnectivityState(true);
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
   * Runs for the life of the channel. Case "loss": the driver went away (restart, crash, socket
   * removed, a broken connection); we report 'lost' and ask the channel to connect again, which
   * it tries every second. Case "back": the channel is READY again; we report 'ready' and the
   * client re-checks the driver's name before trusting it. Case "stuck": an attempt that never
   * completes is abandoned for a new client (waitForChange).
   */
  private async watch(): Promise<void> {
    let current = this.currentClient.getChannel().getConnectivityState(false);
    while (!this.isClosed()) {
      await this.waitForChange(current, Infinity);
      if (this.isClosed()) return;
      current = this.currentClient.getChannel().getConnectivityState(false);
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
      // grpc-js workaround: a lost connection parks the channel in IDLE until the next call
      // (grpc-js-pins.test.ts, "a lost connection ..."); dial now instead.
      if (current === grpc.connectivityState.IDLE) current = this.currentClient.getChannel().getConnectivityState(true);
    }
  }
}

function newClient(target: string): grpc.Client {
  return new grpc.Client(target, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
}
