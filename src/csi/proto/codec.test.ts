// Our codec against protobufjs (protobufjs-reference.ts) over the same descriptor: every message of
// every method the resizer calls, encoded by one and decoded by the other, both ways, with edge
// values; then what only the wire can show (unknown fields, truncation, bad input).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decode, encode, ProtobufDecodeError } from './codec.js';
import { CsiMethod, csiMethod } from './load.js';
import { referenceDecode, referenceEncode } from './protobufjs-reference.js';

const INT64_MAX = '9223372036854775807';
const INT64_MIN = '-9223372036854775808';

const mount = { mount: { fs_type: 'ext4', mount_flags: ['ro', 'noatime'], volume_mount_group: 'g' }, access_mode: { mode: 'SINGLE_NODE_WRITER' } };
const block = { block: {}, access_mode: { mode: 'MULTI_NODE_MULTI_WRITER' } };

// Samples per message type, as the resizer sends or drivers answer them.
const samples: Record<string, object[]> = {
  'csi.v1.GetPluginInfoRequest': [{}],
  'csi.v1.GetPluginInfoResponse': [
    { name: 'hostpath.csi.k8s.io', vendor_version: 'v1.2.3', manifest: { commit: 'abc', empty: '' } },
    { name: '', vendor_version: '', manifest: {} },
    { name: 'ünïcødé.csi/✓', vendor_version: 'x'.repeat(300), manifest: { 'k\u0000': 'v\n' } },
  ],
  'csi.v1.GetPluginCapabilitiesRequest': [{}],
  'csi.v1.GetPluginCapabilitiesResponse': [
    { capabilities: [{ service: { type: 'CONTROLLER_SERVICE' } }, { volume_expansion: { type: 'ONLINE' } }, { volume_expansion: { type: 'UNKNOWN' } }] },
    { capabilities: [] },
    { capabilities: [{}] },
  ],
  'csi.v1.ProbeRequest': [{}],
  'csi.v1.ProbeResponse': [{ ready: { value: true } }, { ready: { value: false } }, { ready: null }, {}],
  'csi.v1.ControllerGetCapabilitiesRequest': [{}],
  'csi.v1.ControllerGetCapabilitiesResponse': [
    { capabilities: [{ rpc: { type: 'EXPAND_VOLUME' } }, { rpc: { type: 'MODIFY_VOLUME' } }, { rpc: { type: 'SINGLE_NODE_MULTI_WRITER' } }, { rpc: {} }] },
    { capabilities: [] },
  ],
  'csi.v1.ControllerExpandVolumeRequest': [
    { volume_id: 'vol-1', capacity_range: { required_bytes: '1099511627776' }, secrets: { token: 's3cret' }, volume_capability: mount },
    { volume_id: 'vol-2', capacity_range: { required_bytes: INT64_MAX, limit_bytes: INT64_MAX }, secrets: {}, volume_capability: block },
    { volume_id: 'v', capacity_range: { required_bytes: '0', limit_bytes: '0' }, secrets: {}, volume_capability: null },
    { volume_id: 'v', capacity_range: { required_bytes: '9007199254740993' }, secrets: { a: '', b: 'x'.repeat(70_000) } },
    { volume_id: '', capacity_range: { required_bytes: INT64_MIN, limit_bytes: '-1' }, secrets: {} },
    { volume_id: 'v', capacity_range: { required_bytes: '1' }, secrets: {}, volume_capability: { mount: {}, access_mode: {} } },
  ],
  'csi.v1.ControllerExpandVolumeResponse': [
    { capacity_bytes: '2147483648', node_expansion_required: true },
    { capacity_bytes: '0', node_expansion_required: false },
    { capacity_bytes: INT64_MAX, node_expansion_required: false },
    { capacity_bytes: '4294967296', node_expansion_required: false },
    { capacity_bytes: '-5', node_expansion_required: false },
  ],
  'csi.v1.ControllerModifyVolumeRequest': [
    { volume_id: 'vol-1', secrets: { password: 'hunter2' }, mutable_parameters: { iops: '3000', throughput: '125' } },
    { volume_id: 'vol-1', secrets: {}, mutable_parameters: {} },
  ],
  'csi.v1.ControllerModifyVolumeResponse': [{}],
  'csi.v1.NodeGetCapabilitiesRequest': [{}],
  'csi.v1.NodeGetCapabilitiesResponse': [{ capabilities: [{ rpc: { type: 'EXPAND_VOLUME' } }, { rpc: { type: 'STAGE_UNSTAGE_VOLUME' } }] }, { capabilities: [] }],
};

test('samples cover every message of every method the resizer calls', () => {
  for (const path of Object.values(CsiMethod)) {
    const { requestTypeName, responseTypeName } = csiMethod(path);
    assert.ok(samples[requestTypeName], requestTypeName);
    assert.ok(samples[responseTypeName], responseTypeName);
  }
});

for (const [typeName, values] of Object.entries(samples)) {
  values.forEach((value, i) => {
    test(`${typeName} #${i}: decodes what protobufjs encodes exactly as protobufjs does`, () => {
      const bytes = referenceEncode(typeName, value);
      assert.deepStrictEqual(decode(typeName, bytes), referenceDecode(typeName, bytes));
    });
    test(`${typeName} #${i}: protobufjs reads what we encode as the same message`, () => {
      const ours = encode(typeName, value);
      assert.deepStrictEqual(referenceDecode(typeName, ours), referenceDecode(typeName, referenceEncode(typeName, value)));
      // And our own round trip gives the same plain object.
      assert.deepStrictEqual(decode(typeName, ours), referenceDecode(typeName, ours));
    });
  });
}

test('int64 edge values keep every digit both ways', () => {
  for (const bytes of ['0', '1', '-1', '2147483647', '2147483648', '4294967295', '4294967296', '9007199254740993', INT64_MAX, INT64_MIN]) {
    const wire = encode('csi.v1.ControllerExpandVolumeResponse', { capacity_bytes: bytes });
    assert.equal(decode('csi.v1.ControllerExpandVolumeResponse', wire)['capacity_bytes'], bytes);
    assert.equal(referenceDecode('csi.v1.ControllerExpandVolumeResponse', wire)['capacity_bytes'], bytes);
  }
  // A bigint and a safe number are accepted as input too.
  assert.deepStrictEqual(encode('csi.v1.CapacityRange', { required_bytes: 5n }), encode('csi.v1.CapacityRange', { required_bytes: '5' }));
  assert.deepStrictEqual(encode('csi.v1.CapacityRange', { required_bytes: 5 }), encode('csi.v1.CapacityRange', { required_bytes: '5' }));
});

test('defaults are not written (proto3); an empty oneof member and an empty wrapper are', () => {
  assert.equal(encode('csi.v1.ControllerExpandVolumeResponse', { capacity_bytes: '0', node_expansion_required: false }).length, 0);
  assert.equal(encode('csi.v1.ControllerModifyVolumeRequest', { volume_id: '', secrets: {}, mutable_parameters: {} }).length, 0);
  assert.deepStrictEqual([...encode('csi.v1.VolumeCapability', { block: {} })], [0x0a, 0x00]);
  assert.deepStrictEqual([...encode('csi.v1.ProbeResponse', { ready: { value: false } })], [0x0a, 0x00]);
  assert.deepStrictEqual(decode('csi.v1.ProbeResponse', Buffer.from([0x0a, 0x00])), { ready: { value: false } });
  assert.deepStrictEqual(decode('csi.v1.ProbeResponse', Buffer.alloc(0)), { ready: null });
});

test('unknown fields of every wire type are skipped, at the top and nested', () => {
  const known = referenceEncode('csi.v1.ControllerExpandVolumeResponse', { capacity_bytes: '7', node_expansion_required: true });
  const unknown = Buffer.from([
    0x48, 0x96, 0x01, // field 9, varint 150
    0x51, 1, 2, 3, 4, 5, 6, 7, 8, // field 10, fixed64
    0x5a, 0x03, 0x61, 0x62, 0x63, // field 11, bytes "abc"
    0x65, 1, 2, 3, 4, // field 12, fixed32
    0x6b, 0x08, 0x01, 0x6c, // field 13, a group holding field 1 = 1, then its end
  ]);
  const expected = { capacity_bytes: '7', node_expansion_required: true };
  assert.deepStrictEqual(decode('csi.v1.ControllerExpandVolumeResponse', Buffer.concat([unknown, known, unknown])), expected);
  // Nested: an unknown field inside each capability, and a future capability kind (field 3).
  const caps = Buffer.concat([
    Buffer.from([0x0a, 0x07, 0x0a, 0x02, 0x08, 0x09, 0x48, 0x96, 0x01]), // { rpc: { type: 9 } } + field 9
    Buffer.from([0x0a, 0x04, 0x1a, 0x02, 0x08, 0x01]), // { <field 3>: {...} }
  ]);
  assert.deepStrictEqual(decode('csi.v1.ControllerGetCapabilitiesResponse', caps), referenceDecode('csi.v1.ControllerGetCapabilitiesResponse', caps));
  assert.deepStrictEqual(decode('csi.v1.ControllerGetCapabilitiesResponse', caps), { capabilities: [{ rpc: { type: 'EXPAND_VOLUME' }, type: 'rpc' }, {}] });
});

test('an enum number the descriptor does not know stays a number, as protobufjs gives it', () => {
  const bytes = Buffer.from([0x0a, 0x04, 0x0a, 0x02, 0x08, 0x63]); // { rpc: { type: 99 } }
  assert.deepStrictEqual(decode('csi.v1.ControllerGetCapabilitiesResponse', bytes), referenceDecode('csi.v1.ControllerGetCapabilitiesResponse', bytes));
  assert.deepStrictEqual(decode('csi.v1.ControllerGetCapabilitiesResponse', bytes), { capabilities: [{ rpc: { type: 99 }, type: 'rpc' }] });
});

test('a map entry without key or value decodes to the defaults; a repeated key keeps the last', () => {
  const bytes = Buffer.from([
    0x1a, 0x00, // entry with neither key nor value
    0x1a, 0x06, 0x0a, 0x01, 0x6b, 0x12, 0x01, 0x31, // k = "1"
    0x1a, 0x06, 0x0a, 0x01, 0x6b, 0x12, 0x01, 0x32, // k = "2"
  ]);
  assert.deepStrictEqual(decode('csi.v1.GetPluginInfoResponse', bytes), { name: '', vendor_version: '', manifest: { '': '', k: '2' } });
  assert.deepStrictEqual(decode('csi.v1.GetPluginInfoResponse', bytes), referenceDecode('csi.v1.GetPluginInfoResponse', bytes));
});

test('the last oneof member on the wire wins', () => {
  const bytes = Buffer.concat([encode('csi.v1.VolumeCapability', { block: {} }), encode('csi.v1.VolumeCapability', { mount: { fs_type: 'xfs' } })]);
  assert.deepStrictEqual(decode('csi.v1.VolumeCapability', bytes), { access_mode: null, mount: { fs_type: 'xfs', mount_flags: [], volume_mount_group: '' }, access_type: 'mount' });
});

test('truncated or malformed input fails with a ProtobufDecodeError naming the message', () => {
  const good = encode('csi.v1.GetPluginInfoResponse', { name: 'driver.example.com', manifest: { a: 'b' } });
  const nameEnd = 2 + 'driver.example.com'.length; // a cut there leaves a shorter, valid message
  for (let cut = 1; cut < good.length; cut++) {
    if (cut === nameEnd) continue;
    assert.throws(() => decode('csi.v1.GetPluginInfoResponse', good.subarray(0, cut)), (err: unknown) => err instanceof ProtobufDecodeError && /GetPluginInfoResponse/.test(err.message), `cut at ${cut}`);
  }
  assert.throws(() => decode('csi.v1.ProbeResponse', Buffer.from([0x0f])), /invalid wire type 7/);
  assert.throws(() => decode('csi.v1.ProbeResponse', Buffer.from([0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])), /longer than 10 bytes/);
  assert.throws(() => decode('csi.v1.ProbeResponse', Buffer.from([0x00])), /field number 0/);
});

test('bad input to encode names the field', () => {
  assert.throws(() => encode('csi.v1.ControllerExpandVolumeRequest', []), /cannot encode an array as csi\.v1\.ControllerExpandVolumeRequest/);
  assert.throws(() => encode('csi.v1.ControllerExpandVolumeRequest', { volume_id: 7 }), /ControllerExpandVolumeRequest\.volume_id: string expected/);
  assert.throws(() => encode('csi.v1.CapacityRange', { required_bytes: '1e3' }), /CapacityRange\.required_bytes: integer expected/);
  assert.throws(() => encode('csi.v1.CapacityRange', { required_bytes: '9223372036854775808' }), RangeError);
  assert.throws(() => encode('csi.v1.VolumeCapability.AccessMode', { mode: 'SOMETIMES' }), /"SOMETIMES" is not a value of csi\.v1\.VolumeCapability\.AccessMode\.Mode/);
  assert.throws(() => encode('csi.v1.ControllerModifyVolumeRequest', { mutable_parameters: { a: 1 } }), /mutable_parameters: string expected/);
  assert.throws(() => encode('csi.v1.NoSuchMessage', {}), /no type csi\.v1\.NoSuchMessage/);
});
