import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pvc } from '../../test/support/builders.js';
import { explainAutoGrow, type AutoGrowFacts } from './explain-auto-grow.js';
import { renderExplanation } from './explain-report.js';
import type { ClaimUsage } from '../usage/volume-usage.js';

const NOW = new Date('2026-08-30T12:00:00Z');
const Gi = 1n << 30n;
const fast = { metadata: { name: 'fast', annotations: { 'resize.topolvm.io/enabled': 'true' } }, allowVolumeExpansion: true };
const defaults = { cooldownMs: (8 * 60 + 10) * 60_000, minStepBytes: Gi, dryRun: false };
const sample = (availableGi: number): ClaimUsage => ({
  kind: 'sampled',
  usage: { capacityBytes: 10n * Gi, availableBytes: BigInt(availableGi * 4) * (Gi / 4n), inodes: 1000n, inodesFree: 900n, sampledAtMs: NOW.getTime() - 20_000 },
});
const claim = (annotations: Record<string, string> = {}) =>
  pvc({ request: '10Gi', capacity: '10Gi', storageClassName: 'fast', annotations: { 'resize.topolvm.io/storage_limit': '20Gi', ...annotations } });
const facts = (o: Partial<AutoGrowFacts> = {}): AutoGrowFacts => ({ enabled: true, storageClass: fast, usage: sample(0.5), defaults, ...o });

test('explain, auto-grow: usage, thresholds, the decision and the new request', () => {
  const e = explainAutoGrow(claim(), facts(), NOW)!;
  assert.equal(e.decision, 'grow');
  assert.equal(e.summary, 'raises the request from 10Gi to 11Gi: free space is below the threshold');
  assert.deepEqual(e.usage, {
    filesystem: '10Gi',
    available: '512Mi',
    threshold: '1Gi',
    inodes: '900 of 1000 free',
    inodesThreshold: '100',
    sampledAt: '2026-08-30T11:59:40.000Z',
  });
  assert.equal(e.limit, '20Gi');
  assert.equal(e.growTo, '11Gi');
});

test('explain, auto-grow: in the cooldown, says when the next grow is allowed', () => {
  const lastGrow = JSON.stringify({ at: '2026-08-30T10:00:00Z', from: '9Gi', to: '10Gi', filesystemBytes: String(9n * Gi) });
  const e = explainAutoGrow(claim({ 'auto-grow.csi-resizer.io/last-grow': lastGrow }), facts(), NOW)!;
  assert.equal(e.decision, 'cooldown');
  assert.equal(e.nextGrowAllowedAt, '2026-08-30T18:10:00.000Z');
  assert.match(e.summary, /waits for the cooldown until 2026-08-30T18:10:00.000Z \(in 6h10m\)/);
  assert.deepEqual(e.notes, ['last grow 120m ago, from 9Gi to 10Gi']);
  const text = renderExplanation(
    'ns/data',
    {
      claimFound: true,
      verdict: 'Nothing to resize.',
      resizeState: undefined,
      modifyState: undefined,
      reasons: [],
      nextSteps: [],
      conditions: [],
      events: [],
      autoGrow: e,
    },
    NOW,
  );
  assert.match(text, /Auto-grow: needs more; waits for the cooldown/);
  assert.match(text, / {2}- usage: 512Mi of 10Gi free \(threshold 1Gi\); inodes 900 of 1000 free \(threshold 100\), measured 2026-08-30T11:59:40.000Z/);
  assert.match(text, / {2}- next grow allowed: 2026-08-30T18:10:00.000Z/);
});

test('explain, auto-grow: nothing said of a claim that does not opt in while the flag is off; the flag missing is said of one that does', () => {
  assert.equal(explainAutoGrow(pvc({ request: '10Gi', capacity: '10Gi' }), facts({ enabled: false }), NOW), undefined);
  assert.equal(explainAutoGrow(claim(), facts({ enabled: false, usage: undefined }), NOW)?.decision, 'off');
  assert.equal(
    explainAutoGrow(pvc({ request: '10Gi', capacity: '10Gi', storageClassName: 'fast' }), facts(), NOW)?.summary,
    'not opted in: the claim has no resize.topolvm.io/storage_limit',
  );
});

test('explain, auto-grow: at the limit, an invalid policy, no pod', () => {
  assert.match(explainAutoGrow(claim({ 'resize.topolvm.io/storage_limit': '10Gi' }), facts(), NOW)!.summary, /at its limit 10Gi/);
  assert.match(
    explainAutoGrow(claim({ 'resize.topolvm.io/increase': 'lots' }), facts(), NOW)!.summary,
    /no action: invalid auto-grow policy: resize\.topolvm\.io\/increase/,
  );
  const unmounted = explainAutoGrow(claim(), facts({ usage: undefined, usageNotRead: 'no scheduled pod mounts the claim' }), NOW)!;
  assert.equal(unmounted.decision, 'usageUnavailable');
  assert.deepEqual(unmounted.notes, ['no scheduled pod mounts the claim']);
});
