// The Prometheus usage source against a real Prometheus server (Debian's, started on loopback by
// test/support/prometheus-server.ts) scraping a kubelet stand-in's /metrics every second, as a
// cluster's Prometheus scrapes kubelets: over HTTPS with its own bearer token, authorised by a real
// SubjectAccessReview for nodes/metrics. The source reads the four kubelet_volume_stats_* series
// of the claims asked for, each claim stamped with the time Prometheus scraped it.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useCluster, adminClients } from '../cluster/test-cluster.js';
import { createNamespace } from '../cluster/fixtures.js';
import { freePort } from '../cluster/cluster.js';
import { eventually } from '../support/eventually.js';
import { startPrometheus } from '../support/prometheus-server.js';
import { FakeKubelet, type FakeVolume } from '../fakes/fake-kubelet.js';
import { PrometheusUsageSource } from '../../src/usage/prometheus-source.js';
import type { ClaimUsage, NodeClaims } from '../../src/usage/volume-usage.js';

const cluster = await useCluster();
const admin = adminClients(cluster);
const never = new AbortController().signal;
const Gi = 1n << 30n;
const work = mkdtempSync(join(tmpdir(), 'rz-prom-usage-'));
process.once('exit', () => rmSync(work, { recursive: true, force: true }));

const namespace = await createNamespace(admin, 'rz-prom');
const volume = (claim: string, o: Partial<FakeVolume> = {}): FakeVolume => ({
  namespace,
  claim,
  capacityBytes: 10n * Gi,
  availableBytes: Gi,
  inodes: 1000n,
  inodesFree: 900n,
  ...o,
});

// Prometheus's own identity: a ServiceAccount allowed `get nodes/metrics`, as a cluster's Prometheus is.
await admin.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'prometheus' } } });
await admin.rbac.createClusterRole({
  body: { metadata: { name: `${namespace}-metrics` }, rules: [{ apiGroups: [''], resources: ['nodes/metrics'], verbs: ['get'] }] },
});
await admin.rbac.createClusterRoleBinding({
  body: {
    metadata: { name: `${namespace}-metrics` },
    subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace }],
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${namespace}-metrics` },
  },
});
const token = await admin.core.createNamespacedServiceAccountToken({
  namespace,
  name: 'prometheus',
  body: { spec: { audiences: [], expirationSeconds: 3600 } },
});
const tokenFile = join(work, 'token');
writeFileSync(tokenFile, token.status!.token!, { mode: 0o600 });

const kubelet = await FakeKubelet.start({
  nodeName: 'node-p',
  reviewerKubeconfigPath: cluster.adminKubeconfigPath,
  volumes: [volume('data'), volume('no-inodes', { inodes: undefined, inodesFree: undefined, availableBytes: 3n * Gi })],
});
const caFile = join(work, 'kubelet.crt');
writeFileSync(caFile, kubelet.cert);
const prometheus = await startPrometheus([{ address: `127.0.0.1:${kubelet.port}`, scheme: 'https', caFile, tokenFile }]);
const started = Date.now();
const source = new PrometheusUsageSource({ url: prometheus.url, timeoutMs: 5_000 });
after(async () => {
  source.close();
  await prometheus.stop();
  await kubelet.close();
});
const ask = (...names: string[]): NodeClaims[] => [{ node: kubelet.node(), claims: names.map((name) => ({ namespace, name })) }];
const usageOf = async (name: string): Promise<ClaimUsage | undefined> => (await source.readUsage(ask(name), never)).claims.get(`${namespace}/${name}`);
const sampled = (name: string, available: bigint) =>
  eventually(
    `Prometheus has scraped ${name} with ${available} bytes available`,
    async () => {
      const u = await usageOf(name);
      return u?.kind === 'sampled' && u.usage.availableBytes === available ? u.usage : undefined;
    },
    30_000,
    200,
  );

test('the four series of a claim Prometheus scraped, stamped with the scrape time', async () => {
  const usage = await sampled('data', Gi);
  assert.equal(usage.capacityBytes, 10n * Gi);
  assert.equal(usage.inodes, 1000n);
  assert.equal(usage.inodesFree, 900n);
  // Prometheus stamps a sample with the start of its scrape: one of the stand-in's /metrics requests.
  const scrapes = kubelet.requests.filter((r) => r.path === '/metrics' && r.status === 200);
  assert.ok(scrapes.length > 0);
  assert.ok(usage.sampledAtMs >= started - 1_000 && usage.sampledAtMs <= Date.now(), `${usage.sampledAtMs}`);
  assert.ok(
    scrapes.some((s) => Math.abs(s.receivedAtMs - usage.sampledAtMs) < 250),
    `a scrape near ${usage.sampledAtMs}: ${scrapes.map((s) => s.receivedAtMs).join(', ')}`,
  );
  // Prometheus authenticated as its ServiceAccount, through the stand-in's TokenReview.
  assert.equal(scrapes[0]?.user, `system:serviceaccount:${namespace}:prometheus`);
});

test('a filesystem without inodes series: the bytes alone', async () => {
  const usage = await sampled('no-inodes', 3n * Gi);
  assert.equal(usage.inodes, undefined);
  assert.equal(usage.inodesFree, undefined);
});

test('a new measurement replaces the old one, with a later time', async () => {
  const before = await sampled('data', Gi);
  kubelet.setVolumes([volume('data', { availableBytes: Gi / 4n }), volume('no-inodes', { inodes: undefined, inodesFree: undefined, availableBytes: 3n * Gi })]);
  const after = await sampled('data', Gi / 4n);
  assert.ok(after.sampledAtMs > before.sampledAtMs);
});

test('a claim Prometheus has no series of: not reported; the others still are', async () => {
  const report = await source.readUsage(ask('data', 'never-mounted'), never);
  assert.equal(report.claims.get(`${namespace}/data`)?.kind, 'sampled');
  const missing = report.claims.get(`${namespace}/never-mounted`);
  assert.equal(missing?.kind === 'unavailable' && missing.reason, 'notReported');
  assert.deepEqual(report.failures, []);
});

test('Prometheus unreachable: every claim unavailable, one failure', async () => {
  const gone = new PrometheusUsageSource({ url: `http://127.0.0.1:${await freePort()}`, timeoutMs: 2_000 });
  const report = await gone.readUsage(ask('data', 'no-inodes'), never);
  assert.deepEqual(
    [...report.claims.values()].map((c) => c.kind === 'unavailable' && c.reason),
    ['unreachable', 'unreachable'],
  );
  assert.equal(report.failures.length, 1);
  gone.close();
});

test('a URL that is not the query API: bad response, naming what came back', async () => {
  const wrong = new PrometheusUsageSource({ url: `${prometheus.url}/not-prometheus`, timeoutMs: 2_000 });
  const result = (await wrong.readUsage(ask('data'), never)).claims.get(`${namespace}/data`);
  assert.equal(result?.kind === 'unavailable' && result.reason, 'badResponse');
  assert.match(result?.kind === 'unavailable' ? result.message : '', /answered 404 with a body that is not JSON/);
  wrong.close();
});

test('only http and https URLs', () => {
  assert.throws(() => new PrometheusUsageSource({ url: 'ftp://prometheus:9090', timeoutMs: 1_000 }), /only http and https/);
});

test('the queries are narrowed to the namespaces asked for', async () => {
  // A claim of another namespace with the same name is never mixed in.
  const elsewhere = await source.readUsage([{ node: kubelet.node(), claims: [{ namespace: 'other-ns', name: 'data' }] }], never);
  const result = elsewhere.claims.get('other-ns/data');
  assert.equal(result?.kind === 'unavailable' && result.reason, 'notReported');
});
