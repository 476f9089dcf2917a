// The csi.v1 methods the resizer calls: each method's path and the full names of its request and
// response messages, read from the descriptor generated at build time (csi-descriptor.ts), with
// codecs from codec.ts. Nothing parses .proto text, and no protobuf library runs, at run time.
import { CSI_DESCRIPTOR } from './csi-descriptor.js';
import { decode, encode } from './codec.js';

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

export interface CsiMethodDefinition {
  readonly path: CsiMethod;
  /** e.g. 'csi.v1.ControllerExpandVolumeRequest' */
  readonly requestTypeName: string;
  readonly responseTypeName: string;
  readonly encodeRequest: (request: object) => Buffer;
  readonly decodeResponse: (bytes: Uint8Array) => object;
}

type ServiceNode = { methods?: Record<string, { requestType: string; responseType: string }> };
type PackageNode = { nested?: Record<string, ServiceNode & PackageNode> };

function methodDefinition(path: CsiMethod): CsiMethodDefinition {
  const [, service, name] = /^\/csi\.v1\.([^/]+)\/([^/]+)$/.exec(path) ?? [];
  const v1 = (CSI_DESCRIPTOR as PackageNode).nested?.['csi']?.nested?.['v1'];
  const method = v1?.nested?.[service!]?.methods?.[name!];
  if (!method) throw new Error(`method ${path} missing from the CSI descriptor`);
  // Every message of these methods is defined directly in csi.v1.
  const requestTypeName = `csi.v1.${method.requestType}`;
  const responseTypeName = `csi.v1.${method.responseType}`;
  return {
    path,
    requestTypeName,
    responseTypeName,
    encodeRequest: (request) => encode(requestTypeName, request),
    decodeResponse: (bytes) => decode(responseTypeName, bytes),
  };
}

const definitions = new Map<CsiMethod, CsiMethodDefinition>();

/** The definition of one method the resizer calls. */
export function csiMethod(path: CsiMethod): CsiMethodDefinition {
  let definition = definitions.get(path);
  if (!definition) {
    definition = methodDefinition(path);
    definitions.set(path, definition);
  }
  return definition;
}
