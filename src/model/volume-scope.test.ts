import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pv } from '../../test/support/builders.js';
import { nodeScopeDecision } from './volume-scope.js';

const node = { name: 'node-a', labels: { 'kubernetes.io/hostname': 'node-a' } };
const lvm = { driver: 'lvm.csi.io', volumeHandle: 'v' };
const onNode = (name: string) => [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [name] }] }];

test("node scope decision: this node's PV, another node's, one without node affinity", () => {
  assert.equal(nodeScopeDecision(pv({ ...lvm, nodeAffinity: onNode('node-a') }), node), 'included');
  assert.equal(nodeScopeDecision(pv({ ...lvm, nodeAffinity: onNode('node-b') }), node), 'excluded');
  assert.equal(nodeScopeDecision(pv(lvm), node), 'noNodeAffinity');
  // Pure: asking twice gives the same answer and nothing is remembered.
  assert.equal(nodeScopeDecision(pv(lvm), node), 'noNodeAffinity');
});

test('model/ is pure: its modules import only model/ and base/ (no logger, no I/O)', () => {
  const here = dirname(fileURLToPath(import.meta.url));
  const offenders: string[] = [];
  for (const file of readdirSync(here).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
    for (const [, spec] of readFileSync(join(here, file), 'utf8').matchAll(/^import\s[^;]*?from\s+'([^']+)'/gms)) {
      if (!spec!.startsWith('./') && !spec!.startsWith('../base/')) offenders.push(`${file}: ${spec}`);
    }
  }
  assert.deepEqual(offenders, []);
});
