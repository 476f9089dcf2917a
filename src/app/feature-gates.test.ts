import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFeatureGates, FeatureGateError } from './feature-gates.js';

test('defaults: all four on (ReleaseLeaderElectionOnExit on by our choice)', () => {
  const gates = parseFeatureGates([]);
  assert.deepEqual(
    [gates.annotateFsResize, gates.recoverVolumeExpansionFailure, gates.volumeAttributesClass, gates.releaseLeaderElectionOnExit],
    [true, true, true, true],
  );
  assert.equal(gates.explicit.size, 0);
});

test('explicit values, Go bool spellings, later values win', () => {
  const gates = parseFeatureGates(['VolumeAttributesClass=false,AnnotateFsResize=F', 'AnnotateFsResize=1']);
  assert.equal(gates.volumeAttributesClass, false);
  assert.equal(gates.annotateFsResize, true);
  assert.deepEqual([...gates.explicit].sort(), ['AnnotateFsResize', 'VolumeAttributesClass']);
});

test('unknown gate and bad value are errors', () => {
  assert.throws(() => parseFeatureGates(['Nope=true']), FeatureGateError);
  assert.throws(() => parseFeatureGates(['AnnotateFsResize=yes']), /invalid value of AnnotateFsResize=yes/);
  assert.throws(() => parseFeatureGates(['AnnotateFsResize']), /missing bool value/);
});
