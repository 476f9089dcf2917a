// Test support (never imported by the resizer): the same descriptor loaded into protobufjs, as the
// independent reference our codec (codec.ts) is tested against, and the grpc-js service
// definitions the test drivers (test/fakes/fault-driver.ts) serve with it. Because the test
// driver decodes with protobufjs, every test that talks to it also checks our encoder.
import protobuf from 'protobufjs';
import type { MethodDefinition } from '@grpc/grpc-js';
import { CSI_DESCRIPTOR } from './csi-descriptor.js';
import { CsiMethod, csiMethod } from './load.js';

// What the resizer's codec promises to produce and accept, in protobufjs terms.
export const CONVERSION_OPTIONS: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

let root: protobuf.Root | undefined;

export function referenceRoot(): protobuf.Root {
  if (!root) {
    root = protobuf.Root.fromJSON(CSI_DESCRIPTOR as protobuf.INamespace);
    root.resolveAll();
  }
  return root;
}

export function referenceEncode(typeName: string, value: object): Buffer {
  const type = referenceRoot().lookupType(typeName);
  const bytes = type.encode(type.fromObject(value)).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function referenceDecode(typeName: string, bytes: Uint8Array): Record<string, unknown> {
  const type = referenceRoot().lookupType(typeName);
  return type.toObject(type.decode(bytes), CONVERSION_OPTIONS);
}

/** The grpc-js service definition of the methods the resizer calls, with protobufjs codecs. */
export function csiServiceDefinition(service: 'Identity' | 'Controller' | 'Node'): Record<string, MethodDefinition<object, object>> {
  const out: Record<string, MethodDefinition<object, object>> = {};
  for (const path of Object.values(CsiMethod)) {
    if (!path.startsWith(`/csi.v1.${service}/`)) continue;
    const { requestTypeName, responseTypeName } = csiMethod(path);
    const name = path.slice(path.lastIndexOf('/') + 1);
    out[name] = {
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: (value) => referenceEncode(requestTypeName, value),
      requestDeserialize: (bytes) => referenceDecode(requestTypeName, bytes),
      responseSerialize: (value) => referenceEncode(responseTypeName, value),
      responseDeserialize: (bytes) => referenceDecode(responseTypeName, bytes),
      originalName: name.charAt(0).toLowerCase() + name.slice(1),
    };
  }
  return out;
}
