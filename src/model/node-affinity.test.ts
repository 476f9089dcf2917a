import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nodeAffinitySelects, type NodeSelectorTerm } from './node-affinity.js';
import { pv } from '../../test/support/builders.js';

const node = { name: 'node-a', labels: { 'kubernetes.io/hostname': 'node-a', 'topology.example.io/zone': 'z1', cores: '8' } };

const lvm = { driver: 'lvm.csi.io', volumeHandle: 'v' };

const rows: { name: string; terms: NodeSelectorTerm[] | undefined; expect: boolean | 'none' }[] = [
  { name: 'no affinity', terms: undefined, expect: 'none' },
  { name: 'hostname In this node', terms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-a'] }] }], expect: true },
  { name: 'hostname In another node', terms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-b'] }] }], expect: false },
  {
    name: 'terms are ORed',
    terms: [
      { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-b'] }] },
      { matchExpressions: [{ key: 'topology.example.io/zone', operator: 'In', values: ['z1'] }] },
    ],
    expect: true,
  },
  {
    name: 'expressions are ANDed',
    terms: [
      {
        matchExpressions: [
          { key: 'topology.example.io/zone', operator: 'In', values: ['z1'] },
          { key: 'kubernetes.io/hostname', operator: 'NotIn', values: ['node-a'] },
        ],
      },
    ],
    expect: false,
  },
  {
    name: 'Exists / DoesNotExist',
    terms: [
      {
        matchExpressions: [
          { key: 'cores', operator: 'Exists' },
          { key: 'gpu', operator: 'DoesNotExist' },
        ],
      },
    ],
    expect: true,
  },
  {
    name: 'Gt / Lt on integers',
    terms: [
      {
        matchExpressions: [
          { key: 'cores', operator: 'Gt', values: ['4'] },
          { key: 'cores', operator: 'Lt', values: ['16'] },
        ],
      },
    ],
    expect: true,
  },
  { name: 'Gt on a non-integer label', terms: [{ matchExpressions: [{ key: 'topology.example.io/zone', operator: 'Gt', values: ['1'] }] }], expect: false },
  { name: 'matchFields metadata.name', terms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-a'] }] }], expect: true },
  { name: 'matchFields on another field', terms: [{ matchFields: [{ key: 'metadata.uid', operator: 'In', values: ['node-a'] }] }], expect: false },
  { name: 'an empty term matches nothing', terms: [{}], expect: false },
  { name: 'no terms match nothing', terms: [], expect: false },
  { name: 'an unknown operator matches nothing', terms: [{ matchExpressions: [{ key: 'cores', operator: 'Like', values: ['8'] }] }], expect: false },
];

for (const row of rows) {
  test(`node affinity: ${row.name}`, () => {
    assert.equal(nodeAffinitySelects(pv({ ...lvm, nodeAffinity: row.terms }), node), row.expect);
  });
}
