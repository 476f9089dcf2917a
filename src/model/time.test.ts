import { test } from 'node:test';
import assert from 'node:assert/strict';
import { metaTime, microTime } from './time.js';

test('metaTime: RFC 3339 in UTC, the milliseconds dropped (not rounded)', () => {
  assert.equal(metaTime(Date.parse('2026-03-04T05:06:07.999Z')), '2026-03-04T05:06:07Z');
  assert.equal(metaTime(Date.parse('2026-03-04T05:06:07.000Z')), '2026-03-04T05:06:07Z');
  assert.equal(metaTime(0), '1970-01-01T00:00:00Z');
  // Within one second and across seconds, back and forth (the last second is remembered).
  assert.equal(metaTime(Date.parse('2026-03-04T05:06:07.001Z')), '2026-03-04T05:06:07Z');
  assert.equal(metaTime(Date.parse('2026-03-04T05:06:08.000Z')), '2026-03-04T05:06:08Z');
  assert.equal(metaTime(Date.parse('2026-03-04T05:06:07.500Z')), '2026-03-04T05:06:07Z');
  assert.equal(metaTime(-1), '1969-12-31T23:59:59Z');
});

test('microTime: RFC 3339 in UTC with exactly six fractional digits', () => {
  assert.equal(microTime(Date.parse('2026-03-04T05:06:07.089Z')), '2026-03-04T05:06:07.089000Z');
  assert.equal(microTime(0), '1970-01-01T00:00:00.000000Z');
});
