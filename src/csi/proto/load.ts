// The project's csi.v1 proto, loaded once per process from its descriptor (csi-descriptor.ts,
// generated from csi.proto by scripts/gen-csi-descriptor.ts): a protobufjs Root (for reading
// field options such as `csi_secret`) and, for each method the resizer calls, the grpc-js method
// definition (path and codecs). Nothing parses .proto text at run time, and only the messages of
// those methods get codecs.
import protobuf from 'protobufjs';
import type { MethodDefinition } from '@grpc/grpc-js';
import { CSI_DESCRIPTOR } from './csi-descriptor.js';

// How messages are turned into plain objects, for every CSI peer in this project: int64 as
// decimal strings (turned into bigint at the edge), enums by name, defaults filled in, and the
// name of the set oneof member in a virtual field. Field names stay as in the proto.
export const CONVERSION_OPTIONS: protobuf.IConversionOptions = {
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

export const CsiMethod = {
  GetPluginInfo: '/csi.v1.Identity/GetPluginInfo',
  GetPluginCapabilities: '/csi.v1.Identity/GetPluginCapabilities',
  Probe: '/csi.v1.Identity/Probe',
  ControllerGetCapabilities: '/csi.v1.Controller/ControllerGetCapabilities',
  ControllerExpandVolume: '/csi.v1.Controller/ControllerExpandVolume',
  ControllerModifyVolume: '/csi.v1.Controller/ControllerModifyVolume',
  NodeGetCapabilities: '/csi.v1.Node/NodeGetCapabilities',
} as const;
export type CsiMethod = (typeof CsiMethod)[keyof typeof CsiMethod];

/** A grpc-js method definition plus the full names of its message types. */
export interface CsiMethodDefinition extends MethodDefinition<object, object> {
  readonly requestTypeName: string;
  readonly responseTypeName: string;
}

export interface LoadedCsiProto {
  readonly root: protobuf.Root;
  /** By full method path. */
  readonly methods: ReadonlyMap<CsiMethod, CsiMethodDefinition>;
}

let loaded: LoadedCsiProto | undefined;

function encoderOf(type: protobuf.Type): (value: object) => Buffer {
  return (value) => {
    if (Array.isArray(value)) throw new Error(`cannot encode an array as ${type.fullName}`);
    const bytes = type.encode(type.fromObject(value)).finish();
    return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

function decoderOf(type: protobuf.Type): (bytes: Buffer) => object {
  return (bytes) => type.toObject(type.decode(bytes), CONVERSION_OPTIONS);
}

function methodDefinition(root: protobuf.Root, path: CsiMethod): CsiMethodDefinition {
  const [, service, name] = /^\/(.+)\/([^/]+)$/.exec(path) ?? [];
  const method = root.lookupService(service!).methods[name!];
  if (!method) throw new Error(`method ${path} missing from the CSI descriptor`);
  method.resolve();
  const request = method.resolvedRequestType!;
  const response = method.resolvedResponseType!;
  return {
    path,
    requestStream: Boolean(method.requestStream),
    responseStream: Boolean(method.responseStream),
    requestSerialize: encoderOf(request),
    requestDeserialize: decoderOf(request),
    responseSerialize: encoderOf(response),
    responseDeserialize: decoderOf(response),
    originalName: name!.charAt(0).toLowerCase() + name!.slice(1),
    requestTypeName: request.fullName.replace(/^\./, ''),
    responseTypeName: response.fullName.replace(/^\./, ''),
  };
}

export function loadCsiProto(): LoadedCsiProto {
  if (loaded) return loaded;
  const root = protobuf.Root.fromJSON(CSI_DESCRIPTOR as protobuf.INamespace);
  root.resolveAll();
  const methods = new Map<CsiMethod, CsiMethodDefinition>();
  for (const path of Object.values(CsiMethod)) methods.set(path, methodDefinition(root, path));
  loaded = { root, methods };
  return loaded;
}

/** The gRPC service definition of the methods we use (for a grpc-js Server, e.g. the test driver). */
export function csiServiceDefinition(service: 'Identity' | 'Controller' | 'Node'): Record<string, CsiMethodDefinition> {
  const out: Record<string, CsiMethodDefinition> = {};
  for (const [path, def] of loadCsiProto().methods) {
    if (path.startsWith(`/csi.v1.${service}/`)) out[path.slice(path.lastIndexOf('/') + 1)] = def;
  }
  return out;
}
