// Our hand-written csi.proto must be a faithful subset of the official CSI v1.13.0 csi.proto:
// every service, method, message, field and enum value we define exists there with the same
// name, number, type, label and streaming. The check reads our side from the generated
// descriptors the resizer runs with (gen/csi_pb.ts), and the official side from the official
// csi.proto compiled by buf. Never skipped: a missing official proto fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createFileRegistry,
  fromBinary,
  getOption,
  type DescEnum,
  type DescExtension,
  type DescField,
  type DescMessage,
  type DescMethod,
  type DescService,
} from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { csi_secret, file_csi } from './gen/csi_pb.js';
import { officialCsiProtoPath } from '../../../test/support/official-csi-proto.js';
import { buf } from '../../../test/support/buf-cli.js';

function officialRegistry() {
  const dir = mkdtempSync(join(tmpdir(), 'rz-csi-spec-'));
  try {
    buf(['build', officialCsiProtoPath(), '-o', join(dir, 'csi.binpb')]);
    return createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(join(dir, 'csi.binpb'))));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const official = officialRegistry();
const officialSecret = official.getExtension('csi.v1.csi_secret');

function allMessages(messages: readonly DescMessage[]): DescMessage[] {
  return messages.flatMap((m) => [m, ...allMessages(m.nestedMessages)]);
}
function allEnums(messages: readonly DescMessage[], top: readonly DescEnum[]): DescEnum[] {
  return [...top, ...allMessages(messages).flatMap((m) => m.nestedEnums)];
}

/** What must match about a field, as one comparable string. */
function shape(field: DescField, secret: DescExtension | undefined): string {
  const value = field.message?.typeName ?? field.enum?.typeName ?? String(field.scalar);
  const key = field.fieldKind === 'map' ? String(field.mapKey) : '';
  const isSecret = secret ? getOption(field, secret as typeof csi_secret) : false;
  return `#${field.number} ${field.fieldKind} ${key} ${value} oneof=${field.oneof?.name ?? ''} secret=${isSecret}`;
}

const messages = allMessages(file_csi.messages);
const enums = allEnums(file_csi.messages, file_csi.enums);

test('our proto defines the services, messages and enums the resizer needs', () => {
  assert.deepEqual(file_csi.services.map((s) => s.name).sort(), ['Controller', 'Identity', 'Node']);
  assert.ok(messages.length >= 20, `only ${messages.length} messages`);
  assert.ok(enums.length >= 5);
});

for (const service of file_csi.services as DescService[]) {
  test(`service ${service.typeName} matches the official proto`, () => {
    const theirs = official.getService(service.typeName);
    assert.ok(theirs, `service ${service.typeName} missing in the official proto`);
    for (const method of service.methods) {
      const other: DescMethod | undefined = theirs.methods.find((m) => m.name === method.name);
      assert.ok(other, `method ${service.name}.${method.name} missing in the official proto`);
      assert.equal(method.input.typeName, other.input.typeName, `${method.name} request type`);
      assert.equal(method.output.typeName, other.output.typeName, `${method.name} response type`);
      assert.equal(method.methodKind, other.methodKind, `${method.name} streaming`);
    }
  });
}

for (const message of messages) {
  test(`message ${message.typeName} matches the official proto`, () => {
    const theirs = official.getMessage(message.typeName);
    assert.ok(theirs, `message ${message.typeName} missing in the official proto`);
    for (const field of message.fields) {
      const other: DescField | undefined = theirs.fields.find((f) => f.name === field.name);
      assert.ok(other, `field ${message.name}.${field.name} missing in the official proto`);
      assert.equal(shape(field, csi_secret), shape(other, officialSecret), `${message.name}.${field.name}`);
    }
    // A secret field of the official message that we left out would be sent unstripped if added
    // later without its option; require every official field of our messages to be present.
    assert.deepEqual(message.fields.map((f) => f.name).sort(), theirs.fields.map((f) => f.name).sort(), `${message.name} fields`);
  });
}

for (const en of enums) {
  test(`enum ${en.typeName} matches the official proto`, () => {
    const theirs = official.getEnum(en.typeName);
    assert.ok(theirs, `enum ${en.typeName} missing in the official proto`);
    for (const value of en.values) {
      assert.equal(theirs.values.find((v) => v.name === value.name)?.number, value.number, `${en.name}.${value.name}`);
    }
  });
}

test('the csi_secret extension has the official number, type and extendee', () => {
  assert.ok(officialSecret);
  assert.equal(csi_secret.number, 1059);
  assert.equal(csi_secret.number, officialSecret.number);
  assert.equal(csi_secret.scalar, officialSecret.scalar);
  assert.equal(csi_secret.extendee.typeName, officialSecret.extendee.typeName);
});
