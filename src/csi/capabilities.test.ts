import { test } from 'node:test';
import assert from 'node:assert/strict';
import { accessModeFor, UnsupportedAccessModeError, volumeCapabilityFor } from './capabilities.js';

// The table of docs/behavior.md §3.8: [PV access modes, without SNMW, with SNMW]; 'error' throws.
const table: [string[], string, string][] = [
  [['ReadWriteOncePod'], 'SINGLE_NODE_WRITER', 'SINGLE_NODE_SINGLE_WRITER'],
  [['ReadWriteOncePod', 'ReadWriteOnce'], 'error', 'error'],
  [['ReadWriteMany', 'ReadWriteOncePod'], 'error', 'error'],
  [['ReadWriteMany'], 'MULTI_NODE_MULTI_WRITER', 'MULTI_NODE_MULTI_WRITER'],
  [['ReadWriteMany', 'ReadOnlyMany', 'ReadWriteOnce'], 'MULTI_NODE_MULTI_WRITER', 'MULTI_NODE_MULTI_WRITER'],
  [['ReadOnlyMany', 'ReadWriteOnce'], 'error', 'error'],
  [['ReadOnlyMany'], 'MULTI_NODE_READER_ONLY', 'MULTI_NODE_READER_ONLY'],
  [['ReadWriteOnce'], 'SINGLE_NODE_WRITER', 'SINGLE_NODE_MULTI_WRITER'],
  [[], 'error', 'error'],
  [['SomethingElse'], 'error', 'error'],
];

for (const [modes, without, withSnmw] of table) {
  for (const [snmw, expected] of [
    [false, without],
    [true, withSnmw],
  ] as const) {
    test(`access modes [${modes.join(',')}] ${snmw ? 'with' : 'without'} SINGLE_NODE_MULTI_WRITER → ${expected}`, () => {
      if (expected === 'error') {
        assert.throws(() => accessModeFor(modes, snmw), UnsupportedAccessModeError);
      } else {
        assert.equal(accessModeFor(modes, snmw), expected);
      }
    });
  }
}

// csi-lib-utils' texts, which upstream's events and conditions carry after "failed to get capabilities of volume <pv> with ".
const messages: [string[], string][] = [
  [['ReadWriteOncePod', 'ReadWriteOnce'], 'Kubernetes does not support use of ReadWriteOncePod with other access modes on the same PersistentVolume'],
  [['ReadOnlyMany', 'ReadWriteOnce'], 'CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume'],
  [[], 'unsupported AccessMode combination: []'],
  [['SomethingElse', 'Other'], 'unsupported AccessMode combination: [SomethingElse Other]'],
];
for (const [modes, message] of messages) {
  test(`access modes [${modes.join(',')}] fail with "${message}"`, () => {
    for (const snmw of [false, true]) {
      assert.throws(
        () => accessModeFor(modes, snmw),
        (err: Error) => err instanceof UnsupportedAccessModeError && err.message === message,
      );
    }
  });
}

test('a repeated ReadWriteOncePod is still alone (modes are a set)', () => {
  assert.equal(accessModeFor(['ReadWriteOncePod', 'ReadWriteOncePod'], true), 'SINGLE_NODE_SINGLE_WRITER');
});

test('Block volume mode gives a block capability', () => {
  const cap = volumeCapabilityFor({ volumeMode: 'Block', accessModes: ['ReadWriteOnce'], csi: { fsType: 'ext4' } }, { supportsSingleNodeMultiWriter: false });
  assert.deepEqual(cap, { accessType: 'block', accessMode: 'SINGLE_NODE_WRITER' });
});

test('Filesystem (or unset) volume mode gives a mount capability with fs type and mount options', () => {
  const cap = volumeCapabilityFor(
    { volumeMode: 'Filesystem', accessModes: ['ReadWriteOnce'], mountOptions: ['noatime', 'discard'], csi: { fsType: 'xfs' } },
    { supportsSingleNodeMultiWriter: true },
  );
  assert.deepEqual(cap, { accessType: 'mount', fsType: 'xfs', mountFlags: ['noatime', 'discard'], accessMode: 'SINGLE_NODE_MULTI_WRITER' });
  const bare = volumeCapabilityFor({ accessModes: ['ReadOnlyMany'] }, { supportsSingleNodeMultiWriter: false });
  assert.deepEqual(bare, { accessType: 'mount', fsType: '', mountFlags: [], accessMode: 'MULTI_NODE_READER_ONLY' });
});
