// Makes a copy of a CSI message that is safe to log: every field whose proto definition carries
// the `csi_secret` option is replaced by a marker, at any depth. The secret fields are found by
// reading the option from the loaded proto, so a field marked secret in csi.proto is stripped
// without a list of names here.
import type protobuf from 'protobufjs';
import { loadCsiProto } from './proto/load.js';

export const STRIPPED = '***stripped***';
const SECRET_OPTION = '(csi_secret)';

export type Sanitizer = (typeName: string, message: unknown) => unknown;

function toLoggable(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (Buffer.isBuffer(value)) return `<${value.length} bytes>`;
  return value;
}

function stripMessage(type: protobuf.Type, message: unknown): unknown {
  if (typeof message !== 'object' || message === null) return toLoggable(message);
  const source = message as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    const field = type.fields[key];
    if (!field) {
      // The virtual oneof member-name fields and anything the proto doesn't know: plain values
      // are copied, objects are dropped because we cannot tell what they hold.
      out[key] = typeof value === 'object' && value !== null ? '<unknown>' : toLoggable(value);
      continue;
    }
    if (field.options?.[SECRET_OPTION] === true) {
      out[key] = STRIPPED;
      continue;
    }
    field.resolve();
    const fieldType = field.resolvedType;
    if (fieldType && 'fields' in fieldType && value !== null && value !== undefined) {
      const nested = fieldType as protobuf.Type;
      if (field.map) {
        out[key] = Object.fromEntries(
          Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, stripMessage(nested, v)]),
        );
      } else if (field.repeated && Array.isArray(value)) {
        out[key] = value.map((v) => stripMessage(nested, v));
      } else {
        out[key] = stripMessage(nested, value);
      }
      continue;
    }
    out[key] = Array.isArray(value) ? value.map(toLoggable) : toLoggable(value);
  }
  return out;
}

export function createSanitizer(root: protobuf.Root): Sanitizer {
  const cache = new Map<string, protobuf.Type>();
  return (typeName, message) => {
    let type = cache.get(typeName);
    if (!type) {
      type = root.lookupType(typeName);
      cache.set(typeName, type);
    }
    return stripMessage(type, message);
  };
}

let defaultSanitizer: Sanitizer | undefined;

/** Strips secrets from a message of the given csi.v1 type, e.g. 'csi.v1.ControllerExpandVolumeRequest'. */
export function stripSecrets(typeName: string, message: unknown): unknown {
  defaultSanitizer ??= createSanitizer(loadCsiProto().root);
  return defaultSanitizer(typeName, message);
}
