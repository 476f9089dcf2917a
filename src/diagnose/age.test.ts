import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ago, formatAge } from './age.js';

test('ages read like kubectl', () => {
  assert.deepEqual([0, 59_000, 119_000, 150_000, 660_000, 3 * 3600_000, 3 * 3600_000 + 60_000, 72 * 3600_000].map(formatAge), [
    '0s',
    '59s',
    '119s',
    '2m30s',
    '11m',
    '3h',
    '3h1m',
    '3d',
  ]);
});

test('ago: the age of a known time, nothing for an unknown one', () => {
  const now = new Date('2026-12-01T10:00:00Z');
  assert.equal(ago(new Date(now.getTime() - 180_000), now), ' 3m0s ago');
  assert.equal(ago(undefined, now), '');
});
