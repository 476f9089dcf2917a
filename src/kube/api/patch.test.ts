import { test } from 'node:test';
import assert from 'node:assert/strict';
import { patchContentType, patchFromDraft, PatchType, twoWayMergePatch, withResourceVersion } from './patch.js';

// The expected texts below are what apimachinery v0.36's CreateTwoWayMergePatch returns for the
// same objects marshalled from the Go types (checked with a throwaway Go program, not committed).

const T = '2026-12-01T09:00:00Z';
const condition = (type: string, extra: Record<string, unknown> = {}) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: T, ...extra });

test('withResourceVersion injects the precondition in sorted key order without touching the input', () => {
  const p = { status: { phase: 'Bound' } };
  assert.equal(JSON.stringify(withResourceVersion(p, '42')), '{"metadata":{"resourceVersion":"42"},"status":{"phase":"Bound"}}');
  assert.deepEqual(p, { status: { phase: 'Bound' } });
  assert.equal(withResourceVersion(p, undefined), p);
  const annotated = { metadata: { annotations: { a: null } }, status: {} };
  assert.equal(JSON.stringify(withResourceVersion(annotated, '7')), '{"metadata":{"annotations":{"a":null},"resourceVersion":"7"},"status":{}}');
});

test('content types are explicit per patch type', () => {
  assert.equal(patchContentType(PatchType.StrategicMerge), 'application/strategic-merge-patch+json');
  assert.equal(patchContentType(PatchType.Merge), 'application/merge-patch+json');
});

const cases: { name: string; before: object; after: object; expect: string }[] = [
  {
    name: 'a condition appended to a list: the new one, and the order with it last',
    before: { status: { conditions: [condition('Resizing')], allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' } } },
    after: {
      status: {
        conditions: [
          condition('Resizing'),
          condition('ControllerResizeError', { message: 'failed to expand pvc with rpc error: code = OutOfRange desc = too big' }),
        ],
        allocatedResourceStatuses: { storage: 'ControllerResizeInfeasible' },
      },
    },
    expect:
      '{"status":{"$setElementOrder/conditions":[{"type":"Resizing"},{"type":"ControllerResizeError"}],' +
      '"allocatedResourceStatuses":{"storage":"ControllerResizeInfeasible"},' +
      '"conditions":[{"lastProbeTime":null,"lastTransitionTime":"2026-12-01T09:00:00Z","message":"failed to expand pvc with rpc error: code = OutOfRange desc = too big","status":"True","type":"ControllerResizeError"}]}}',
  },
  {
    name: "emptied list and map are absent in Go's JSON: null, not per-element deletes",
    before: {
      metadata: { annotations: { 'volume.kubernetes.io/node-expansion-not-required': 'true' } },
      status: { capacity: { storage: '1Gi' }, conditions: [condition('Resizing')], allocatedResourceStatuses: { storage: 'NodeResizePending' } },
    },
    after: {
      metadata: { annotations: { 'volume.kubernetes.io/node-expansion-not-required': 'true' } },
      status: { capacity: { storage: '2Gi' }, conditions: [], allocatedResourceStatuses: {} },
    },
    expect: '{"status":{"allocatedResourceStatuses":null,"capacity":{"storage":"2Gi"},"conditions":null}}',
  },
  {
    name: 'a removed condition: $patch delete, and the order of what is left',
    before: { status: { conditions: [condition('ModifyingVolume', { lastProbeTime: T }), condition('Resizing')] } },
    after: { status: { conditions: [condition('Resizing')] } },
    expect: '{"status":{"$setElementOrder/conditions":[{"type":"Resizing"}],"conditions":[{"$patch":"delete","type":"ModifyingVolume"}]}}',
  },
  {
    name: 'a changed condition: only its changed fields with the merge key; a removed field is null',
    before: { status: { conditions: [condition('ModifyingVolume', { message: 'a' }), condition('ModifyVolumeError', { reason: 'Internal', message: 'x' })] } },
    after: { status: { conditions: [condition('ModifyingVolume', { message: 'b' }), condition('ModifyVolumeError', { reason: 'Internal', message: '' })] } },
    expect:
      '{"status":{"$setElementOrder/conditions":[{"type":"ModifyingVolume"},{"type":"ModifyVolumeError"}],' +
      '"conditions":[{"message":"b","type":"ModifyingVolume"},{"message":null,"type":"ModifyVolumeError"}]}}',
  },
  {
    name: 'the same conditions in another order: only the order list',
    before: { status: { conditions: [condition('A'), condition('B')] } },
    after: { status: { conditions: [condition('B'), condition('A')] } },
    expect: '{"status":{"$setElementOrder/conditions":[{"type":"B"},{"type":"A"}]}}',
  },
  {
    name: 'a first list is sent whole, without an order list',
    before: { status: {} },
    after: { status: { conditions: [condition('Resizing')] } },
    expect: '{"status":{"conditions":[{"lastProbeTime":null,"lastTransitionTime":"2026-12-01T09:00:00Z","status":"True","type":"Resizing"}]}}',
  },
  {
    name: 'the last annotation removed: the whole map is null',
    before: { metadata: { annotations: { 'volume.alpha.kubernetes.io/pre-resize-capacity': '1Gi' } }, spec: { capacity: { storage: '2Gi' } } },
    after: { metadata: { annotations: {} }, spec: { capacity: { storage: '2Gi' } } },
    expect: '{"metadata":{"annotations":null}}',
  },
  {
    name: 'one of several annotations removed: that key is null; an empty annotation value stays',
    before: { metadata: { annotations: { a: '', b: '1' } } },
    after: { metadata: { annotations: { a: '' } } },
    expect: '{"metadata":{"annotations":{"b":null}}}',
  },
  {
    name: 'a struct replaced by nothing and a new pointer field',
    before: { status: { modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'InProgress' } } },
    after: { status: { currentVolumeAttributesClassName: 'gold' } },
    expect: '{"status":{"currentVolumeAttributesClassName":"gold","modifyVolumeStatus":null}}',
  },
  {
    name: "an empty string field is left out as Go's omitempty does",
    before: { status: {} },
    after: { status: { modifyVolumeStatus: { targetVolumeAttributesClassName: '', status: 'Pending' } } },
    expect: '{"status":{"modifyVolumeStatus":{"status":"Pending"}}}',
  },
  {
    name: 'nothing changed: an empty patch (upstream sends it too)',
    before: { spec: { capacity: { storage: '2Gi' } } },
    after: { spec: { capacity: { storage: '2Gi' } } },
    expect: '{}',
  },
  {
    name: 'atomic lists are replaced whole',
    before: { spec: { accessModes: ['ReadWriteOnce'] } },
    after: { spec: { accessModes: ['ReadWriteOnce', 'ReadOnlyMany'] } },
    expect: '{"spec":{"accessModes":["ReadWriteOnce","ReadOnlyMany"]}}',
  },
];

for (const c of cases) {
  test(`twoWayMergePatch: ${c.name}`, () => {
    assert.equal(JSON.stringify(twoWayMergePatch(c.before, c.after)), c.expect);
  });
}

test('twoWayMergePatch leaves its inputs alone and refuses a merge-keyed element without its key', () => {
  const before = { status: { conditions: [condition('A')] } };
  const copy = structuredClone(before);
  twoWayMergePatch(before, { status: { conditions: [condition('B')] } });
  assert.deepEqual(before, copy);
  assert.throws(() => twoWayMergePatch(before, { status: { conditions: [{ status: 'True' }] } }), /merge key type/);
});

test('patchFromDraft copies every key of the object as sent, "__proto__" included, and leaves the input alone', () => {
  const before = JSON.parse('{"spec":{"csi":{"volumeAttributes":{"__proto__":"x","pool":"a"}}},"status":{"phase":"Bound"}}') as {
    spec: { csi: { volumeAttributes: Record<string, string> } };
    status: { phase: string };
  };
  let draftAsSeen = '';
  const patch = patchFromDraft(before, (draft) => {
    draftAsSeen = JSON.stringify(draft);
    draft.status.phase = 'Released';
  });
  assert.equal(draftAsSeen, JSON.stringify(before));
  assert.equal(JSON.stringify(patch), '{"status":{"phase":"Released"}}');
  assert.equal(JSON.stringify(before), '{"spec":{"csi":{"volumeAttributes":{"__proto__":"x","pool":"a"}}},"status":{"phase":"Bound"}}');
});

test('twoWayMergePatch: keys that name Object.prototype members ("__proto__", "constructor", "toString") are ordinary keys', () => {
  const before = JSON.parse('{"metadata":{"labels":{"constructor":"a","toString":"b"}},"spec":{"csi":{"volumeAttributes":{"__proto__":"x"}}}}') as object;
  const after = JSON.parse('{"metadata":{"labels":{"hasOwnProperty":"c"}},"spec":{"csi":{"volumeAttributes":{"__proto__":"y"}}}}') as object;
  assert.equal(
    JSON.stringify(twoWayMergePatch(before, after)),
    '{"metadata":{"labels":{"constructor":null,"hasOwnProperty":"c","toString":null}},"spec":{"csi":{"volumeAttributes":{"__proto__":"y"}}}}',
  );
  assert.equal(JSON.stringify(twoWayMergePatch(before, before)), '{}');
});
