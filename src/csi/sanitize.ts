// Makes a copy of a CSI message that is safe to log: its proto3 JSON form (proto field names,
// int64 as strings, enums by name) with every field whose definition carries the `csi_secret`
// option replaced by a marker, at any depth. The option is read from the generated descriptors,
// so a field marked secret in csi.proto is stripped without a list of names here.
import { getOption, toJson, type DescMessage, type JsonObject, type JsonValue, type MessageShape } from '@bufbuild/protobuf';
import { csi_secret } from './proto/gen/csi_pb.js';

export const STRIPPED = '***stripped***';

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Strips the secret fields of `json`, the JSON form of a `schema` message, in place. */
function stripJson(schema: DescMessage, json: JsonObject): JsonObject {
  for (const field of schema.fields) {
    const value = json[field.name];
    if (value === undefined) continue;
    if (getOption(field, csi_secret)) {
      json[field.name] = STRIPPED;
      continue;
    }
    // Well-known types have JSON forms of their own (a wrapper is its bare value) and hold no secrets.
    const nested = field.message;
    if (!nested || nested.typeName.startsWith('google.protobuf.')) continue;
    if (field.fieldKind === 'list' && Array.isArray(value)) {
      for (const item of value) if (isObject(item)) stripJson(nested, item);
    } else if (field.fieldKind === 'map' && isObject(value)) {
      for (const item of Object.values(value)) if (isObject(item)) stripJson(nested, item);
    } else if (isObject(value)) {
      stripJson(nested, value);
    }
  }
  return json;
}

/** The message as a loggable JSON object without secrets. */
export function stripSecrets<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): JsonObject {
  const json = toJson(schema, message, { useProtoFieldName: true });
  return isObject(json) ? stripJson(schema, json) : {};
}
