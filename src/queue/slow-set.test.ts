import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SlowSet } from './slow-set.js';
import { FakeClock } from '../../test/fakes/fake-clock.js';

test('add keeps the original time; timeRemaining counts down; expiry removes', () => {
  const clock = new FakeClock();
  const set = new SlowSet<string>({ retentionMs: 1000, clock });
  assert.equal(set.add('a'), true);
  clock.advance(400);
  assert.equal(set.add('a'), false, 'already parked');
  assert.equal(set.timeRemaining('a'), 600);
  assert.equal(set.contains('a'), true);
  clock.advance(600);
  assert.equal(set.contains('a'), true, 'still there exactly at the retention time');
  assert.equal(set.timeRemaining('a'), 0);
  clock.advance(1);
  assert.equal(set.contains('a'), false);
  assert.equal(set.timeRemaining('a'), 0);
  assert.equal(set.add('a'), true, 'can be parked again after expiry');
});

test('remove, and timeRemaining of unknown keys', () => {
  const clock = new FakeClock();
  const set = new SlowSet<string>({ retentionMs: 1000, clock });
  set.add('a');
  assert.equal(set.remove('a'), true);
  assert.equal(set.remove('a'), false);
  assert.equal(set.contains('a'), false);
  assert.equal(set.timeRemaining('zzz'), 0);
});

test('the periodic sweep drops expired entries; stop cancels it, twice is fine', () => {
  const clock = new FakeClock();
  const set = new SlowSet<string>({ retentionMs: 1000, clock, purgeIntervalMs: 100 });
  set.start();
  set.start();
  set.add('a');
  clock.advance(500);
  set.add('b');
  clock.advance(600);
  assert.equal(set.size, 1);
  assert.equal(set.contains('b'), true);
  set.stop();
  set.stop();
  assert.equal(clock.pendingTimers, 0);
});

test('an empty slow set holds no timer; the sweep stops once it emptied the set', () => {
  const clock = new FakeClock();
  const set = new SlowSet<string>({ retentionMs: 1000, clock, purgeIntervalMs: 100 });
  set.start();
  assert.equal(clock.pendingTimers, 0, 'nothing parked, nothing to sweep');
  set.add('a');
  assert.equal(clock.pendingTimers, 1);
  clock.advance(1100);
  assert.equal(set.size, 0);
  assert.equal(clock.pendingTimers, 0, 'swept empty: the timer is gone');
  set.add('b');
  assert.equal(clock.pendingTimers, 1, 'armed again by the next add');
  set.stop();
  assert.equal(clock.pendingTimers, 0);
});
