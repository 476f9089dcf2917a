import { test } from 'node:test';
import assert from 'node:assert/strict';
import { STRIPPED, stripSecrets } from './sanitize.js';

test('secrets of an expand request are stripped, everything else kept', () => {
  const request = {
    volume_id: 'vol-1',
    capacity_range: { required_bytes: '2147483648' },
    secrets: { password: 'hunter2', token: 'abc' },
    volume_capability: { mount: { fs_type: 'ext4', mount_flags: ['ro'] }, access_mode: { mode: 'SINGLE_NODE_WRITER' }, access_type: 'mount' },
  };
  const out = stripSecrets('csi.v1.ControllerExpandVolumeRequest', request) as Record<string, unknown>;
  assert.equal(out['secrets'], STRIPPED);
  assert.equal(out['volume_id'], 'vol-1');
  assert.deepEqual(out['capacity_range'], { required_bytes: '2147483648' });
  assert.deepEqual(out['volume_capability'], request.volume_capability);
  assert.ok(!JSON.stringify(out).includes('hunter2'));
  // The input is not modified.
  assert.equal(request.secrets.password, 'hunter2');
});

test('secrets of a modify request are stripped; mutable parameters kept', () => {
  const out = stripSecrets('csi.v1.ControllerModifyVolumeRequest', {
    volume_id: 'v', secrets: { k: 's3cr3t' }, mutable_parameters: { iops: '3000' },
  }) as Record<string, unknown>;
  assert.equal(out['secrets'], STRIPPED);
  assert.deepEqual(out['mutable_parameters'], { iops: '3000' });
});

test('responses and nested messages pass through; bigint becomes a string', () => {
  assert.deepEqual(stripSecrets('csi.v1.ProbeResponse', { ready: { value: true } }), { ready: { value: true } });
  assert.deepEqual(stripSecrets('csi.v1.ControllerExpandVolumeResponse', { capacity_bytes: 5n, node_expansion_required: true }), {
    capacity_bytes: '5', node_expansion_required: true,
  });
  assert.deepEqual(
    stripSecrets('csi.v1.ControllerGetCapabilitiesResponse', { capabilities: [{ rpc: { type: 'EXPAND_VOLUME' }, type: 'rpc' }] }),
    { capabilities: [{ rpc: { type: 'EXPAND_VOLUME' }, type: 'rpc' }] },
  );
});

test('unknown object-valued fields are not copied', () => {
  const out = stripSecrets('csi.v1.ControllerModifyVolumeRequest', { volume_id: 'v', extra: { secret: 'x' } }) as Record<string, unknown>;
  assert.equal(out['extra'], '<unknown>');
});
