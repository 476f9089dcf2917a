// The checked-in descriptor is exactly what csi.proto parses to, and the method table and schema
// built from it are what the resizer relies on (paths, message names, secrets marked).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CSI_DESCRIPTOR_PATH, renderCsiDescriptorModule } from './descriptor-source.js';
import { CsiMethod, csiMethod } from './load.js';
import { messageSchema } from './codec.js';
import { csiServiceDefinition } from './protobufjs-reference.js';

test('csi-descriptor.ts matches csi.proto (regenerate: node --import tsx scripts/gen-csi-descriptor.ts)', () => {
  assert.equal(readFileSync(CSI_DESCRIPTOR_PATH, 'utf8'), renderCsiDescriptorModule());
});

test('every method the resizer calls has a definition with its path and message names', () => {
  for (const path of Object.values(CsiMethod)) {
    const definition = csiMethod(path);
    assert.equal(definition.path, path);
    assert.match(definition.requestTypeName, /^csi\.v1\.\w+Request$/);
    assert.match(definition.responseTypeName, /^csi\.v1\.\w+Response$/);
    assert.ok(messageSchema(definition.requestTypeName));
    assert.ok(messageSchema(definition.responseTypeName));
  }
  const expand = csiMethod(CsiMethod.ControllerExpandVolume);
  assert.equal(expand.requestTypeName, 'csi.v1.ControllerExpandVolumeRequest');
  assert.equal(expand.responseTypeName, 'csi.v1.ControllerExpandVolumeResponse');
  assert.deepEqual(Object.keys(csiServiceDefinition('Identity')).sort(), ['GetPluginCapabilities', 'GetPluginInfo', 'Probe']);
});

test('the csi_secret option survives in the descriptor and the schema', () => {
  const expand = messageSchema('csi.v1.ControllerExpandVolumeRequest');
  assert.equal(expand.byName.get('secrets')?.secret, true);
  assert.equal(expand.byName.get('volume_id')?.secret, false);
  const modify = messageSchema('csi.v1.ControllerModifyVolumeRequest');
  assert.deepEqual(modify.fields.filter((f) => f.secret).map((f) => f.name), ['secrets']);
});
