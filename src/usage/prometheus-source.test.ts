// The Prometheus source's joining of series, against a scripted query API on loopback (the real
// server is in test/integration/auto-grow-prometheus-usage.test.ts): the sample time is the oldest
// of a claim's series, a claim reported twice takes the newer set, a failed query fails the poll.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PrometheusUsageSource } from './prometheus-source.js';
import type { NodeClaims } from './volume-usage.js';

type Series = { labels: Record<string, string>; value: number; at: number };

/** Answers `M{...}` with each series' value and `timestamp(M{...})` with its time, from a table per metric. */
async function scriptedPrometheus(
  t: { after(fn: () => Promise<void> | void): void },
  table: Record<string, Series[]>,
  fail?: string,
): Promise<{ url: string; queries: string[] }> {
  const queries: string[] = [];
  const server = http.createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://p').searchParams.get('query') ?? '';
    queries.push(query);
    const stamped = /^timestamp\((\w+)\{/.exec(query);
    const metric = stamped?.[1] ?? /^(\w+)\{/.exec(query)?.[1] ?? '';
    if (fail !== undefined && metric === fail) {
      res.writeHead(422, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'error', errorType: 'execution', error: 'query timed out in expression evaluation' }));
      return;
    }
    const result = (table[metric] ?? []).map((s) => ({
      metric: stamped ? s.labels : { __name__: metric, ...s.labels },
      value: [1_788_000_100, String(stamped ? s.at : s.value)],
    }));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, queries };
}

const claim = (name: string, extra: Record<string, string> = {}) => ({ namespace: 'ns', persistentvolumeclaim: name, ...extra });
const ask = (...names: string[]): NodeClaims[] => [{ node: { metadata: { name: 'n1' } }, claims: names.map((name) => ({ namespace: 'ns', name })) }];
const never = new AbortController().signal;

test('the sample time is the oldest of the four series: a new capacity beside an old available-bytes value reads as old', async (t) => {
  const p = await scriptedPrometheus(t, {
    kubelet_volume_stats_available_bytes: [{ labels: claim('a'), value: 100, at: 1000 }],
    kubelet_volume_stats_capacity_bytes: [{ labels: claim('a'), value: 1000, at: 1060 }],
    kubelet_volume_stats_inodes_free: [{ labels: claim('a'), value: 9, at: 1060 }],
    kubelet_volume_stats_inodes: [{ labels: claim('a'), value: 10, at: 1060 }],
  });
  const source = new PrometheusUsageSource({ url: p.url, timeoutMs: 2_000 });
  t.after(() => source.close());
  const report = await source.readUsage(ask('a'), never);
  assert.deepEqual(report.claims.get('ns/a'), {
    kind: 'sampled',
    usage: { capacityBytes: 1000n, availableBytes: 100n, inodes: 10n, inodesFree: 9n, sampledAtMs: 1_000_000 },
  });
  assert.equal(p.queries.length, 8);
  assert.ok(p.queries.every((q) => q.includes('{namespace=~"ns"}')));
});

test('a claim two nodes report (two series sets): the newer set, never a mix', async (t) => {
  const both = (metric: 'available' | 'capacity', older: number, newer: number): Series[] => [
    { labels: claim('a', { node: 'n1' }), value: older, at: 1000 },
    { labels: claim('a', { node: 'n2' }), value: newer, at: 2000 },
  ];
  const p = await scriptedPrometheus(t, {
    kubelet_volume_stats_available_bytes: both('available', 100, 200),
    kubelet_volume_stats_capacity_bytes: both('capacity', 1000, 2000),
  });
  const source = new PrometheusUsageSource({ url: p.url, timeoutMs: 2_000 });
  t.after(() => source.close());
  const usage = (await source.readUsage(ask('a'), never)).claims.get('ns/a');
  assert.deepEqual(usage, { kind: 'sampled', usage: { capacityBytes: 2000n, availableBytes: 200n, sampledAtMs: 2_000_000 } });
});

test('a series set without its available bytes (or their time) is no sample', async (t) => {
  const p = await scriptedPrometheus(t, {
    kubelet_volume_stats_capacity_bytes: [{ labels: claim('a'), value: 1000, at: 1000 }],
  });
  const source = new PrometheusUsageSource({ url: p.url, timeoutMs: 2_000 });
  t.after(() => source.close());
  const usage = (await source.readUsage(ask('a'), never)).claims.get('ns/a');
  assert.equal(usage?.kind === 'unavailable' && usage.reason, 'notReported');
});

test("one failed query fails the poll for every claim, with Prometheus's error", async (t) => {
  const p = await scriptedPrometheus(t, { kubelet_volume_stats_available_bytes: [{ labels: claim('a'), value: 1, at: 1 }] }, 'kubelet_volume_stats_inodes');
  const source = new PrometheusUsageSource({ url: p.url, timeoutMs: 2_000 });
  t.after(() => source.close());
  const report = await source.readUsage(ask('a', 'b'), never);
  for (const key of ['ns/a', 'ns/b']) {
    const c = report.claims.get(key);
    assert.equal(c?.kind === 'unavailable' && c.reason, 'badResponse');
    assert.match(c?.kind === 'unavailable' ? c.message : '', /execution: query timed out in expression evaluation/);
  }
  assert.equal(report.failures.length, 1);
});

test('nothing asked: no query', async (t) => {
  const p = await scriptedPrometheus(t, {});
  const source = new PrometheusUsageSource({ url: p.url, timeoutMs: 2_000 });
  t.after(() => source.close());
  assert.equal((await source.readUsage([{ node: { metadata: { name: 'n1' } }, claims: [] }], never)).claims.size, 0);
  assert.equal(p.queries.length, 0);
});
