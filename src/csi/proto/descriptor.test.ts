// The checked-in descriptor is exactly what csi.proto parses to, and the codecs built from it
// behave as the resizer relies on (snake_case names, int64 as strings, enums by name, oneof
// member names, secrets marked).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CSI_DESCRIPTOR_PATH, renderCsiDescriptorModule } from './descriptor-source.js';
import { CsiMethod, csiServiceDefinition, loadCsiProto } from './load.js';

test('csi-descriptor.ts matches csi.proto (regenerate: node --import tsx scripts/gen-csi-descriptor.ts)', () => {
  assert.equal(readFileSync(CSI_DESCRIPTOR_PATH, 'utf8'), renderCsiDescriptorModule());
});

test('every method the resizer calls has a definition with its path and message names', () => {
  const { methods } = loadCsiProto();
  assert.deepEqual([...methods.keys()].sort(), Object.values(CsiMethod).sort());
  const expand = methods.get(CsiMethod.ControllerExpandVolume)!;
  assert.equal(expand.path, '/csi.v1.Controller/ControllerExpandVolume');
  assert.equal(expand.requestTypeName, 'csi.v1.ControllerExpandVolumeRequest');
  assert.equal(expand.responseTypeName, 'csi.v1.ControllerExpandVolumeResponse');
  assert.equal(expand.requestStream, false);
  assert.equal(expand.responseStream, false);
  assert.deepEqual(Object.keys(csiServiceDefinition('Identity')).sort(), ['GetPluginCapabilities', 'GetPluginInfo', 'Probe']);
});

test('codecs round-trip with int64 as strings, enums by name, defaults and oneof member names', () => {
  const expand = loadCsiProto().methods.get(CsiMethod.ControllerExpandVolume)!;
  const request = {
    volume_id: 'vol-1',
    capacity_range: { required_bytes: '1099511627776', limit_bytes: '0' },
    secrets: { token: 's3cret' },
    volume_capability: { mount: { fs_type: 'ext4', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
  };
  const bytes = expand.requestSerialize(request);
  assert.ok(Buffer.isBuffer(bytes));
  const decoded = expand.requestDeserialize(bytes) as Record<string, unknown>;
  assert.deepEqual(decoded['capacity_range'], { required_bytes: '1099511627776', limit_bytes: '0' });
  assert.deepEqual(decoded['secrets'], { token: 's3cret' });
  const capability = decoded['volume_capability'] as Record<string, unknown>;
  assert.equal(capability['access_type'], 'mount');
  assert.deepEqual(capability['access_mode'], { mode: 'SINGLE_NODE_WRITER' });

  const response = expand.responseDeserialize(expand.responseSerialize({ capacity_bytes: '5', node_expansion_required: true }));
  assert.deepEqual(response, { capacity_bytes: '5', node_expansion_required: true });
  assert.throws(() => expand.requestSerialize([] as unknown as object), /array/);
});

test('the csi_secret option survives in the descriptor', () => {
  const type = loadCsiProto().root.lookupType('csi.v1.ControllerExpandVolumeRequest');
  assert.equal(type.fields['secrets']?.options?.['(csi_secret)'], true);
  assert.equal(type.fields['volume_id']?.options?.['(csi_secret)'], undefined);
});
