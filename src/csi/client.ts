// The CsiClient port the controllers use, and its gRPC implementation: the calls of driver-calls.ts
// on the channel of driver-channel.ts, with the generated csi.v1 messages (proto/gen). Startup follows the
// reference: connect (30 s), Probe until ready, GetPluginInfo for the driver name. Unlike the
// reference, losing the connection later is not fatal: the channel reconnects, and the driver's
// name is checked again before the client trusts it; only a different or empty name is fatal
// (reported through onFatal so the app can exit).
import { messageOf } from '../base/errors.js';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { Logger } from '../observability/log/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { Backoff } from '../base/backoff.js';
import { abortReason, AbortError, sleep } from '../base/signals.js';
import { DriverChannel, type ConnectionState } from './driver-channel.js';
import { DriverCalls } from './driver-calls.js';
import { classifyCsiError, CsiError, GRPC_CODE_NAMES, grpcCodeOf, type CsiOperation } from './errors.js';
import type { DescMessage, DescMethodUnary, MessageInitShape, MessageShape } from '@bufbuild/protobuf';
import {
  Controller,
  ControllerServiceCapability_RPC_Type as ControllerRpc,
  Identity,
  Node,
  NodeServiceCapability_RPC_Type as NodeRpc,
  PluginCapability_Service_Type as PluginService,
  PluginCapability_VolumeExpansion_Type as VolumeExpansion,
  VolumeCapability_AccessMode_Mode as AccessMode,
  type VolumeCapabilitySchema,
} from './proto/gen/csi_pb.js';

/** The csi.v1 VolumeCapability.AccessMode.Mode values, by name. */
export type AccessModeName =
  | 'UNKNOWN'
  | 'SINGLE_NODE_WRITER'
  | 'SINGLE_NODE_READER_ONLY'
  | 'MULTI_NODE_READER_ONLY'
  | 'MULTI_NODE_SINGLE_WRITER'
  | 'MULTI_NODE_MULTI_WRITER'
  | 'SINGLE_NODE_SINGLE_WRITER'
  | 'SINGLE_NODE_MULTI_WRITER';

/** The volume capability sent with an expansion: a block or a mounted volume, and its access mode. */
export type VolumeCapability =
  | { accessType: 'block'; accessMode: AccessModeName }
  | { accessType: 'mount'; fsType: string; mountFlags: readonly string[]; volumeMountGroup?: string; accessMode: AccessModeName };

export type VolumeExpansionMode = 'online' | 'offline' | 'unknown';

export interface PluginInfo {
  name: string;
  vendorVersion: string;
}

export interface PluginCapabilities {
  controllerService: boolean;
  /** The plugin VolumeExpansion capability; 'unknown' when the driver reports none. */
  volumeExpansion: VolumeExpansionMode;
}

export interface ControllerCapabilities {
  expandVolume: boolean;
  modifyVolume: boolean;
  singleNodeMultiWriter: boolean;
}

export interface NodeCapabilities {
  expandVolume: boolean;
}

export interface ExpandRequest {
  volumeId: string;
  requiredBytes: bigint;
  secrets: Readonly<Record<string, string>>;
  capability: VolumeCapability | null;
}

export interface ExpandResult {
  capacityBytes: bigint;
  nodeExpansionRequired: boolean;
}

export interface ModifyRequest {
  volumeId: string;
  secrets: Readonly<Record<string, string>>;
  mutableParameters: Readonly<Record<string, string>>;
}

/** One call's settings. */
export interface CsiCallOptions {
  /** This call's deadline (--resize-timeout, --modify-timeout); without it, the client's --timeout. */
  readonly timeoutMs?: number;
}

/**
 * The driver as the controllers see it. Every method throws a CsiError (see errors.ts) whose
 * `failure` says how to retry; each call has its own or the client's timeout and ends when `signal` aborts.
 */
export interface CsiClient {
  readonly driverName: string;
  getPluginCapabilities(signal: AbortSignal, options?: CsiCallOptions): Promise<PluginCapabilities>;
  getControllerCapabilities(signal: AbortSignal, options?: CsiCallOptions): Promise<ControllerCapabilities>;
  getNodeCapabilities(signal: AbortSignal, options?: CsiCallOptions): Promise<NodeCapabilities>;
  expandVolume(request: ExpandRequest, signal: AbortSignal, options?: CsiCallOptions): Promise<ExpandResult>;
  modifyVolume(request: ModifyRequest, signal: AbortSignal, options?: CsiCallOptions): Promise<void>;
}

export interface DriverCapabilities extends PluginCapabilities {
  controllerExpand: boolean;
  controllerModify: boolean;
  singleNodeMultiWriter: boolean;
  /** Asked only when controller expansion is absent (as the reference does); otherwise undefined. */
  nodeExpand: boolean | undefined;
}

/**
 * Everything startup needs to pick a resizer and a modifier, with the reference's messages for
 * failed queries. Deciding what is fatal (no controller service, neither resize nor modify) is
 * the caller's.
 */
export async function discoverCapabilities(client: CsiClient, signal: AbortSignal, options?: CsiCallOptions): Promise<DriverCapabilities> {
  const plugin = await client.getPluginCapabilities(signal, options).catch((err: unknown) => {
    throw new Error(`failed to check if plugin supports controller service: ${messageOf(err)}`, { cause: err });
  });
  const controller = await client.getControllerCapabilities(signal, options).catch((err: unknown) => {
    throw new Error(`failed to check if plugin supports controller resize or modify: ${messageOf(err)}`, { cause: err });
  });
  let nodeExpand: boolean | undefined;
  if (!controller.expandVolume) {
    const node = await client.getNodeCapabilities(signal, options).catch((err: unknown) => {
      throw new Error(`failed to check if plugin supports node resize: ${messageOf(err)}`, { cause: err });
    });
    nodeExpand = node.expandVolume;
  }
  return {
    ...plugin,
    controllerExpand: controller.expandVolume,
    controllerModify: controller.modifyVolume,
    singleNodeMultiWriter: controller.singleNodeMultiWriter,
    nodeExpand,
  };
}

export interface GrpcCsiClientOptions {
  /** --csi-address: an absolute path or unix:///path. */
  address: string;
  /** --timeout: the deadline of every call that sets none of its own. */
  timeoutMs: number;
  log: Logger;
  metrics: Metrics;
  connectTimeoutMs?: number;
  connectLogIntervalMs?: number;
  /** See DriverChannelOptions.connectAttemptTimeoutMs. */
  connectAttemptTimeoutMs?: number;
  /** See DriverChannelOptions.connectionLossGraceMs; tests only. */
  connectionLossGraceMs?: number;
  probeIntervalMs?: number;
}

type FatalListener = (err: Error) => void;

/** GetPluginInfo failed or named no driver at startup (upstream: "Get driver name failed"). */
export class DriverNameError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DriverNameError';
  }
}

export class GrpcCsiClient implements CsiClient {
  private readonly channel: DriverChannel;
  private readonly calls: DriverCalls;
  private readonly options: GrpcCsiClientOptions;
  private readonly log: Logger;
  private name = '';
  private readonly fatalListeners = new Set<FatalListener>();
  private fatalError: Error | undefined;
  // Aborted by close(); ends background re-checks.
  private readonly lifetime = new AbortController();
  private recheckRunning = false;

  private constructor(channel: DriverChannel, options: GrpcCsiClientOptions) {
    this.channel = channel;
    this.calls = new DriverCalls(channel, options);
    this.options = options;
    this.log = options.log;
  }

  /**
   * Connects, waits for the driver to be ready and learns its name. Rejects with the reference's
   * messages: "failed to connect to CSI driver: ...", "CSI driver probe failed: ...",
   * "driver name is empty".
   */
  static async start(options: GrpcCsiClientOptions, signal: AbortSignal): Promise<GrpcCsiClient> {
    const channel = await DriverChannel.connect(options, signal);
    const client = new GrpcCsiClient(channel, options);
    try {
      await client.waitForProbe(signal);
      let info: { name: string };
      try {
        info = await client.getPluginInfo(signal);
      } catch (err) {
        throw new DriverNameError(messageOf(err), { cause: err });
      }
      if (info.name === '') throw new DriverNameError('driver name is empty');
      client.name = info.name;
    } catch (err) {
      client.close();
      throw err;
    }
    channel.onStateChange((state) => client.onConnectionState(state));
    options.log.v(2).info('CSI driver name', { driverName: client.name });
    return client;
  }

  get driverName(): string {
    return this.name;
  }

  get connectionState(): ConnectionState {
    return this.channel.state;
  }

  /** cb runs once the client can no longer be trusted (the driver's name changed); the app should exit. */
  onFatal(cb: FatalListener): () => void {
    // A fatal error seen before anyone listened (e.g. during startup) is not lost.
    if (this.fatalError) {
      cb(this.fatalError);
      return () => {};
    }
    this.fatalListeners.add(cb);
    return () => this.fatalListeners.delete(cb);
  }

  /** Subscribe to connection state changes ('ready' | 'lost' | 'closed'). */
  onConnectionStateChange(cb: (state: ConnectionState) => void): () => void {
    return this.channel.onStateChange(cb);
  }

  /** The driver_name label of the operations metric; the reference sets it once HTTP is served. */
  setMetricsDriverName(name: string): void {
    this.calls.setMetricsDriverName(name);
  }

  close(): void {
    this.lifetime.abort(new AbortError('CSI client closed'));
    this.calls.close();
  }

  /** One Probe: true when ready (an absent `ready` counts as ready). */
  async probe(signal: AbortSignal): Promise<boolean> {
    const res = await this.call(Identity.method.probe, {}, signal);
    return res.ready ?? true;
  }

  async getPluginInfo(signal: AbortSignal): Promise<PluginInfo> {
    const res = await this.call(Identity.method.getPluginInfo, {}, signal);
    return { name: res.name, vendorVersion: res.vendorVersion };
  }

  async getPluginCapabilities(signal: AbortSignal, options?: CsiCallOptions): Promise<PluginCapabilities> {
    const res = await this.call(Identity.method.getPluginCapabilities, {}, signal, 'expand', options);
    let controllerService = false;
    let volumeExpansion: VolumeExpansionMode = 'unknown';
    for (const { type: cap } of res.capabilities) {
      if (cap.case === 'service' && cap.value.type === PluginService.CONTROLLER_SERVICE) controllerService = true;
      if (cap.case !== 'volumeExpansion') continue;
      if (cap.value.type === VolumeExpansion.ONLINE) volumeExpansion = 'online';
      // ONLINE implies OFFLINE in the spec, so ONLINE wins when both are listed.
      else if (cap.value.type === VolumeExpansion.OFFLINE && volumeExpansion === 'unknown') volumeExpansion = 'offline';
    }
    return { controllerService, volumeExpansion };
  }

  async getControllerCapabilities(signal: AbortSignal, options?: CsiCallOptions): Promise<ControllerCapabilities> {
    const res = await this.call(Controller.method.controllerGetCapabilities, {}, signal, 'expand', options);
    const types = new Set(res.capabilities.map(({ type: cap }) => (cap.case === 'rpc' ? cap.value.type : undefined)));
    return {
      expandVolume: types.has(ControllerRpc.EXPAND_VOLUME),
      modifyVolume: types.has(ControllerRpc.MODIFY_VOLUME),
      singleNodeMultiWriter: types.has(ControllerRpc.SINGLE_NODE_MULTI_WRITER),
    };
  }

  async getNodeCapabilities(signal: AbortSignal, options?: CsiCallOptions): Promise<NodeCapabilities> {
    const res = await this.call(Node.method.nodeGetCapabilities, {}, signal, 'expand', options);
    return { expandVolume: res.capabilities.some(({ type: cap }) => cap.case === 'rpc' && cap.value.type === NodeRpc.EXPAND_VOLUME) };
  }

  async expandVolume(request: ExpandRequest, signal: AbortSignal, options?: CsiCallOptions): Promise<ExpandResult> {
    checkRequiredBytes(request.requiredBytes);
    const res = await this.call(
      Controller.method.controllerExpandVolume,
      {
        volumeId: request.volumeId,
        capacityRange: { requiredBytes: request.requiredBytes },
        secrets: { ...request.secrets },
        ...(request.capability ? { volumeCapability: volumeCapabilityMessage(request.capability) } : {}),
      },
      signal,
      'expand',
      options,
    );
    return { capacityBytes: res.capacityBytes, nodeExpansionRequired: res.nodeExpansionRequired };
  }

  async modifyVolume(request: ModifyRequest, signal: AbortSignal, options?: CsiCallOptions): Promise<void> {
    await this.call(
      Controller.method.controllerModifyVolume,
      {
        volumeId: request.volumeId,
        secrets: { ...request.secrets },
        mutableParameters: { ...request.mutableParameters },
      },
      signal,
      'modify',
      options,
    );
  }

  private async call<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    request: MessageInitShape<I>,
    signal: AbortSignal,
    operation: CsiOperation = 'expand',
    options?: CsiCallOptions,
  ): Promise<MessageShape<O>> {
    try {
      return await this.calls.unary(method, request, { timeoutMs: options?.timeoutMs ?? this.options.timeoutMs }, signal);
    } catch (err) {
      throw classifyCsiError(err, operation);
    }
  }

  /** Probe now, then every probeIntervalMs until ready; not-ready and DeadlineExceeded keep waiting. */
  private async waitForProbe(signal: AbortSignal): Promise<void> {
    const intervalMs = this.options.probeIntervalMs ?? 1000;
    for (;;) {
      try {
        this.log.info('Probing CSI driver for readiness');
        if (await this.probe(signal)) return;
        this.log.info('CSI driver is not ready');
      } catch (err) {
        if (signal.aborted) throw abortReason(signal);
        if (grpcCodeOf(err) !== GrpcStatus.DEADLINE_EXCEEDED) {
          throw new Error(`CSI driver probe failed: ${messageOf(err)}`, { cause: err });
        }
        this.log.info('CSI driver probe timed out');
      }
      await sleep(intervalMs, signal);
    }
  }

  private onConnectionState(state: ConnectionState): void {
    if (state === 'ready') void this.recheckDriverName();
  }

  /**
   * After a reconnect the socket may be served by another process. Case "same name": carry on.
   * Case "different or empty name": this process was configured for another driver, so the
   * client reports a fatal error. Case "call failed": try again with backoff while connected.
   */
  private async recheckDriverName(): Promise<void> {
    if (this.recheckRunning) return;
    this.recheckRunning = true;
    const backoff = new Backoff({ initialMs: 500, maxMs: 10_000 });
    const signal = this.lifetime.signal;
    try {
      while (!signal.aborted && this.channel.state === 'ready') {
        try {
          const info = await this.getPluginInfo(signal);
          if (info.name !== this.name) {
            this.fatal(new Error(`CSI driver name changed after reconnecting: was ${JSON.stringify(this.name)}, now ${JSON.stringify(info.name)}`));
          } else {
            this.log.info('CSI driver reconnected, name unchanged', { driver: this.name });
          }
          return;
        } catch (err) {
          if (signal.aborted) return;
          this.log.warn('Checking the CSI driver name after reconnecting failed, retrying', { err: messageOf(err) });
          await sleep(backoff.next(), signal).catch(() => undefined);
        }
      }
    } finally {
      this.recheckRunning = false;
    }
  }

  private fatal(err: Error): void {
    this.fatalError ??= err;
    this.log.error('CSI driver can no longer be used', { err: err.message });
    for (const listener of this.fatalListeners) {
      try {
        listener(err);
      } catch (listenerErr) {
        this.log.error('CSI fatal listener failed', { err: messageOf(listenerErr) });
      }
    }
  }
}

/** The port's VolumeCapability as the csi.v1 message. */
function volumeCapabilityMessage(capability: VolumeCapability): MessageInitShape<typeof VolumeCapabilitySchema> {
  const accessMode = { mode: AccessMode[capability.accessMode] };
  if (capability.accessType === 'block') return { accessType: { case: 'block', value: {} }, accessMode };
  const { fsType, mountFlags, volumeMountGroup = '' } = capability;
  return { accessType: { case: 'mount', value: { fsType, mountFlags: [...mountFlags], volumeMountGroup } }, accessMode };
}

const INT64_MAX = (1n << 63n) - 1n;

/**
 * CSI's required_bytes is an int64 that must not be negative. The protobuf encoder refuses a larger
 * value (as a serialization failure, which reads as a bug of ours) and sends a negative one as it
 * is, so such a size is refused here, before any driver call, as infeasible: retrying the same
 * request cannot succeed.
 */
function checkRequiredBytes(bytes: bigint): void {
  if (bytes >= 0n && bytes <= INT64_MAX) return;
  const problem = bytes < 0n ? 'is negative' : `exceeds the largest size CSI can carry (int64 ${INT64_MAX} bytes)`;
  throw new CsiError(
    GrpcStatus.INVALID_ARGUMENT,
    GRPC_CODE_NAMES[GrpcStatus.INVALID_ARGUMENT] ?? 'InvalidArgument',
    'infeasible',
    `requested size ${bytes} bytes ${problem}; not sent to the driver`,
  );
}
