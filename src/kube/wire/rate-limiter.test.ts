import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TokenBucket } from '../../base/token-bucket.js';
import { clientRateLimit, ClientRateLimitError } from './rate-limiter.js';

test('--kube-api-qps/--kube-api-burst read as client-go reads rest.Config QPS/Burst', () => {
  const table: Array<[qps: number, burst: number, want: { qps: number; burst: number } | 'newForConfig' | 'refused']> = [
    [5, 10, { qps: 5, burst: 10 }],
    [200, 400, { qps: 200, burst: 400 }],
    [0, 0, { qps: 5, burst: 10 }], // rest.DefaultQPS, rest.DefaultBurst
    [0, 3, { qps: 5, burst: 3 }],
    [7, 0, 'newForConfig'], // kubernetes.NewForConfig: burst is required when QPS > 0
    [7, -1, 'newForConfig'],
    [-1, 0, { qps: 0, burst: 1 }], // negative QPS: no client-side limiter
    [-1, -5, { qps: 0, burst: 1 }],
    [NaN, 10, { qps: 0, burst: 10 }],
    [Infinity, 10, { qps: 0, burst: 10 }],
    [1e-50, 0, { qps: 5, burst: 10 }], // a float32: rounds to 0
    [0.5, 1, { qps: Math.fround(0.5), burst: 1 }],
    [0, -1, 'refused'],
  ];
  for (const [qps, burst, want] of table) {
    const label = `qps=${qps} burst=${burst}`;
    if (want === 'newForConfig') {
      assert.throws(
        () => clientRateLimit(qps, burst),
        (err: unknown) =>
          err instanceof ClientRateLimitError &&
          err.message === 'burst is required to be greater than 0 when RateLimiter is not set and QPS is set to greater than 0',
        label,
      );
    } else if (want === 'refused') {
      assert.throws(() => clientRateLimit(qps, burst), ClientRateLimitError, label);
    } else {
      assert.deepEqual(clientRateLimit(qps, burst), want, label);
    }
  }
});

test('an unlimited bucket (QPS 0 here, or +Inf) never waits', async () => {
  for (const qps of [0, -1, Infinity]) {
    const b = new TokenBucket({ qps, burst: 1 });
    for (let i = 0; i < 1000; i++) assert.equal(b.reserve(), 0);
    await b.take(AbortSignal.timeout(100));
  }
});
