// The startup scenario's split of a start at the Version line reads the line's own klog time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstLineTime, klogLineTime } from '../../bench/lib/klog-time.js';

test('a klog header is read as local time with microseconds, the year from the spawn', () => {
  const spawn = new Date(2026, 11, 2, 2, 43, 59, 100).getTime();
  const t = klogLineTime('I1202 02:43:59.206065   14185 main.go:102] "Version" version="v2.2.0"', spawn);
  assert.equal(t, new Date(2026, 11, 2, 2, 43, 59).getTime() + 206.065);
  assert.equal(klogLineTime('no header here', spawn), undefined);
});

test('a start across New Year takes the year nearest the spawn', () => {
  const spawn = new Date(2026, 11, 31, 23, 59, 59, 900).getTime();
  const t = klogLineTime('I0101 00:00:00.150000   1 run.ts:75] "Version"', spawn);
  assert.equal(t, new Date(2027, 0, 1, 0, 0, 0).getTime() + 150);
});

test('the first line with the marker, ours and upstream alike', () => {
  const spawn = new Date(2026, 11, 2, 2, 27, 6, 800).getTime();
  const log = [
    'W1202 02:27:06.900000    7496 flags.go:1] "something first"',
    'I1202 02:27:06.935401    7496 run.ts:75] "Version" version="0.1.0"',
    'I1202 02:27:07.000000    7496 run.ts:75] "Version" version="again"',
  ].join('\n');
  assert.equal(firstLineTime(log, '"Version"', spawn), new Date(2026, 11, 2, 2, 27, 6).getTime() + 935.401);
  assert.equal(firstLineTime(log, '"Nope"', spawn), undefined);
});
