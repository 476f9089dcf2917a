// A small CSI driver for tests: a grpc-js server on a temp unix socket, serving the project's own
// csi.v1 proto through @grpc/proto-loader (protobufjs), so its messages are decoded by another
// protobuf implementation than the client's generated code. Where a test scripts nothing it behaves like a driver: volumes are created through
// createVolume(), expand grows and never shrinks, an unknown volume is NotFound. Scripted replies
// (per method, consumed in order) inject any gRPC code, delays, hangs past the deadline, odd
// capacities, or a crash of the server during the call. Every call is recorded, secrets included,
// so tests can assert on what the client sent.
//
// For fault tests across processes (fault-driver-main.ts runs it on its own, so it can be
// SIGKILLed), the volumes can live in a state file, written before an answer leaves, and every
// call can be appended to a JSON-lines call log that outlives the process.
import { appendFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const CSI_PROTO_PATH = fileURLToPath(new URL('../../src/csi/proto/csi.proto', import.meta.url));

interface CsiServices {
  Identity: grpc.ServiceClientConstructor;
  Controller: grpc.ServiceClientConstructor;
  Node: grpc.ServiceClientConstructor;
}

let services: CsiServices | undefined;

/**
 * The csi.v1 services with proto-loader's plain objects: proto field names, int64 as decimal
 * strings, enums by name, defaults filled in, and the set oneof member named in the oneof's field.
 */
function csiServices(): CsiServices {
  services ??= (
    grpc.loadPackageDefinition(
      protoLoader.loadSync(CSI_PROTO_PATH, {
        keepCase: true,
        longs: String,
        enums: String,
        defaults: true,
        oneofs: true,
      }),
    ) as unknown as { csi: { v1: CsiServices } }
  ).csi.v1;
  return services;
}

export type FaultMethod =
  | 'GetPluginInfo'
  | 'GetPluginCapabilities'
  | 'Probe'
  | 'ControllerGetCapabilities'
  | 'ControllerExpandVolume'
  | 'ControllerModifyVolume'
  | 'NodeGetCapabilities';

export interface ScriptedReply {
  /** Fail the call with this status (after delayMs). */
  code?: grpc.status;
  details?: string;
  /** Answer after this long. */
  delayMs?: number;
  /** Never answer; the client's deadline ends the call. */
  hang?: boolean;
  /** Destroy the server (all connections) while this call is in flight. */
  crash?: boolean;
  /** Answer with this body instead of the driver's own answer (int64 as decimal strings). */
  response?: Record<string, unknown>;
  /** Trailers sent with a failure (`code`), e.g. grpc-status-details-bin. */
  trailers?: Record<string, string | Buffer>;
}

export interface FaultDriverCapabilities {
  controllerService: boolean;
  controllerExpand: boolean;
  controllerModify: boolean;
  singleNodeMultiWriter: boolean;
  nodeExpand: boolean;
}

export interface FaultDriverOptions {
  name?: string;
  capabilities?: Partial<FaultDriverCapabilities>;
  nodeExpansionRequired?: boolean;
  /** The plugin VolumeExpansion capability; null reports none. */
  volumeExpansion?: 'ONLINE' | 'OFFLINE' | null;
  /** Probe's `ready`: true, false, or null for "absent". */
  ready?: boolean | null;
  /** Serve on this socket instead of a fresh temp one. */
  socketPath?: string;
  /**
   * Expansions above `bytes` fail with `code` (like the hostpath driver's --max-volume-size, which
   * answers OutOfRange): a size-dependent refusal, so a test can recover by asking for less.
   */
  expandLimit?: { bytes: bigint; code: grpc.status; details?: string };
  /**
   * Volumes are loaded from this JSON file at start (when it exists) and written to it, atomically,
   * after every change and before the answer is sent: a driver killed after its work but before
   * answering keeps the work, as a real one would. See writeFaultDriverState().
   */
  stateFile?: string;
  /** Every call received and every answer sent, appended as JSON lines (see CallLogEntry). */
  callLog?: string;
  /** ControllerExpandVolume works this long before it grows the volume and answers. */
  expandDelayMs?: number;
}

/** One line of the call log. */
export type CallLogEntry =
  | {
      event: 'call';
      at: number;
      method: FaultMethod;
      volumeId?: string;
      requiredBytes?: string;
      /**
       * ControllerExpandVolume only: an earlier expand of this volume already succeeded at this
       * size or more, so this call asks for nothing new.
       */
      afterSuccess?: boolean;
    }
  | { event: 'answer'; at: number; method: FaultMethod; volumeId?: string; code: number; capacityBytes?: string };

interface StoredVolume {
  bytes: string;
  parameters?: Record<string, string>;
  /** The largest size an expand call has succeeded with. */
  expandedTo?: string;
}

/** Writes a state file with these volumes (id → bytes), for a driver process to start from. */
export function writeFaultDriverState(path: string, volumes: ReadonlyMap<string, bigint>): void {
  const stored: Record<string, StoredVolume> = {};
  for (const [id, bytes] of volumes) stored[id] = { bytes: bytes.toString() };
  writeAtomically(path, JSON.stringify(stored));
}

/** The volumes of a state file (id → bytes). */
export function readFaultDriverState(path: string): Map<string, bigint> {
  const stored = JSON.parse(readFileSync(path, 'utf8')) as Record<string, StoredVolume>;
  return new Map(Object.entries(stored).map(([id, v]) => [id, BigInt(v.bytes)]));
}

/** The entries of a call log. */
export function readCallLog(path: string): CallLogEntry[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as CallLogEntry);
}

function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

export interface RecordedCall {
  method: FaultMethod;
  request: Record<string, unknown>;
  at: number;
  /** How long the client gave the call (its grpc-timeout) as the call arrived, in ms; Infinity without a deadline. */
  deadlineMs: number;
}

/** The time left until a server call's deadline, as grpc-js read it from grpc-timeout. */
function remainingMs(deadline: grpc.Deadline): number {
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(at) ? at - Date.now() : Infinity;
}

interface Volume {
  bytes: bigint;
  parameters: Record<string, string>;
  expandedTo?: bigint;
}

type UnaryHandler = (call: grpc.ServerUnaryCall<Record<string, unknown>, unknown>, callback: grpc.sendUnaryData<unknown>) => void;

export class FaultDriver {
  name: string;
  capabilities: FaultDriverCapabilities;
  nodeExpansionRequired: boolean;
  volumeExpansion: 'ONLINE' | 'OFFLINE' | null;
  ready: boolean | null;
  readonly socketPath: string;
  expandLimit: FaultDriverOptions['expandLimit'];
  expandDelayMs: number;
  readonly stateFile: string | undefined;
  readonly callLog: string | undefined;
  readonly calls: RecordedCall[] = [];
  private readonly tempDir: string | undefined;
  private readonly volumes = new Map<string, Volume>();
  private readonly scripts = new Map<FaultMethod, ScriptedReply[]>();
  private server: grpc.Server | undefined;

  private constructor(options: FaultDriverOptions) {
    this.name = options.name ?? 'fault.csi.test';
    this.capabilities = {
      controllerService: true,
      controllerExpand: true,
      controllerModify: true,
      singleNodeMultiWriter: false,
      nodeExpand: true,
      ...options.capabilities,
    };
    this.nodeExpansionRequired = options.nodeExpansionRequired ?? false;
    this.volumeExpansion = options.volumeExpansion === undefined ? 'ONLINE' : options.volumeExpansion;
    this.ready = options.ready === undefined ? true : options.ready;
    this.expandLimit = options.expandLimit;
    this.expandDelayMs = options.expandDelayMs ?? 0;
    this.stateFile = options.stateFile;
    this.callLog = options.callLog;
    if (this.stateFile && existsSync(this.stateFile)) {
      const stored = JSON.parse(readFileSync(this.stateFile, 'utf8')) as Record<string, StoredVolume>;
      for (const [id, v] of Object.entries(stored)) {
        this.volumes.set(id, {
          bytes: BigInt(v.bytes),
          parameters: v.parameters ?? {},
          ...(v.expandedTo === undefined ? {} : { expandedTo: BigInt(v.expandedTo) }),
        });
      }
    }
    if (options.socketPath) {
      this.socketPath = options.socketPath;
    } else {
      // Short path: sun_path holds ~107 bytes.
      this.tempDir = mkdtempSync(join(tmpdir(), 'rz-fd-'));
      this.socketPath = join(this.tempDir, 'csi.sock');
    }
  }

  static async start(options: FaultDriverOptions = {}): Promise<FaultDriver> {
    const driver = new FaultDriver(options);
    await driver.listen();
    return driver;
  }

  /** unix:///path, as --csi-address takes it. */
  get address(): string {
    return `unix://${this.socketPath}`;
  }

  /** Queue replies for a method; each call takes the next one, then the driver answers normally. */
  script(method: FaultMethod, ...replies: ScriptedReply[]): void {
    const queue = this.scripts.get(method) ?? [];
    queue.push(...replies);
    this.scripts.set(method, queue);
  }

  createVolume(volumeId: string, bytes: bigint): void {
    this.volumes.set(volumeId, { bytes, parameters: {} });
    this.persist();
  }

  volumeBytes(volumeId: string): bigint | undefined {
    return this.volumes.get(volumeId)?.bytes;
  }

  volumeParameters(volumeId: string): Readonly<Record<string, string>> | undefined {
    return this.volumes.get(volumeId)?.parameters;
  }

  callsOf(method: FaultMethod): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** Ends the server at once (in-flight calls fail on the client side) and keeps the socket path. */
  crash(): void {
    this.server?.forceShutdown();
    this.server = undefined;
    rmSync(this.socketPath, { force: true });
  }

  /** Stops (if running) and serves again on the same socket, optionally as another driver. */
  async restart(changes: { name?: string } = {}): Promise<void> {
    this.crash();
    if (changes.name !== undefined) this.name = changes.name;
    await this.listen();
  }

  /** Idempotent; removes the temp directory. */
  async stop(): Promise<void> {
    this.crash();
    if (this.tempDir) rmSync(this.tempDir, { recursive: true, force: true });
  }

  private async listen(): Promise<void> {
    rmSync(this.socketPath, { force: true });
    const server = new grpc.Server();
    const h =
      (method: FaultMethod, answer: (request: Record<string, unknown>) => unknown): UnaryHandler =>
      (call, callback) =>
        this.handle(method, call.request, remainingMs(call.getDeadline()), answer, callback);
    server.addService(csiServices().Identity.service, {
      GetPluginInfo: h('GetPluginInfo', () => ({ name: this.name, vendor_version: '0.0.1-test', manifest: {} })),
      GetPluginCapabilities: h('GetPluginCapabilities', () => this.pluginCapabilities()),
      Probe: h('Probe', () => ({ ready: this.ready === null ? null : { value: this.ready } })),
    });
    server.addService(csiServices().Controller.service, {
      ControllerGetCapabilities: h('ControllerGetCapabilities', () => this.controllerCapabilities()),
      ControllerExpandVolume: h('ControllerExpandVolume', (req) => this.expand(req)),
      ControllerModifyVolume: h('ControllerModifyVolume', (req) => this.modify(req)),
    });
    server.addService(csiServices().Node.service, {
      NodeGetCapabilities: h('NodeGetCapabilities', () => ({
        capabilities: this.capabilities.nodeExpand ? [{ rpc: { type: 'EXPAND_VOLUME' } }] : [],
      })),
    });
    await new Promise<void>((resolve, reject) => {
      server.bindAsync(`unix://${this.socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve()));
    });
    this.server = server;
  }

  private handle(
    method: FaultMethod,
    request: Record<string, unknown>,
    deadlineMs: number,
    answer: (request: Record<string, unknown>) => unknown,
    callback: grpc.sendUnaryData<unknown>,
  ): void {
    this.calls.push({ method, request: structuredClone(request), at: Date.now(), deadlineMs });
    const volumeId = typeof request['volume_id'] === 'string' ? request['volume_id'] : undefined;
    this.logCall(method, request, volumeId);
    const reply = this.scripts.get(method)?.shift();
    const fail = (code: grpc.status, details: string) => {
      this.logAnswer({ event: 'answer', at: Date.now(), method, ...(volumeId ? { volumeId } : {}), code });
      const metadata = new grpc.Metadata();
      for (const [key, value] of Object.entries(reply?.trailers ?? {})) metadata.set(key, value);
      callback({ code, details, metadata });
    };
    const respond = () => {
      if (reply?.crash) {
        this.crash();
        return;
      }
      if (reply?.hang) return;
      if (reply?.code !== undefined) {
        fail(reply.code, reply.details ?? `scripted ${grpc.status[reply.code]}`);
        return;
      }
      if (reply?.response) {
        callback(null, reply.response);
        return;
      }
      let body: unknown;
      try {
        body = answer(request);
      } catch (err) {
        const e = err as { code?: grpc.status; message?: string };
        fail(e.code ?? grpc.status.INTERNAL, e.message ?? String(err));
        return;
      }
      const capacity = (body as { capacity_bytes?: unknown } | null)?.capacity_bytes;
      this.logAnswer({
        event: 'answer',
        at: Date.now(),
        method,
        ...(volumeId ? { volumeId } : {}),
        code: grpc.status.OK,
        ...(typeof capacity === 'string' ? { capacityBytes: capacity } : {}),
      });
      callback(null, body);
    };
    const delayMs = reply?.delayMs ?? (method === 'ControllerExpandVolume' ? this.expandDelayMs : 0);
    if (delayMs > 0) setTimeout(respond, delayMs).unref();
    else respond();
  }

  private logCall(method: FaultMethod, request: Record<string, unknown>, volumeId: string | undefined): void {
    if (!this.callLog) return;
    const required = (request['capacity_range'] as { required_bytes?: string } | null | undefined)?.required_bytes;
    const expandedTo = volumeId === undefined ? undefined : this.volumes.get(volumeId)?.expandedTo;
    const entry: CallLogEntry = {
      event: 'call',
      at: Date.now(),
      method,
      ...(volumeId === undefined ? {} : { volumeId }),
      ...(required === undefined ? {} : { requiredBytes: String(required) }),
      ...(method === 'ControllerExpandVolume' ? { afterSuccess: expandedTo !== undefined && expandedTo >= BigInt(required ?? '0') } : {}),
    };
    appendFileSync(this.callLog, JSON.stringify(entry) + '\n');
  }

  private logAnswer(entry: CallLogEntry): void {
    if (this.callLog) appendFileSync(this.callLog, JSON.stringify(entry) + '\n');
  }

  private persist(): void {
    if (!this.stateFile) return;
    const stored: Record<string, StoredVolume> = {};
    for (const [id, v] of this.volumes) {
      stored[id] = { bytes: v.bytes.toString(), parameters: v.parameters, ...(v.expandedTo === undefined ? {} : { expandedTo: v.expandedTo.toString() }) };
    }
    writeAtomically(this.stateFile, JSON.stringify(stored));
  }

  private pluginCapabilities(): unknown {
    const capabilities: unknown[] = [];
    if (this.capabilities.controllerService) capabilities.push({ service: { type: 'CONTROLLER_SERVICE' } });
    if (this.volumeExpansion) capabilities.push({ volume_expansion: { type: this.volumeExpansion } });
    return { capabilities };
  }

  private controllerCapabilities(): unknown {
    const types: string[] = [];
    if (this.capabilities.controllerExpand) types.push('EXPAND_VOLUME');
    if (this.capabilities.controllerModify) types.push('MODIFY_VOLUME');
    if (this.capabilities.singleNodeMultiWriter) types.push('SINGLE_NODE_MULTI_WRITER');
    return { capabilities: types.map((type) => ({ rpc: { type } })) };
  }

  private expand(request: Record<string, unknown>): unknown {
    if (!this.capabilities.controllerExpand) throw rpcError(grpc.status.UNIMPLEMENTED, 'ControllerExpandVolume is not supported');
    const volumeId = String(request['volume_id'] ?? '');
    if (!volumeId) throw rpcError(grpc.status.INVALID_ARGUMENT, 'volume ID missing in request');
    const volume = this.volumes.get(volumeId);
    if (!volume) throw rpcError(grpc.status.NOT_FOUND, `volume ${volumeId} not found`);
    const range = request['capacity_range'] as { required_bytes?: string } | null;
    const required = BigInt(range?.required_bytes ?? '0');
    if (this.expandLimit && required > this.expandLimit.bytes) {
      throw rpcError(this.expandLimit.code, this.expandLimit.details ?? `requested ${required} bytes is above the limit of ${this.expandLimit.bytes}`);
    }
    // Expansion never shrinks: a smaller request is answered with the current size.
    if (required > volume.bytes) volume.bytes = required;
    if (volume.expandedTo === undefined || required > volume.expandedTo) volume.expandedTo = required;
    this.persist();
    return { capacity_bytes: volume.bytes.toString(), node_expansion_required: this.nodeExpansionRequired };
  }

  private modify(request: Record<string, unknown>): unknown {
    if (!this.capabilities.controllerModify) throw rpcError(grpc.status.UNIMPLEMENTED, 'ControllerModifyVolume is not supported');
    const volumeId = String(request['volume_id'] ?? '');
    const volume = this.volumes.get(volumeId);
    if (!volume) throw rpcError(grpc.status.NOT_FOUND, `volume ${volumeId} not found`);
    Object.assign(volume.parameters, request['mutable_parameters'] as Record<string, string>);
    this.persist();
    return {};
  }
}

function rpcError(code: grpc.status, message: string): Error & { code: grpc.status } {
  return Object.assign(new Error(message), { code });
}
