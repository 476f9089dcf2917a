// Our hand-written csi.proto must be a faithful subset of the official CSI v1.12.0 csi.proto:
// every service, method, message, field and enum value we define exists there with the same
// name, number, type, label and streaming. Never skipped: a missing official proto fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import { parseCsiProto } from './descriptor-source.js';
import { officialCsiProtoPath } from '../../../test/support/official-csi-proto.js';

const ours = parseCsiProto();
const official = parseCsiProto(officialCsiProtoPath());
const pkg = ours.lookup('csi.v1') as protobuf.Namespace;

function typeRef(field: protobuf.Field): string {
  return field.resolvedType ? field.resolvedType.fullName : field.type;
}

function visit(ns: protobuf.NamespaceBase, out: { types: protobuf.Type[]; enums: protobuf.Enum[]; services: protobuf.Service[] }) {
  for (const nested of ns.nestedArray) {
    if (nested instanceof protobuf.Type) {
      out.types.push(nested);
      visit(nested, out);
    } else if (nested instanceof protobuf.Enum) out.enums.push(nested);
    else if (nested instanceof protobuf.Service) out.services.push(nested);
    else if (nested instanceof protobuf.Namespace) visit(nested, out);
  }
  return out;
}

const defs = visit(pkg, { types: [], enums: [], services: [] });

test('our proto defines the services, messages and enums the resizer needs', () => {
  assert.deepEqual(defs.services.map((s) => s.name).sort(), ['Controller', 'Identity', 'Node']);
  assert.ok(defs.types.length >= 20, `only ${defs.types.length} messages`);
  assert.ok(defs.enums.length >= 5);
});

for (const service of defs.services) {
  test(`service ${service.fullName} matches the official proto`, () => {
    const theirs = official.lookupService(service.fullName);
    for (const method of service.methodsArray) {
      const other = theirs.methods[method.name];
      assert.ok(other, `method ${service.name}.${method.name} missing in the official proto`);
      method.resolve();
      other.resolve();
      assert.equal(method.resolvedRequestType?.fullName, other.resolvedRequestType?.fullName, `${method.name} request type`);
      assert.equal(method.resolvedResponseType?.fullName, other.resolvedResponseType?.fullName, `${method.name} response type`);
      assert.equal(Boolean(method.requestStream), Boolean(other.requestStream), `${method.name} request streaming`);
      assert.equal(Boolean(method.responseStream), Boolean(other.responseStream), `${method.name} response streaming`);
    }
  });
}

for (const type of defs.types) {
  test(`message ${type.fullName} matches the official proto`, () => {
    const theirs = official.lookupType(type.fullName);
    for (const field of type.fieldsArray) {
      const other = theirs.fields[field.name];
      assert.ok(other, `field ${type.name}.${field.name} missing in the official proto`);
      const where = `${type.name}.${field.name}`;
      assert.equal(field.id, other.id, `${where} number`);
      assert.equal(typeRef(field), typeRef(other), `${where} type`);
      assert.equal(field.repeated, other.repeated, `${where} repeated`);
      assert.equal(field.map, other.map, `${where} map`);
      assert.equal((field as unknown as { keyType?: string }).keyType, (other as unknown as { keyType?: string }).keyType, `${where} map key`);
      assert.equal(field.partOf?.name, other.partOf?.name, `${where} oneof`);
      assert.equal(field.options?.['(csi_secret)'] === true, other.options?.['(csi_secret)'] === true, `${where} csi_secret`);
    }
    // A secret field of the official message that we left out would be sent unstripped if added
    // later without its option; require every official field of our messages to be present.
    assert.deepEqual(type.fieldsArray.map((f) => f.name).sort(), theirs.fieldsArray.map((f) => f.name).sort(), `${type.name} fields`);
  });
}

for (const en of defs.enums) {
  test(`enum ${en.fullName} matches the official proto`, () => {
    const theirs = official.lookupEnum(en.fullName);
    for (const [name, number] of Object.entries(en.values)) {
      assert.equal(theirs.values[name], number, `${en.name}.${name}`);
    }
  });
}

test('the csi_secret extension has the official number and type', () => {
  const find = (root: protobuf.Root) => (root.lookup('csi.v1') as protobuf.Namespace).nestedArray.find(
    (n): n is protobuf.Field => n instanceof protobuf.Field && n.name === 'csi_secret',
  );
  const mine = find(ours);
  const theirs = find(official);
  assert.ok(mine && theirs);
  assert.equal(mine.id, 1059);
  assert.equal(mine.id, theirs.id);
  assert.equal(mine.type, theirs.type);
  assert.equal(mine.extend, theirs.extend);
});
