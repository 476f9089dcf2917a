import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PrometheusAnswerError, seriesKey, vectorOf } from './prometheus-response.js';

test('vectorOf: the samples of an instant vector, NaN and Inf left out', () => {
  const samples = vectorOf({
    status: 'success',
    data: {
      resultType: 'vector',
      result: [
        { metric: { __name__: 'm', namespace: 'ns', persistentvolumeclaim: 'a' }, value: [1788000000.5, '1024'] },
        { metric: { namespace: 'ns', persistentvolumeclaim: 'b' }, value: [1788000000.5, 'NaN'] },
        { metric: { namespace: 'ns', persistentvolumeclaim: 'c' }, value: [1788000000.5, '+Inf'] },
        { metric: { namespace: 'ns', persistentvolumeclaim: 'd' }, value: [1788000000.5, '1.5e+09'] },
      ],
    },
  });
  assert.deepEqual(samples, [
    { labels: { __name__: 'm', namespace: 'ns', persistentvolumeclaim: 'a' }, value: 1024 },
    { labels: { namespace: 'ns', persistentvolumeclaim: 'd' }, value: 1.5e9 },
  ]);
});

test("vectorOf: Prometheus's error is the message", () => {
  assert.throws(
    () => vectorOf({ status: 'error', errorType: 'bad_data', error: 'parse error at char 3' }),
    /the query failed: bad_data: parse error at char 3/,
  );
  assert.throws(() => vectorOf({ status: 'success', data: { resultType: 'matrix', result: [] } }), PrometheusAnswerError);
  assert.throws(() => vectorOf('nope'), /not a JSON object/);
});

test('seriesKey: the same series with and without its name (timestamp() drops it), labels in any order', () => {
  assert.equal(seriesKey({ __name__: 'm', b: '2', a: '1' }), seriesKey({ a: '1', b: '2' }));
  assert.notEqual(seriesKey({ a: '1' }), seriesKey({ a: '2' }));
});
