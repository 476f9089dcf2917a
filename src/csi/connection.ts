// The one gRPC connection to the CSI driver's unix socket: dial and wait until connected, run
// unary calls with a deadline, a signal, metrics and sanitized logging, and watch the channel so
// that a lost connection is reported (and re-established) instead of going unnoticed. The gRPC
// transport is our own (grpc-channel.ts) and so is the protobuf codec (proto/codec.ts); see
// docs/architecture.md, "The CSI layer", for why.
import { messageOf } from '../base/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { AbortError } from '../base/signals.js';
import { grpcCodeName, grpcCodeOf } from './errors.js';
import { GrpcChannel, type ChannelState } from './grpc-channel.js';
import { GrpcStatus, GrpcStatusError } from './grpc-status.js';
import { csiMethod, type CsiMethod } from './proto/load.js';
import { stripSecrets } from './sanitize.js';

export const UNKNOWN_DRIVER_NAME = 'unknown-driver';

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
}

export interface CallOptions {
  /** The deadline of this call; the reference uses --timeout for every call. */
  timeoutMs: number;
}

type StateListener = (state: ConnectionState) => void;

export class CsiConnection {
  readonly target: string;
  private readonly channel: GrpcChannel;
  private readonly log: Logger;
  private readonly metrics: Metrics;
  private metricsDriverName = UNKNOWN_DRIVER_NAME;
  private stateValue: ConnectionState = 'connecting';
  private readonly listeners = new Set<StateListener>();
  // Set once the first connection is up; only then is a drop a "loss" worth reporting.
  private everReady = false;

  private constructor(target: string, socketPath: string, options: CsiConnectionOptions) {
    this.target = target;
    // csi-lib-utils logs through a logr.Logger: JSON lines carry their verbosity.
    this.log = options.log.contextual();
    this.metrics = options.metrics;
    // A local socket comes back quickly: retry every second (gRPC would back off up to 120 s).
    this.channel = new GrpcChannel({ socketPath, reconnectIntervalMs: 1000 });
  }

  /**
   * Dials the socket and waits until the channel is connected. Gives up after connectTimeoutMs
   * with "failed to connect to CSI driver: ...". The returned connection watches for loss.
   */
  static async connect(options: CsiConnectionOptions, signal: AbortSignal): Promise<CsiConnection> {
    const { target, socketPath } = parseCsiAddress(options.address);
    const connection = new CsiConnection(target, socketPath, options);
    try {
      await connection.waitUntilConnected(options.connectTimeoutMs ?? 30_000, options.connectLogIntervalMs ?? 10_000, signal);
    } catch (err) {
      connection.close();
      throw err;
    }
    connection.everReady = true;
    connection.setState('ready');
    connection.channel.onStateChange((state) => connection.onChannelState(state));
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

  /** Idempotent: closes the channel; calls still running end with Unavailable. */
  close(): void {
    if (this.stateValue === 'closed') return;
    this.setState('closed');
    this.channel.close();
  }

  /**
   * One unary call. The deadline is `timeoutMs` from now (any length: the channel's own timer
   * ends the call, and the driver is told the whole deadline in grpc-timeout); aborting `signal`
   * cancels the call (gRPC Cancelled). Every call is recorded in csi_sidecar_operations_seconds,
   * and at -v=5 the request and response are logged with secrets stripped.
   */
  async unary<Req extends object, Res>(method: CsiMethod, request: Req, options: CallOptions, signal: AbortSignal): Promise<Res> {
    if (this.stateValue === 'closed') throw new Error(`CSI connection to ${this.target} is closed`);
    if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new AbortError();
    const definition = csiMethod(method);
    const verbose = this.log.enabled(5);
    if (verbose) this.log.v(5).info('GRPC call', { method, request: stripSecrets(definition.requestTypeName, request) });

    const started = process.hrtime.bigint();
    const record = (err: unknown) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      this.metrics.csiOperations.observe(
        {
          driver_name: this.metricsDriverName,
          method_name: method,
          grpc_status_code: err === undefined ? 'OK' : grpcCodeName(grpcCodeOf(err)),
        },
        seconds,
      );
    };

    try {
      // A request the codec cannot encode is a bug on our side, reported as gRPC does (Internal).
      let body: Buffer;
      try {
        body = definition.encodeRequest(request);
      } catch (err) {
        throw new GrpcStatusError(GrpcStatus.INTERNAL, `Request message serialization failure: ${messageOf(err)}`, {}, { cause: err });
      }
      const bytes = await this.channel.unary(method, body, options.timeoutMs, signal);
      let response: Res;
      try {
        response = definition.decodeResponse(bytes) as Res;
      } catch (err) {
        throw new GrpcStatusError(GrpcStatus.INTERNAL, `Response message parsing error: ${messageOf(err)}`, {}, { cause: err });
      }
      record(undefined);
      if (verbose) this.log.v(5).info('GRPC response', { response: stripSecrets(definition.responseTypeName, response), err: null });
      return response;
    } catch (err) {
      record(err);
      if (verbose) this.log.v(5).info('GRPC response', { response: {}, err: messageOf(err) });
      throw err;
    }
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
    this.channel.connect();
    for (;;) {
      const state = this.channel.state;
      if (state === 'ready') return;
      if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new AbortError();
      const now = Date.now();
      if (now >= deadline) {
        const last = this.channel.lastFailure;
        throw new Error(`failed to connect to CSI driver: no connection to ${this.target} within ${timeoutMs}ms${last ? ` (last error: ${last})` : ''}`);
      }
      if (now >= nextLog) {
        this.log.info('Still connecting', { address: this.target });
        nextLog += logIntervalMs;
      }
      // Short waits keep both the abort and the periodic log responsive.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.max(1, Math.min(deadline, nextLog, Date.now() + 250) - Date.now()));
        const unsubscribe = this.channel.onStateChange(done);
        function done() {
          clearTimeout(timer);
          unsubscribe();
          resolve();
        }
      });
    }
  }

  /**
   * Case "loss": the driver went away (restart, crash, socket removed); we report 'lost' while the
   * channel reconnects, which it tries every second. Case "back": the channel is ready again; we
   * report 'ready' and the client re-checks the driver's name before trusting it.
   */
  private onChannelState(state: ChannelState): void {
    if (this.stateValue === 'closed' || state === 'shutdown') return;
    if (state === 'ready') {
      if (this.stateValue === 'lost') this.log.info('Reconnected to CSI driver', { address: this.target });
      this.setState('ready');
      return;
    }
    if (this.everReady && this.stateValue === 'ready') {
      this.log.warn('Lost connection to CSI driver, reconnecting', { address: this.target });
      this.setState('lost');
    }
  }
}
