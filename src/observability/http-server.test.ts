import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Gauge } from 'prom-client';
import { createLogger, silentLogger } from './log/logger.js';
import { createMetrics, registerProcessMetrics } from './metrics.js';
import { LEADER_ELECTION_HEALTH_PATH, parseListenAddress, startHttpServer, type HealthResult } from './http-server.js';

test('listen addresses follow Go host:port rules', () => {
  assert.deepEqual(parseListenAddress(':8080'), { host: undefined, port: 8080 });
  assert.deepEqual(parseListenAddress('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
  assert.deepEqual(parseListenAddress('[::1]:9808'), { host: '::1', port: 9808 });
  assert.deepEqual(parseListenAddress('localhost:80'), { host: 'localhost', port: 80 });
  for (const bad of ['8080', '::1:80', ':http', ':70000', '[::1]', '']) {
    assert.throws(() => parseListenAddress(bad), /invalid listen address/, bad);
  }
});

test('serves the registry at the metrics path, 404 elsewhere', async (t) => {
  const metrics = createMetrics();
  metrics.csiOperations.observe({ driver_name: 'd', method_name: '/csi.v1.Identity/Probe', grpc_status_code: 'OK' }, 0.01);
  const server = await startHttpServer({ address: '127.0.0.1:0', metricsPath: '/custom', registry: metrics.registry, log: silentLogger });
  t.after(() => server.close());
  const res = await fetch(`http://127.0.0.1:${server.port}/custom`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const body = await res.text();
  assert.match(body, /csi_sidecar_operations_seconds_count\{driver_name="d",method_name="\/csi.v1.Identity\/Probe",grpc_status_code="OK"\} 1/);
  assert.equal((await fetch(`http://127.0.0.1:${server.port}/metrics`)).status, 404);
  assert.equal((await fetch(`http://127.0.0.1:${server.port}${LEADER_ELECTION_HEALTH_PATH}`)).status, 404);
});

test('a failing collector is logged and left out; the rest is still served', async (t) => {
  const metrics = createMetrics();
  new Gauge({
    name: 'broken_metric',
    help: 'throws',
    registers: [metrics.registry],
    collect() {
      throw new Error('boom');
    },
  });
  metrics.workqueue.adds.inc({ name: 'q' });
  const lines: string[] = [];
  const log = createLogger({ verbosity: 0, format: 'text', write: (l) => lines.push(l) });
  const server = await startHttpServer({ address: '127.0.0.1:0', metricsPath: '/metrics', registry: metrics.registry, log });
  t.after(() => server.close());
  const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
  assert.equal(res.status, 200);
  const body = await res.text();
  assert.match(body, /workqueue_adds_total\{name="q"\} 1/);
  assert.doesNotMatch(body, /broken_metric/);
  assert.ok(lines.some((l) => l.includes('Error gathering metric') && l.includes('broken_metric')));
});

test('leader-election health: ok, or 500 with the reason', async (t) => {
  let result: HealthResult = { ok: true };
  const metrics = createMetrics();
  const server = await startHttpServer({
    address: '127.0.0.1:0',
    metricsPath: '/metrics',
    registry: metrics.registry,
    log: silentLogger,
    healthChecks: new Map([[LEADER_ELECTION_HEALTH_PATH, () => result]]),
  });
  t.after(() => server.close());
  const url = `http://127.0.0.1:${server.port}${LEADER_ELECTION_HEALTH_PATH}`;
  let res = await fetch(url);
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'ok');
  result = { ok: false, message: 'failed election to renew leadership on lease external-resizer-x' };
  res = await fetch(url);
  assert.equal(res.status, 500);
  assert.equal(await res.text(), 'internal server error: failed election to renew leadership on lease external-resizer-x\n');
});

test('a port already in use fails to start', async (t) => {
  const metrics = createMetrics();
  const first = await startHttpServer({ address: '127.0.0.1:0', metricsPath: '/metrics', registry: metrics.registry, log: silentLogger });
  t.after(() => first.close());
  await assert.rejects(
    startHttpServer({ address: `127.0.0.1:${first.port}`, metricsPath: '/metrics', registry: metrics.registry, log: silentLogger }),
    /EADDRINUSE/,
  );
});

test('close is idempotent and ends keep-alive connections', async () => {
  const metrics = createMetrics();
  const server = await startHttpServer({ address: '127.0.0.1:0', metricsPath: '/metrics', registry: metrics.registry, log: silentLogger });
  await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
  await Promise.all([server.close(), server.close()]);
  await assert.rejects(fetch(`http://127.0.0.1:${server.port}/metrics`));
});

test('beforeScrape runs before the registry is gathered: collectors it adds are in that scrape', async (t) => {
  const metrics = createMetrics();
  let scrapes = 0;
  const server = await startHttpServer({
    address: '127.0.0.1:0',
    metricsPath: '/metrics',
    registry: metrics.registry,
    log: silentLogger,
    beforeScrape: async () => {
      if (scrapes++ === 0) await registerProcessMetrics(metrics.registry);
    },
  });
  t.after(() => server.close());
  const body = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
  assert.match(body, /^process_cpu_user_seconds_total /m);
  assert.match(body, /^nodejs_version_info\{/m);
  await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
  assert.equal(scrapes, 2);
});
