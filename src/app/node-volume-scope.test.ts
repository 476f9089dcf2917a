import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeVolumeScope } from './node-volume-scope.js';
import { createLogger } from '../observability/log/logger.js';
import { pv } from '../../test/support/builders.js';

const node = { name: 'node-a', labels: { 'kubernetes.io/hostname': 'node-a' } };
const lvm = { driver: 'lvm.csi.io', volumeHandle: 'v' };
const onNode = (name: string) => [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [name] }] }];

test('node scope: a PV without node affinity is left alone and reported once', () => {
  const lines: string[] = [];
  const scope = new NodeVolumeScope(node, createLogger({ verbosity: 0, format: 'text', write: (l) => lines.push(l) }));
  assert.equal(scope.includes(pv({ ...lvm, name: 'shared' })), false);
  assert.equal(scope.includes(pv({ ...lvm, name: 'shared' })), false);
  assert.equal(scope.includes(pv({ ...lvm, nodeAffinity: onNode('node-a') })), true);
  assert.equal(scope.includes(pv({ ...lvm, name: 'elsewhere', nodeAffinity: onNode('node-b') })), false);
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /PV has no node affinity; node-local resizers leave it alone.*pv="shared".*node="node-a"/);
});
