import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pvcUpdateWorthReconciling } from './handlers.js';
import type { Pvc } from '../model/objects.js';
import { pvc } from '../../test/support/builders.js';

// The claim ns/c as the update handler sees it: 1Gi asked and had unless a row says otherwise.
const claim = { name: 'c', resourceVersion: '1', request: '1Gi', capacity: '1Gi' };

const rows: { name: string; before: Pvc; after: Pvc; recover: boolean; expect: boolean }[] = [
  { name: 'request grows', before: pvc(claim), after: pvc({ ...claim, resourceVersion: '2', request: '2Gi' }), recover: true, expect: true },
  { name: 'request shrinks, recovery on', before: pvc({ ...claim, request: '3Gi' }), after: pvc({ ...claim, resourceVersion: '2', request: '2Gi' }), recover: true, expect: true },
  { name: 'request shrinks, recovery off', before: pvc({ ...claim, request: '3Gi' }), after: pvc({ ...claim, resourceVersion: '2', request: '2Gi' }), recover: false, expect: false },
  { name: 'resync (same resourceVersion)', before: pvc(claim), after: pvc(claim), recover: true, expect: true },
  { name: 'label change only', before: pvc(claim), after: pvc({ ...claim, resourceVersion: '2', labels: { l: 'x' } }), recover: true, expect: false },
  { name: 'capacity grows (node finished)', before: pvc(claim), after: pvc({ ...claim, resourceVersion: '2', capacity: '2Gi' }), recover: false, expect: true },
  { name: 'resize status changes, recovery on', before: pvc(claim), after: pvc({ ...claim, resourceVersion: '2', resizeStatus: 'NodeResizeInfeasible' }), recover: true, expect: true },
  { name: 'resize status changes, recovery off', before: pvc(claim), after: pvc({ ...claim, resourceVersion: '2', resizeStatus: 'NodeResizeInfeasible' }), recover: false, expect: false },
  { name: 'storage-resizer annotation changes', before: pvc(claim), after: pvc({ ...claim, resourceVersion: '2', annotations: { 'volume.kubernetes.io/storage-resizer': 'ebs.csi.aws.com' } }), recover: true, expect: true },
  { name: 'malformed request does not throw', before: pvc(claim), after: pvc({ ...claim, resourceVersion: '2', request: '1.x.Gi' }), recover: true, expect: true },
];

for (const row of rows) {
  test(`PVC update filter: ${row.name}`, () => {
    assert.equal(pvcUpdateWorthReconciling(row.before, row.after, row.recover), row.expect);
  });
}
