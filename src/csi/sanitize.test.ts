import { test } from 'node:test';
import assert from 'node:assert/strict';
import { create } from '@bufbuild/protobuf';
import { STRIPPED, stripSecrets } from './sanitize.js';
import {
  ControllerExpandVolumeRequestSchema,
  ControllerExpandVolumeResponseSchema,
  ControllerGetCapabilitiesResponseSchema,
  ControllerModifyVolumeRequestSchema,
  ControllerServiceCapability_RPC_Type,
  ProbeResponseSchema,
  VolumeCapability_AccessMode_Mode,
} from './proto/gen/csi_pb.js';

test('secrets of an expand request are stripped, everything else kept in proto field names', () => {
  const request = create(ControllerExpandVolumeRequestSchema, {
    volumeId: 'vol-1',
    capacityRange: { requiredBytes: 2147483648n },
    secrets: { password: 'hunter2', token: 'abc' },
    volumeCapability: {
      accessType: { case: 'mount', value: { fsType: 'ext4', mountFlags: ['ro'] } },
      accessMode: { mode: VolumeCapability_AccessMode_Mode.SINGLE_NODE_WRITER },
    },
  });
  const out = stripSecrets(ControllerExpandVolumeRequestSchema, request);
  assert.deepEqual(out, {
    volume_id: 'vol-1',
    capacity_range: { required_bytes: '2147483648' },
    secrets: STRIPPED,
    volume_capability: { mount: { fs_type: 'ext4', mount_flags: ['ro'] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
  });
  assert.ok(!JSON.stringify(out).includes('hunter2'));
  // The message is not modified.
  assert.equal(request.secrets['password'], 'hunter2');
});

test('secrets of a modify request are stripped; mutable parameters kept', () => {
  const out = stripSecrets(
    ControllerModifyVolumeRequestSchema,
    create(ControllerModifyVolumeRequestSchema, {
      volumeId: 'v',
      secrets: { k: 's3cr3t' },
      mutableParameters: { iops: '3000' },
    }),
  );
  assert.deepEqual(out, { volume_id: 'v', secrets: STRIPPED, mutable_parameters: { iops: '3000' } });
});

test('an empty secrets map is left out, as proto3 JSON leaves out every default', () => {
  assert.deepEqual(stripSecrets(ControllerModifyVolumeRequestSchema, create(ControllerModifyVolumeRequestSchema, { volumeId: 'v' })), { volume_id: 'v' });
});

test('responses and nested messages pass through; int64 becomes a decimal string', () => {
  assert.deepEqual(stripSecrets(ProbeResponseSchema, create(ProbeResponseSchema, { ready: true })), { ready: true });
  assert.deepEqual(
    stripSecrets(
      ControllerExpandVolumeResponseSchema,
      create(ControllerExpandVolumeResponseSchema, {
        capacityBytes: 9223372036854775807n,
        nodeExpansionRequired: true,
      }),
    ),
    { capacity_bytes: '9223372036854775807', node_expansion_required: true },
  );
  assert.deepEqual(
    stripSecrets(
      ControllerGetCapabilitiesResponseSchema,
      create(ControllerGetCapabilitiesResponseSchema, {
        capabilities: [{ type: { case: 'rpc', value: { type: ControllerServiceCapability_RPC_Type.EXPAND_VOLUME } } }],
      }),
    ),
    { capabilities: [{ rpc: { type: 'EXPAND_VOLUME' } }] },
  );
});
