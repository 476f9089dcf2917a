// Protobuf wire encoding for the csi.v1 messages the resizer exchanges, driven by the descriptor
// generated at build time (csi-descriptor.ts). Replaces protobufjs at run time: requiring it,
// building its Root and its runtime-generated codecs cost ≈ 40 ms of start-up CPU and ≈ 9 MiB
// of RSS (issue 15), for ~20 small messages a hand-sized table serves as well.
//
// Plain objects on both sides, as the project's peers have always seen them: proto field names,
// int64 as decimal strings, enums by name (a number the descriptor doesn't know stays a number),
// every non-oneof field present with its default when decoded (message fields null), and the
// name of the set member of a oneof in a field named after the oneof. Unknown fields are
// skipped. Encoding follows proto3: scalars equal to their default are not written; a present
// message (also an empty one) and a set oneof member always are.
import { CSI_DESCRIPTOR } from './csi-descriptor.js';

type ScalarType = 'string' | 'bytes' | 'bool' | 'int32' | 'uint32' | 'int64' | 'uint64' | 'double' | 'float';
const SCALAR_TYPES: ReadonlySet<string> = new Set<ScalarType>(['string', 'bytes', 'bool', 'int32', 'uint32', 'int64', 'uint64', 'double', 'float']);

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH = 2;
const WIRE_START_GROUP = 3;
const WIRE_END_GROUP = 4;
const WIRE_FIXED32 = 5;

export interface EnumSchema {
  readonly kind: 'enum';
  readonly fullName: string;
  readonly byName: ReadonlyMap<string, number>;
  readonly byNumber: ReadonlyMap<number, string>;
}

type ValueType = { kind: 'scalar'; scalar: ScalarType } | EnumSchema | MessageSchema;

export interface FieldSchema {
  readonly name: string;
  readonly id: number;
  readonly repeated: boolean;
  /** map<string, V>: the value's type is `value`; keys are strings in every CSI map. */
  readonly map: boolean;
  readonly oneof: string | undefined;
  /** Carries the csi_secret option: never logged. */
  readonly secret: boolean;
  readonly value: ValueType;
}

export interface MessageSchema {
  readonly kind: 'message';
  readonly fullName: string;
  readonly fields: readonly FieldSchema[];
  readonly byName: ReadonlyMap<string, FieldSchema>;
  readonly byId: ReadonlyMap<number, FieldSchema>;
}

export class ProtobufDecodeError extends Error {
  constructor(typeName: string, problem: string) {
    super(`cannot decode ${typeName}: ${problem}`);
    this.name = 'ProtobufDecodeError';
  }
}

// ---- the schema, built on first use from the descriptor -------------------------------------

interface JsonField {
  type: string;
  id: number;
  rule?: string;
  keyType?: string;
  options?: Record<string, unknown>;
}
interface JsonNode {
  nested?: Record<string, JsonNode>;
  fields?: Record<string, JsonField>;
  oneofs?: Record<string, { oneof: string[] }>;
  values?: Record<string, number>;
}

const definitions = new Map<string, JsonNode>();
(function index(node: JsonNode, prefix: string) {
  for (const [name, child] of Object.entries(node.nested ?? {})) {
    const fullName = prefix ? `${prefix}.${name}` : name;
    definitions.set(fullName, child);
    index(child, fullName);
  }
})(CSI_DESCRIPTOR as JsonNode, '');

const schemas = new Map<string, MessageSchema | EnumSchema>();

/** Protobuf name resolution: `.a.b` is absolute; `b` is looked up from the innermost scope out. */
function resolveName(name: string, scope: string): string {
  if (name.startsWith('.')) return name.slice(1);
  for (let s = scope; ; s = s.slice(0, Math.max(0, s.lastIndexOf('.')))) {
    const candidate = s ? `${s}.${name}` : name;
    if (definitions.has(candidate)) return candidate;
    if (!s) break;
  }
  throw new Error(`csi descriptor: type ${name} referenced from ${scope} is not defined`);
}

function enumSchema(fullName: string, node: JsonNode): EnumSchema {
  const byName = new Map(Object.entries(node.values ?? {}));
  const byNumber = new Map<number, string>();
  for (const [name, number] of byName) if (!byNumber.has(number)) byNumber.set(number, name);
  return { kind: 'enum', fullName, byName, byNumber };
}

/** The schema of a message type by full name, e.g. 'csi.v1.ControllerExpandVolumeRequest'. */
export function messageSchema(fullName: string): MessageSchema {
  const schema = typeSchema(fullName);
  if (schema.kind !== 'message') throw new Error(`${fullName} is an enum, not a message`);
  return schema;
}

function typeSchema(fullName: string): MessageSchema | EnumSchema {
  const cached = schemas.get(fullName);
  if (cached) return cached;
  const node = definitions.get(fullName);
  if (!node) throw new Error(`csi descriptor: no type ${fullName}`);
  if (node.values) {
    const schema = enumSchema(fullName, node);
    schemas.set(fullName, schema);
    return schema;
  }
  const oneofOf = new Map<string, string>();
  for (const [oneof, { oneof: members }] of Object.entries(node.oneofs ?? {})) for (const m of members) oneofOf.set(m, oneof);
  const fields: FieldSchema[] = [];
  const schema: MessageSchema = { kind: 'message', fullName, fields, byName: new Map(), byId: new Map() };
  // Registered before its fields are resolved, so recursive types terminate.
  schemas.set(fullName, schema);
  for (const [name, f] of Object.entries(node.fields ?? {})) {
    if (f.keyType !== undefined && f.keyType !== 'string') throw new Error(`csi descriptor: ${fullName}.${name}: only string map keys are supported`);
    const value: ValueType = SCALAR_TYPES.has(f.type) ? { kind: 'scalar', scalar: f.type as ScalarType } : typeSchema(resolveName(f.type, fullName));
    fields.push({
      name,
      id: f.id,
      repeated: f.rule === 'repeated',
      map: f.keyType !== undefined,
      oneof: oneofOf.get(name),
      secret: f.options?.['(csi_secret)'] === true,
      value,
    });
  }
  fields.sort((a, b) => a.id - b.id);
  for (const f of fields) {
    (schema.byName as Map<string, FieldSchema>).set(f.name, f);
    (schema.byId as Map<number, FieldSchema>).set(f.id, f);
  }
  return schema;
}

// ---- encoding ---------------------------------------------------------------------------------

class Writer {
  private buf = Buffer.allocUnsafe(64);
  private pos = 0;

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** An unsigned varint below 2^32 (tags, lengths, non-negative int32/enum/uint32). */
  varint32(value: number): void {
    this.ensure(5);
    let v = value >>> 0;
    while (v > 0x7f) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }

  /** Any 64-bit pattern; negative numbers take the full ten bytes (two's complement). */
  varint64(value: bigint): void {
    this.ensure(10);
    let v = BigInt.asUintN(64, value);
    while (v > 0x7fn) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
  }

  tag(id: number, wireType: number): void {
    this.varint32(id * 8 + wireType);
  }

  bytes(data: Uint8Array): void {
    this.varint32(data.length);
    this.ensure(data.length);
    this.buf.set(data, this.pos);
    this.pos += data.length;
  }

  string(value: string): void {
    const length = Buffer.byteLength(value);
    this.varint32(length);
    this.ensure(length);
    this.pos += this.buf.write(value, this.pos, 'utf8');
  }

  double(value: number): void {
    this.ensure(8);
    this.pos = this.buf.writeDoubleLE(value, this.pos);
  }

  float(value: number): void {
    this.ensure(4);
    this.pos = this.buf.writeFloatLE(value, this.pos);
  }

  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

function where(schema: MessageSchema, field: FieldSchema): string {
  return `${schema.fullName}.${field.name}`;
}

function toInteger64(value: unknown, signed: boolean, at: string): bigint {
  let n: bigint;
  if (typeof value === 'bigint') n = value;
  else if (typeof value === 'number' && Number.isInteger(value)) n = BigInt(value);
  else if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) n = BigInt(value.trim());
  else throw new TypeError(`${at}: integer expected, got ${JSON.stringify(String(value))}`);
  if (signed ? n < INT64_MIN || n > INT64_MAX : n < 0n || n > UINT64_MAX) throw new RangeError(`${at}: ${n} is out of range for ${signed ? 'int64' : 'uint64'}`);
  return n;
}

function enumNumber(schema: EnumSchema, value: unknown, at: string): number {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  const number = typeof value === 'string' ? schema.byName.get(value) : undefined;
  if (number === undefined) throw new TypeError(`${at}: ${JSON.stringify(value)} is not a value of ${schema.fullName}`);
  return number;
}

function isDefault(type: ValueType, value: unknown): boolean {
  if (type.kind === 'message') return false;
  if (type.kind === 'enum') return value === 0 || (typeof value === 'string' && type.byName.get(value) === 0);
  switch (type.scalar) {
    case 'string':
      return value === '';
    case 'bytes':
      return value instanceof Uint8Array && value.length === 0;
    case 'bool':
      return value === false;
    case 'int64':
    case 'uint64':
      return value === 0 || value === 0n || value === '0';
    default:
      return value === 0;
  }
}

const WIRE_TYPE_OF_SCALAR: Readonly<Record<ScalarType, number>> = {
  string: WIRE_LENGTH, bytes: WIRE_LENGTH, bool: WIRE_VARINT, int32: WIRE_VARINT, uint32: WIRE_VARINT,
  int64: WIRE_VARINT, uint64: WIRE_VARINT, double: WIRE_FIXED64, float: WIRE_FIXED32,
};

function wireTypeOf(type: ValueType): number {
  if (type.kind === 'message') return WIRE_LENGTH;
  if (type.kind === 'enum') return WIRE_VARINT;
  return WIRE_TYPE_OF_SCALAR[type.scalar];
}

/** Writes one value without its tag. */
function writeValue(w: Writer, type: ValueType, value: unknown, at: string): void {
  if (type.kind === 'message') {
    w.bytes(encodeMessage(type, value));
    return;
  }
  if (type.kind === 'enum') {
    const n = enumNumber(type, value, at);
    if (n >= 0) w.varint32(n);
    else w.varint64(BigInt(n));
    return;
  }
  switch (type.scalar) {
    case 'string':
      if (typeof value !== 'string') throw new TypeError(`${at}: string expected, got ${typeof value}`);
      w.string(value);
      return;
    case 'bytes':
      if (!(value instanceof Uint8Array)) throw new TypeError(`${at}: bytes expected`);
      w.bytes(value);
      return;
    case 'bool':
      if (typeof value !== 'boolean') throw new TypeError(`${at}: boolean expected, got ${typeof value}`);
      w.varint32(value ? 1 : 0);
      return;
    case 'int32':
    case 'uint32': {
      if (typeof value !== 'number' || !Number.isInteger(value)) throw new TypeError(`${at}: integer expected`);
      if (value >= 0) w.varint32(value);
      else w.varint64(BigInt(value));
      return;
    }
    case 'int64':
    case 'uint64':
      w.varint64(toInteger64(value, type.scalar === 'int64', at));
      return;
    case 'double':
    case 'float':
      if (typeof value !== 'number') throw new TypeError(`${at}: number expected`);
      if (type.scalar === 'double') w.double(value);
      else w.float(value);
      return;
    default: {
      const unknown: never = type.scalar;
      throw new Error(`unhandled scalar type ${String(unknown)}`);
    }
  }
}

function encodeMessage(schema: MessageSchema, message: unknown): Buffer {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    throw new TypeError(`cannot encode ${Array.isArray(message) ? 'an array' : typeof message} as ${schema.fullName}: object expected`);
  }
  const source = message as Record<string, unknown>;
  const w = new Writer();
  for (const field of schema.fields) {
    const value = source[field.name];
    if (value === undefined || value === null) continue;
    const at = where(schema, field);
    if (field.map) {
      if (typeof value !== 'object') throw new TypeError(`${at}: object expected for a map`);
      for (const [key, entryValue] of Object.entries(value as Record<string, unknown>)) {
        if (entryValue === undefined || entryValue === null) throw new TypeError(`${at}[${JSON.stringify(key)}]: no value`);
        const entry = new Writer();
        entry.tag(1, WIRE_LENGTH);
        entry.string(key);
        entry.tag(2, wireTypeOf(field.value));
        writeValue(entry, field.value, entryValue, at);
        w.tag(field.id, WIRE_LENGTH);
        w.bytes(entry.finish());
      }
      continue;
    }
    if (field.repeated) {
      if (!Array.isArray(value)) throw new TypeError(`${at}: array expected`);
      if (value.length === 0) continue;
      const wireType = wireTypeOf(field.value);
      if (wireType !== WIRE_LENGTH) {
        // proto3 packs repeated numbers.
        const packed = new Writer();
        for (const item of value) writeValue(packed, field.value, item, at);
        w.tag(field.id, WIRE_LENGTH);
        w.bytes(packed.finish());
      } else {
        for (const item of value) {
          w.tag(field.id, WIRE_LENGTH);
          writeValue(w, field.value, item, at);
        }
      }
      continue;
    }
    if (field.oneof === undefined && isDefault(field.value, value)) continue;
    w.tag(field.id, wireTypeOf(field.value));
    writeValue(w, field.value, value, at);
  }
  return w.finish();
}

/** Encodes a plain object as the named message. Throws a TypeError/RangeError naming the field on bad input. */
export function encode(typeName: string, message: unknown): Buffer {
  return encodeMessage(messageSchema(typeName), message);
}

// ---- decoding ---------------------------------------------------------------------------------

class Reader {
  pos: number;
  constructor(
    readonly buf: Uint8Array,
    start: number,
    readonly end: number,
    readonly typeName: string,
  ) {
    this.pos = start;
  }

  fail(problem: string): never {
    throw new ProtobufDecodeError(this.typeName, problem);
  }

  byte(): number {
    if (this.pos >= this.end) this.fail('truncated varint');
    return this.buf[this.pos++]!;
  }

  /** A varint as two 32-bit halves: [low, high], both unsigned. */
  varint(): [number, number] {
    let lo = 0;
    let b = 0;
    for (let i = 0; i < 4; i++) {
      b = this.byte();
      lo |= (b & 0x7f) << (7 * i);
      if (b < 0x80) return [lo >>> 0, 0];
    }
    b = this.byte();
    lo |= (b & 0x0f) << 28;
    let hi = (b & 0x7f) >> 4;
    if (b < 0x80) return [lo >>> 0, hi];
    for (let i = 0; i < 5; i++) {
      b = this.byte();
      hi |= (b & 0x7f) << (7 * i + 3);
      if (b < 0x80) return [lo >>> 0, hi >>> 0];
    }
    return this.fail('varint longer than 10 bytes');
  }

  /** A varint that must fit in 32 bits unsigned (tags and lengths). */
  length(): number {
    const [lo, hi] = this.varint();
    if (hi !== 0) this.fail('length or tag out of range');
    return lo;
  }

  take(n: number): number {
    if (n > this.end - this.pos) this.fail('truncated field');
    const start = this.pos;
    this.pos += n;
    return start;
  }

  skip(wireType: number, id: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_FIXED64:
        this.take(8);
        return;
      case WIRE_LENGTH:
        this.take(this.length());
        return;
      case WIRE_FIXED32:
        this.take(4);
        return;
      case WIRE_START_GROUP:
        for (;;) {
          const tag = this.length();
          if ((tag & 7) === WIRE_END_GROUP) {
            if (tag >>> 3 !== id) this.fail('mismatched end of group');
            return;
          }
          this.skip(tag & 7, tag >>> 3);
        }
      default:
        this.fail(`invalid wire type ${wireType}`);
    }
  }
}

function int64String(lo: number, hi: number, signed: boolean): string {
  if (hi === 0) return String(lo);
  const n = (BigInt(hi) << 32n) | BigInt(lo);
  return (signed ? BigInt.asIntN(64, n) : n).toString();
}

function defaultOf(type: ValueType): unknown {
  if (type.kind === 'message') return null;
  if (type.kind === 'enum') return type.byNumber.get(0) ?? 0;
  switch (type.scalar) {
    case 'string':
      return '';
    case 'bytes':
      return Buffer.alloc(0);
    case 'bool':
      return false;
    case 'int64':
    case 'uint64':
      return '0';
    default:
      return 0;
  }
}

function readValue(r: Reader, type: ValueType): unknown {
  if (type.kind === 'message') {
    const length = r.length();
    const start = r.take(length);
    return decodeMessage(type, r.buf, start, start + length);
  }
  if (type.kind === 'enum') {
    const n = r.varint()[0] | 0;
    return type.byNumber.get(n) ?? n;
  }
  switch (type.scalar) {
    case 'string': {
      const length = r.length();
      const start = r.take(length);
      return Buffer.from(r.buf.buffer, r.buf.byteOffset + start, length).toString('utf8');
    }
    case 'bytes': {
      const length = r.length();
      const start = r.take(length);
      return Buffer.from(r.buf.subarray(start, start + length));
    }
    case 'bool': {
      const [lo, hi] = r.varint();
      return lo !== 0 || hi !== 0;
    }
    case 'int32':
      return r.varint()[0] | 0;
    case 'uint32':
      return r.varint()[0];
    case 'int64':
    case 'uint64': {
      const [lo, hi] = r.varint();
      return int64String(lo, hi, type.scalar === 'int64');
    }
    case 'double': {
      const start = r.take(8);
      return Buffer.from(r.buf.buffer, r.buf.byteOffset + start, 8).readDoubleLE(0);
    }
    case 'float': {
      const start = r.take(4);
      return Buffer.from(r.buf.buffer, r.buf.byteOffset + start, 4).readFloatLE(0);
    }
    default: {
      const unknown: never = type.scalar;
      throw new Error(`unhandled scalar type ${String(unknown)}`);
    }
  }
}

function decodeMapEntry(r: Reader, field: FieldSchema, into: Record<string, unknown>): void {
  const length = r.length();
  const start = r.take(length);
  const entry = new Reader(r.buf, start, start + length, r.typeName);
  let key = '';
  let value: unknown = defaultOf(field.value);
  const valueWireType = wireTypeOf(field.value);
  while (entry.pos < entry.end) {
    const tag = entry.length();
    const id = tag >>> 3;
    const wireType = tag & 7;
    if (id === 1 && wireType === WIRE_LENGTH) key = readValue(entry, { kind: 'scalar', scalar: 'string' }) as string;
    else if (id === 2 && wireType === valueWireType) value = readValue(entry, field.value);
    else entry.skip(wireType, id);
  }
  into[key] = value;
}

function decodeMessage(schema: MessageSchema, buf: Uint8Array, start: number, end: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of schema.fields) {
    if (field.map) out[field.name] = {};
    else if (field.repeated) out[field.name] = [];
    else if (field.oneof === undefined) out[field.name] = defaultOf(field.value);
  }
  const r = new Reader(buf, start, end, schema.fullName);
  while (r.pos < r.end) {
    const tag = r.length();
    const id = tag >>> 3;
    const wireType = tag & 7;
    if (id === 0) r.fail('field number 0');
    const field = schema.byId.get(id);
    if (!field) {
      r.skip(wireType, id);
      continue;
    }
    const expected = field.map ? WIRE_LENGTH : wireTypeOf(field.value);
    if (field.map && wireType === WIRE_LENGTH) {
      decodeMapEntry(r, field, out[field.name] as Record<string, unknown>);
    } else if (field.repeated && wireType === WIRE_LENGTH && expected !== WIRE_LENGTH) {
      // Packed numbers (the proto3 form), accepted next to the unpacked one below.
      const length = r.length();
      const from = r.take(length);
      const packed = new Reader(r.buf, from, from + length, schema.fullName);
      const list = out[field.name] as unknown[];
      while (packed.pos < packed.end) list.push(readValue(packed, field.value));
    } else if (wireType !== expected) {
      r.skip(wireType, id); // a wire type the field cannot have: treated as an unknown field
    } else if (field.repeated) {
      (out[field.name] as unknown[]).push(readValue(r, field.value));
    } else {
      out[field.name] = readValue(r, field.value);
      if (field.oneof !== undefined) {
        // The last member seen wins; the others are cleared.
        const previous = out[field.oneof];
        if (typeof previous === 'string' && previous !== field.name) delete out[previous];
        out[field.oneof] = field.name;
      }
    }
  }
  return out;
}

/** Decodes the named message into a plain object (see the header for its shape). */
export function decode(typeName: string, bytes: Uint8Array): Record<string, unknown> {
  return decodeMessage(messageSchema(typeName), bytes, 0, bytes.length);
}
