// The one gRPC channel to the CSI driver's unix socket: dial and wait until connected, run unary
// calls with a deadline, a signal, metrics and sanitized logging, and watch the channel so that a
// lost connection is reported (and re-established) instead of going unnoticed.
import { messageOf } from '../base/errors.js';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { TimerHandle } from '../base/clock.js';
import { MAX_TIMER_DELAY_MS, setLongTimeout } from '../base/long-timer.js';
import { AbortError } from '../base/signals.js';
import { grpcCodeName, grpcCodeOf } from './errors.js';
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
 * Normalises --csi-address to a grpc-js target. An absolute path becomes unix://<path>, as in
 * csi-lib-utils. `unix://rel/x.sock` is rejected: gRPC would read "rel" as the authority.
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
  private readonly client: grpc.Client;
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
    this.client = new grpc.Client(target, grpc.credentials.createInsecure(), {
      // A local socket comes back quickly; grpc-js would otherwise back off up to 120 s.
      'grpc.initial_reconnect_backoff_ms': 1000,
      'grpc.max_reconnect_backoff_ms': 1000,
      // Effectively no idle timeout, and never above what a Node timer can hold.
      'grpc.client_idle_timeout_ms': MAX_TIMER_DELAY_MS,
      'grpc.enable_channelz': 0,
    });
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

  /** Idempotent: closes the channel; calls still running end with Cancelled/Unavailable. */
  close(): void {
    if (this.stateValue === 'closed') return;
    this.setState('closed');
    this.client.close();
  }

  /**
   * One unary call. The deadline is `timeoutMs` from now; aborting `signal` cancels the call
   * (gRPC Cancelled). Every call is recorded in csi_sidecar_operations_seconds, and at -v=5 the
   * request and response are logged with secrets stripped.
   */
  async unary<Req extends object, Res>(method: CsiMethod, request: Req, options: CallOptions, signal: AbortSignal): Promise<Res> {
    if (this.stateValue === 'closed') throw new Error(`CSI connection to ${this.target} is closed`);
    if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new AbortError();
    const definition = csiMethod(method);
    const verbose = this.log.enabled(5);
    const requestType = definition.requestTypeName;
    const responseType = definition.responseTypeName;
    if (verbose) this.log.v(5).info('GRPC call', { method, request: stripSecrets(requestType, request) });

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
      const response = await new Promise<Res>((resolve, reject) => {
        let call: grpc.ClientUnaryCall | undefined;
        const onAbort = () => call?.cancel();
        // grpc-js enforces a deadline up to Node's timer limit itself and treats a later one as
        // infinite (the driver still receives the whole grpc-timeout); beyond that limit our own
        // long timer ends the call at the deadline, reported as DeadlineExceeded like grpc-js.
        let deadlineTimer: TimerHandle | undefined;
        let deadlinePassed = false;
        call = this.client.makeUnaryRequest<Req, Res>(
          method,
          definition.encodeRequest as (value: Req) => Buffer,
          definition.decodeResponse as unknown as (value: Buffer) => Res,
          request,
          new grpc.Metadata(),
          { deadline: Date.now() + options.timeoutMs },
          (err, value) => {
            signal.removeEventListener('abort', onAbort);
            deadlineTimer?.cancel();
            if (err && deadlinePassed) reject(deadlineExceeded(options.timeoutMs, err));
            else if (err) reject(err);
            else resolve(value as Res);
          },
        );
        if (options.timeoutMs > MAX_TIMER_DELAY_MS) {
          deadlineTimer = setLongTimeout(() => {
            deadlinePassed = true;
            call?.cancel();
          }, options.timeoutMs);
        }
        signal.addEventListener('abort', onAbort, { once: true });
      });
      record(undefined);
      if (verbose) this.log.v(5).info('GRPC response', { response: stripSecrets(responseType, response), err: null });
      return response;
    } catch (err) {
      record(err);
      if (verbose) this.log.v(5).info('GRPC response', { response: {}, err: messageOf(err) });
      throw err;
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

  private channelState(tryToConnect: boolean): grpc.connectivityState {
    return this.client.getChannel().getConnectivityState(tryToConnect);
  }

  private async waitUntilConnected(timeoutMs: number, logIntervalMs: number, signal: AbortSignal): Promise<void> {
    this.log.v(5).info('Connecting', { address: this.target });
    const started = Date.now();
    const deadline = started + timeoutMs;
    let nextLog = started + logIntervalMs;
    for (;;) {
      const state = this.channelState(true);
      if (state === grpc.connectivityState.READY) return;
      if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new AbortError();
      const now = Date.now();
      if (now >= deadline) {
        throw new Error(
          `failed to connect to CSI driver: no connection to ${this.target} within ${timeoutMs}ms ` +
            `(channel state ${grpc.connectivityState[state]})`,
        );
      }
      if (now >= nextLog) {
        this.log.info('Still connecting', { address: this.target });
        nextLog += logIntervalMs;
      }
      // Short waits keep both the abort and the periodic log responsive.
      await new Promise<void>((resolve) => {
        this.client.getChannel().watchConnectivityState(state, Math.min(deadline, Date.now() + 250), () => resolve());
      });
    }
  }

  /**
   * Runs for the life of the connection. Case "loss": the driver went away (restart, crash,
   * socket removed); we report 'lost' and ask the channel to reconnect, which it retries every
   * second. Case "back": the channel is READY again; we report 'ready' and the client re-checks
   * the driver's name before trusting it.
   */
  private async watch(): Promise<void> {
    const channel = this.client.getChannel();
    let current = channel.getConnectivityState(false);
    while (this.stateValue !== 'closed') {
      await new Promise<void>((resolve) => {
        try {
          channel.watchConnectivityState(current, Infinity, () => resolve());
        } catch {
          resolve(); // the channel is shut down
        }
      });
      if (this.isClosed()) return;
      current = channel.getConnectivityState(false);
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
      // pick_first parks the channel in IDLE after a drop; ask it to connect again.
      if (current === grpc.connectivityState.IDLE) current = channel.getConnectivityState(true);
    }
  }
}

/** A grpc-js style status error for a deadline our own timer enforced. */
function deadlineExceeded(timeoutMs: number, cause: unknown): grpc.ServiceError {
  const details = `Deadline exceeded after ${timeoutMs}ms`;
  return Object.assign(new Error(`${grpc.status.DEADLINE_EXCEEDED} DEADLINE_EXCEEDED: ${details}`, { cause }), {
    code: grpc.status.DEADLINE_EXCEEDED,
    details,
    metadata: new grpc.Metadata(),
  });
}
