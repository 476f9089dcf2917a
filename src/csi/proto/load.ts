// Loads the project's csi.v1 proto once per process: a protobufjs Root (for reading field options
// such as `csi_secret`) and the grpc-js method definitions (paths, serializers) made from the
// same file by proto-loader.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';
import { loadSync, type MethodDefinition, type PackageDefinition } from '@grpc/proto-loader';

// The loader options every CSI peer in this project uses: field names as in the proto, int64 as
// decimal strings (turned into bigint at the edge), enums by name, defaults filled in, and the
// name of the set oneof member in a virtual field.
export const PROTO_LOADER_OPTIONS = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
} as const;

function findProtoPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // Running from src/ (tsx) the proto sits beside this file; from dist/csi/proto/ it stays in src/.
  const candidates = [join(here, 'csi.proto'), join(here, '..', '..', '..', 'src', 'csi', 'proto', 'csi.proto')];
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`csi.proto not found (looked in ${candidates.join(', ')})`);
  return found;
}

export const CSI_PROTO_PATH: string = findProtoPath();

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

export interface LoadedCsiProto {
  readonly root: protobuf.Root;
  readonly definition: PackageDefinition;
  /** By full method path. */
  readonly methods: ReadonlyMap<CsiMethod, MethodDefinition<object, object>>;
}

let loaded: LoadedCsiProto | undefined;

export function loadCsiProto(): LoadedCsiProto {
  if (loaded) return loaded;
  const root = new protobuf.Root();
  root.loadSync(CSI_PROTO_PATH, { keepCase: true });
  root.resolveAll();
  const definition = loadSync(CSI_PROTO_PATH, PROTO_LOADER_OPTIONS);
  const methods = new Map<CsiMethod, MethodDefinition<object, object>>();
  for (const service of ['csi.v1.Identity', 'csi.v1.Controller', 'csi.v1.Node']) {
    const def = definition[service] as Record<string, MethodDefinition<object, object>> | undefined;
    if (!def) throw new Error(`service ${service} missing from ${CSI_PROTO_PATH}`);
    for (const method of Object.values(def)) methods.set(method.path as CsiMethod, method);
  }
  for (const path of Object.values(CsiMethod)) {
    if (!methods.has(path)) throw new Error(`method ${path} missing from ${CSI_PROTO_PATH}`);
  }
  loaded = { root, definition, methods };
  return loaded;
}

/** The gRPC service definitions (for a grpc-js Server, e.g. the test driver). */
export function csiServiceDefinition(service: 'Identity' | 'Controller' | 'Node'): Record<string, MethodDefinition<object, object>> {
  const def = loadCsiProto().definition[`csi.v1.${service}`];
  return def as unknown as Record<string, MethodDefinition<object, object>>;
}
