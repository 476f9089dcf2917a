import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SummaryFormatError, usageFromSummary } from './kubelet-summary.js';

const volume = (namespace: string, name: string, o: Record<string, unknown> = {}) => ({
  time: '2026-08-30T12:00:00Z',
  availableBytes: 1000,
  capacityBytes: 10000,
  usedBytes: 9000,
  inodesFree: 50,
  inodes: 100,
  inodesUsed: 50,
  name: 'data',
  pvcRef: { name, namespace },
  ...o,
});
const pod = (volumes: unknown[]) => ({ podRef: { name: 'p', namespace: 'ns', uid: 'u' }, startTime: '2026-08-30T00:00:00Z', containers: [], volume: volumes });
const wanted = new Set(['ns/a', 'ns/b', 'ns/c']);

test('usageFromSummary: the wanted claims with their sizes and time; others, and volumes without a claim, are left out', () => {
  const found = usageFromSummary(
    {
      node: { nodeName: 'n1' },
      pods: [
        pod([volume('ns', 'a'), { name: 'config', time: '2026-08-30T12:00:00Z', capacityBytes: 1, availableBytes: 1 }]),
        pod([volume('ns', 'other')]),
        pod([volume('ns', 'b', { inodes: undefined, inodesFree: undefined })]),
      ],
    },
    wanted,
  );
  assert.deepEqual([...found.keys()].sort(), ['ns/a', 'ns/b']);
  assert.deepEqual(found.get('ns/a'), {
    capacityBytes: 10000n,
    availableBytes: 1000n,
    inodes: 100n,
    inodesFree: 50n,
    sampledAtMs: Date.parse('2026-08-30T12:00:00Z'),
  });
  assert.deepEqual(found.get('ns/b'), { capacityBytes: 10000n, availableBytes: 1000n, sampledAtMs: Date.parse('2026-08-30T12:00:00Z') });
});

test('usageFromSummary: a claim two pods mount: the newer measurement', () => {
  const found = usageFromSummary(
    { pods: [pod([volume('ns', 'a', { availableBytes: 5 })]), pod([volume('ns', 'a', { time: '2026-08-30T12:00:30Z', availableBytes: 7 })])] },
    wanted,
  );
  assert.equal(found.get('ns/a')?.availableBytes, 7n);
});

test('usageFromSummary: an entry not yet measured (no capacity, no available, no time) is no sample', () => {
  const found = usageFromSummary(
    { pods: [pod([volume('ns', 'a', { capacityBytes: undefined }), volume('ns', 'b', { availableBytes: -1 }), volume('ns', 'c', { time: 'soon' })])] },
    wanted,
  );
  assert.equal(found.size, 0);
});

test('usageFromSummary: a node without pods, or pods without volumes', () => {
  assert.equal(usageFromSummary({ node: {} }, wanted).size, 0);
  assert.equal(usageFromSummary({ pods: null }, wanted).size, 0);
  assert.equal(usageFromSummary({ pods: [{ podRef: {} }] }, wanted).size, 0);
});

test('usageFromSummary: not a summary', () => {
  assert.throws(() => usageFromSummary([], wanted), SummaryFormatError);
  assert.throws(() => usageFromSummary({ pods: {} }, wanted), /"pods" is not a list/);
});
