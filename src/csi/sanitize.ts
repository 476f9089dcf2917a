// Makes a copy of a CSI message that is safe to log: every field whose proto definition carries
// the `csi_secret` option is replaced by a marker, at any depth. The secret fields are found by
// reading the option from the descriptor (codec.ts's schema), so a field marked secret in
// csi.proto is stripped without a list of names here.
import { messageSchema, type MessageSchema } from './proto/codec.js';

export const STRIPPED = '***stripped***';

function toLoggable(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (Buffer.isBuffer(value)) return `<${value.length} bytes>`;
  return value;
}

function stripMessage(schema: MessageSchema, message: unknown): unknown {
  if (typeof message !== 'object' || message === null) return toLoggable(message);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(message as Record<string, unknown>)) {
    const field = schema.byName.get(key);
    if (!field) {
      // The oneof member-name fields and anything the proto doesn't know: plain values are
      // copied, objects are dropped because we cannot tell what they hold.
      out[key] = typeof value === 'object' && value !== null ? '<unknown>' : toLoggable(value);
      continue;
    }
    if (field.secret) {
      out[key] = STRIPPED;
      continue;
    }
    const nested = field.value.kind === 'message' ? field.value : undefined;
    if (nested && value !== null && value !== undefined) {
      if (field.map) {
        out[key] = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, stripMessage(nested, v)]));
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

/** Strips secrets from a message of the given csi.v1 type, e.g. 'csi.v1.ControllerExpandVolumeRequest'. */
export function stripSecrets(typeName: string, message: unknown): unknown {
  return stripMessage(messageSchema(typeName), message);
}
