// The sizes in auto-grow's event messages: whole units as quantities, a real filesystem's odd
// byte counts rounded to a few figures (the numbers a 1Gi XFS volume reported on the e2e node).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Evaluation } from './decision.js';
import { AutoGrowMessage, readableSize } from './events.js';

const Ki = 1n << 10n;
const Mi = 1n << 20n;
const Gi = 1n << 30n;

test('readableSize: whole mebibytes exactly, other sizes to three figures in the largest unit', () => {
  const cases: [bigint, string][] = [
    [10n * Gi, '10Gi'],
    [512n * Mi, '512Mi'],
    [1984n * Mi, '1984Mi'],
    [0n, '0'],
    [1607300n * Ki, '1.53Gi'],
    [1664299827n, '1.55Gi'],
    [762904n * Ki, '745Mi'],
    [5n * Mi + 123n, '5Mi'],
    [15n * Mi + 300n * Ki, '15.3Mi'],
    [3n * Ki, '3Ki'],
    [1500n, '1.46Ki'],
    [999n, '999'],
    [3n * (1n << 40n) + 7n, '3Ti'],
    [1023n * Mi + 1n, '1023Mi'],
    [2n * Gi - 1n, '2Gi'],
  ];
  assert.deepEqual(
    cases.map(([bytes]) => readableSize(bytes)),
    cases.map(([, text]) => text),
  );
});

test('readableSize: free space rounds down, a threshold up, so "below" still reads as below', () => {
  // 1.5495Gi free against a 1.5500Gi threshold: both are "1.55Gi" to the nearest.
  const free = (15495n * Gi) / 10000n;
  const threshold = (15500n * Gi) / 10000n;
  assert.equal(readableSize(free), readableSize(threshold));
  assert.deepEqual([readableSize(free, 'down'), readableSize(threshold, 'up')], ['1.54Gi', '1.55Gi']);
  assert.deepEqual([readableSize(threshold - 1n, 'down'), readableSize(threshold - 1n, 'up')], ['1.54Gi', '1.55Gi']);
  assert.deepEqual([readableSize(762904n * Ki, 'down'), readableSize(762904n * Ki, 'up')], ['745Mi', '746Mi']);
  // Whole mebibytes stay exact whichever way.
  assert.deepEqual([readableSize(768n * Mi, 'down'), readableSize(768n * Mi, 'up')], ['768Mi', '768Mi']);
});

test('the limit-reached message with the sizes a real XFS volume reports', () => {
  const evaluation: Evaluation = {
    capacityBytes: 2n * Gi,
    filesystemBytes: 1984n * Mi,
    availableBytes: 1607300n * Ki,
    thresholdBytes: 1664299827n,
    inodes: undefined,
    inodesFree: undefined,
    inodesThreshold: undefined,
    limitBytes: 2n * Gi,
    nextGrowAllowedAtMs: undefined,
  };
  assert.equal(
    AutoGrowMessage.limitReached('2Gi', evaluation),
    'The claim needs more space but is at its limit resize.topolvm.io/storage_limit=2Gi: 1.53Gi of 1984Mi free (threshold 1.55Gi). Raise the limit to let it grow.',
  );
});
