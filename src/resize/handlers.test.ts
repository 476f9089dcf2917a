import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pvcUpdateWorthReconciling } from './handlers.js';
import type { Pvc } from '../model/objects.js';

function pvc(o: { rv?: string; request?: string; capacity?: string; status?: string; label?: string; resizer?: string }): Pvc {
  return {
    metadata: {
      name: 'c', namespace: 'ns', resourceVersion: o.rv ?? '1',
      labels: o.label ? { l: o.label } : {},
      annotations: o.resizer ? { 'volume.kubernetes.io/storage-resizer': o.resizer } : {},
    },
    spec: { resources: { requests: { storage: o.request ?? '1Gi' } } },
    status: {
      capacity: { storage: o.capacity ?? '1Gi' },
      ...(o.status ? { allocatedResourceStatuses: { storage: o.status } } : {}),
    },
  };
}

const rows: { name: string; before: Pvc; after: Pvc; recover: boolean; expect: boolean }[] = [
  { name: 'request grows', before: pvc({}), after: pvc({ rv: '2', request: '2Gi' }), recover: true, expect: true },
  { name: 'request shrinks, recovery on', before: pvc({ request: '3Gi' }), after: pvc({ rv: '2', request: '2Gi' }), recover: true, expect: true },
  { name: 'request shrinks, recovery off', before: pvc({ request: '3Gi' }), after: pvc({ rv: '2', request: '2Gi' }), recover: false, expect: false },
  { name: 'resync (same resourceVersion)', before: pvc({}), after: pvc({}), recover: true, expect: true },
  { name: 'label change only', before: pvc({}), after: pvc({ rv: '2', label: 'x' }), recover: true, expect: false },
  { name: 'capacity grows (node finished)', before: pvc({}), after: pvc({ rv: '2', capacity: '2Gi' }), recover: false, expect: true },
  { name: 'resize status changes, recovery on', before: pvc({}), after: pvc({ rv: '2', status: 'NodeResizeInfeasible' }), recover: true, expect: true },
  { name: 'resize status changes, recovery off', before: pvc({}), after: pvc({ rv: '2', status: 'NodeResizeInfeasible' }), recover: false, expect: false },
  { name: 'storage-resizer annotation changes', before: pvc({}), after: pvc({ rv: '2', resizer: 'ebs.csi.aws.com' }), recover: true, expect: true },
  { name: 'malformed request does not throw', before: pvc({}), after: pvc({ rv: '2', request: '1.x.Gi' }), recover: true, expect: true },
];

for (const row of rows) {
  test(`PVC update filter: ${row.name}`, () => {
    assert.equal(pvcUpdateWorthReconciling(row.before, row.after, row.recover), row.expect);
  });
}
