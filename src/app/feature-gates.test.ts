import { test } from 'node:test';
import assert from 'node:assert/strict';
import { featureGatesFrom, FeatureGateError } from './feature-gates.js';
import { MapStringBoolValue } from './go-flags.js';

function gatesOf(...values: string[]) {
  const flag = new MapStringBoolValue();
  for (const value of values) flag.set(value);
  return featureGatesFrom(flag.entries);
}

test('defaults: all four on (ReleaseLeaderElectionOnExit on by our choice)', () => {
  const gates = gatesOf();
  assert.deepEqual(
    [gates.annotateFsResize, gates.recoverVolumeExpansionFailure, gates.volumeAttributesClass, gates.releaseLeaderElectionOnExit],
    [true, true, true, true],
  );
  assert.equal(gates.explicit.size, 0);
});

test('explicit values, Go bool spellings, later values win', () => {
  const gates = gatesOf('VolumeAttributesClass=false,AnnotateFsResize=F', 'AnnotateFsResize=1');
  assert.equal(gates.volumeAttributesClass, false);
  assert.equal(gates.annotateFsResize, true);
  assert.deepEqual([...gates.explicit].sort(), ['AnnotateFsResize', 'VolumeAttributesClass']);
});

test('unknown gate and bad value are errors', () => {
  assert.throws(() => gatesOf('Nope=true'), FeatureGateError);
  assert.throws(() => gatesOf('AnnotateFsResize=yes'), /invalid value of AnnotateFsResize/);
  assert.throws(() => gatesOf('AnnotateFsResize'), /malformed pair/);
});
