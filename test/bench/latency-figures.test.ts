// The latency scenario's summaries: nearest-rank percentiles (p90 and p99 beside the median), and
// the ABBA order in which ours and upstream take their samples (and the startup scenario its starts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Figures, quantile, ratio, summarize } from '../../bench/lib/figures.js';
import { pairOrder } from '../../bench/lib/resizer.js';

test('nearest-rank quantiles of 100 samples: p90 is the 90th, p99 the 99th smallest', () => {
  const values = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted order
  assert.equal(quantile(values, 0.9), 90);
  assert.equal(quantile(values, 0.99), 99);
  assert.equal(quantile(values, 1), 100);
});

test('with 20 samples p99 is the largest: why the scenario now takes more', () => {
  const values = Array.from({ length: 20 }, (_, i) => i + 1);
  assert.equal(quantile(values, 0.99), 20);
  assert.equal(quantile(values, 0.9), 18);
});

test('a figure summarised as p90 reports the p90 of each side and their ratio', () => {
  const figures = new Figures();
  for (let i = 1; i <= 10; i++) {
    figures.add('latency', 'edit to PVC final, p90', 'ms', 'lower', 'ours', i * 2, 'p90');
    figures.add('latency', 'edit to PVC final, p90', 'ms', 'lower', 'upstream', i * 4, 'p90');
  }
  const [f] = figures.list;
  assert.equal(f!.summary, 'p90');
  assert.equal(summarize(f!, 'ours'), 18);
  assert.equal(summarize(f!, 'upstream'), 36);
  assert.equal(ratio(f!), 0.5);
});

test('pairs alternate ABBA: each implementation goes first in every other pair', () => {
  const firsts = Array.from({ length: 6 }, (_, i) => pairOrder(i)[0]);
  assert.deepEqual(firsts, ['ours', 'upstream', 'ours', 'upstream', 'ours', 'upstream']);
  for (let i = 0; i < 6; i++) assert.deepEqual([...pairOrder(i)].sort(), ['ours', 'upstream']);
});
