// The kubelet usage source against the real API server's RBAC: kubelet stand-ins
// (test/fakes/fake-kubelet.ts) authenticate each request with a real TokenReview (or the client
// certificate) and authorise it with a real SubjectAccessReview for nodes/stats. With the
// ClusterRole of deploy/kubernetes/auto-grow the source reads usage; without it (or with
// nodes/proxy only) it is refused, with a message naming the missing rule; TLS is verified against
// the CA given, and a node that is unreachable or hangs is "usage unavailable" for its claims only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { useCluster, adminClients } from '../cluster/test-cluster.js';
import { createNamespace, uniqueName } from '../cluster/fixtures.js';
import { freePort } from '../cluster/cluster.js';
import { repoRoot } from '../cluster/components.js';
import { eventually } from '../support/eventually.js';
import { selfSigned } from '../support/self-signed.js';
import { FakeKubelet, type FakeVolume } from '../fakes/fake-kubelet.js';
import { KubeletUsageSource, type KubeletSourceOptions } from '../../src/usage/kubelet-source.js';
import { loadKubeConfig } from '../../src/kube/wire/kubeconfig.js';
import type { NodeClaims, UsageReport } from '../../src/usage/volume-usage.js';

const cluster = await useCluster();
const admin = adminClients(cluster);
const never = new AbortController().signal;
const Gi = 1n << 30n;
const work = mkdtempSync(join(tmpdir(), 'rz-kubelet-usage-'));
process.once('exit', () => rmSync(work, { recursive: true, force: true }));

const autoGrowRole = (
  k8s.loadAllYaml(readFileSync(join(repoRoot, 'deploy', 'kubernetes', 'auto-grow', 'rbac-auto-grow.yaml'), 'utf8')) as k8s.KubernetesObject[]
).find((d) => d.kind === 'ClusterRole') as k8s.V1ClusterRole;

const namespace = await createNamespace(admin, 'rz-kubelet');
const volume = (claim: string, o: Partial<FakeVolume> = {}): FakeVolume => ({
  namespace,
  claim,
  capacityBytes: 10n * Gi,
  availableBytes: Gi,
  inodes: 655_360n,
  inodesFree: 600_000n,
  ...o,
});

/** A ServiceAccount with a fresh token, and a kubeconfig authenticating as it (the cluster's CA for the API server). */
async function serviceAccountKubeconfig(name: string): Promise<{ path: string; username: string }> {
  await admin.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  const token = await admin.core.createNamespacedServiceAccountToken({ namespace, name, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
  const kubeconfig = JSON.parse(readFileSync(cluster.resizerKubeconfigPath, 'utf8')) as { users: { user: Record<string, string> }[] };
  kubeconfig.users[0]!.user = { token: token.status!.token };
  const path = join(work, `${name}.kubeconfig`);
  writeFileSync(path, JSON.stringify(kubeconfig), { mode: 0o600 });
  return { path, username: `system:serviceaccount:${namespace}:${name}` };
}

/** Binds a ClusterRole with these rules to a subject and waits until the authorizer sees it. */
async function grant(
  subject: k8s.RbacV1Subject,
  rules: k8s.V1PolicyRule[],
  check: { user?: string; groups?: string[]; subresource: string; node: string },
): Promise<void> {
  const name = uniqueName('rz-autogrow');
  await admin.rbac.createClusterRole({ body: { metadata: { name }, rules } });
  await admin.rbac.createClusterRoleBinding({
    body: { metadata: { name }, subjects: [subject], roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name } },
  });
  await eventually(`${subject.name} allowed get nodes/${check.subresource}`, async () => {
    const review = await admin.authz.createSubjectAccessReview({
      body: {
        spec: {
          ...(check.user ? { user: check.user } : {}),
          groups: check.groups ?? [],
          resourceAttributes: { verb: 'get', resource: 'nodes', subresource: check.subresource, name: check.node, version: 'v1' },
        },
      },
    });
    return review.status?.allowed === true;
  });
}

async function source(kubeconfigPath: string, o: Partial<KubeletSourceOptions> = {}): Promise<KubeletUsageSource> {
  return new KubeletUsageSource({ kubeConfig: await loadKubeConfig({ kubeconfigPath }), insecureSkipTlsVerify: false, timeoutMs: 5_000, concurrency: 4, ...o });
}

async function kubelet(t: { after: (fn: () => Promise<void>) => void }, nodeName: string, volumes: FakeVolume[], fillerPods = 0): Promise<FakeKubelet> {
  const k = await FakeKubelet.start({ nodeName, reviewerKubeconfigPath: cluster.adminKubeconfigPath, volumes, fillerPods });
  t.after(() => k.close());
  return k;
}

function caFile(cert: Buffer): string {
  const path = join(work, `${uniqueName('ca')}.crt`);
  writeFileSync(path, cert);
  return path;
}

const claims = (...names: string[]) => names.map((name) => ({ namespace, name }));
const kinds = (report: UsageReport) =>
  Object.fromEntries([...report.claims].map(([key, c]) => [key.slice(namespace.length + 1), c.kind === 'sampled' ? 'sampled' : c.reason]));

const reader = await serviceAccountKubeconfig('autogrow-reader');
await grant({ kind: 'ServiceAccount', name: 'autogrow-reader', namespace }, autoGrowRole.rules!, {
  user: reader.username,
  subresource: 'stats',
  node: 'node-a',
});
const stranger = await serviceAccountKubeconfig('autogrow-stranger');
const proxyOnly = await serviceAccountKubeconfig('autogrow-proxy-only');
await grant({ kind: 'ServiceAccount', name: 'autogrow-proxy-only', namespace }, [{ apiGroups: [''], resources: ['nodes/proxy'], verbs: ['get'] }], {
  user: proxyOnly.username,
  subresource: 'proxy',
  node: 'node-a',
});

test('with the auto-grow ClusterRole: usage of the claims asked for, from a node with a realistic number of pods', async (t) => {
  const measuredAt = '2026-08-30T12:00:00Z';
  const node = await kubelet(t, 'node-a', [volume('data', { time: measuredAt }), volume('logs', { availableBytes: 5n * Gi }), volume('unasked')], 110);
  const usage = await source(reader.path, { caFile: caFile(node.cert) });
  t.after(() => usage.close());
  const report = await usage.readUsage([{ node: node.node(), claims: claims('data', 'logs', 'elsewhere') }], never);
  assert.deepEqual(kinds(report), { data: 'sampled', logs: 'sampled', elsewhere: 'notReported' });
  assert.deepEqual(report.claims.get(`${namespace}/data`), {
    kind: 'sampled',
    usage: { capacityBytes: 10n * Gi, availableBytes: Gi, inodes: 655_360n, inodesFree: 600_000n, sampledAtMs: Date.parse(measuredAt) },
  });
  assert.deepEqual(report.failures, []);
  // One request, authenticated as the ServiceAccount through TokenReview and allowed by the SubjectAccessReview.
  assert.deepEqual(
    node.requests.map(({ path, user, status }) => ({ path, user, status })),
    [{ path: '/stats/summary', user: reader.username, status: 200 }],
  );
});

test('without the rule: refused, with a message naming nodes/stats, for that node only', async (t) => {
  const node = await kubelet(t, 'node-a', [volume('data')]);
  for (const who of [stranger, proxyOnly]) {
    const usage = await source(who.path, { caFile: caFile(node.cert) });
    t.after(() => usage.close());
    const report = await usage.readUsage([{ node: node.node(), claims: claims('data') }], never);
    const result = report.claims.get(`${namespace}/data`);
    assert.equal(result?.kind, 'unavailable');
    if (result?.kind !== 'unavailable') return;
    assert.equal(result.reason, 'forbidden', who.username);
    assert.match(result.message, /answered 403 "Forbidden \(user=system:serviceaccount:.*, verb=get, resource=nodes, subresource\(s\)=\[stats\]\)"/);
    assert.match(result.message, /needs "get" on "nodes\/stats" \(deploy\/kubernetes\/auto-grow\)/);
    assert.deepEqual(
      report.failures.map((f) => [f.source, f.reason]),
      [['node node-a', 'forbidden']],
    );
  }
});

test('a token the API server does not know: 401, unauthorized', async (t) => {
  const node = await kubelet(t, 'node-a', [volume('data')]);
  const kubeconfig = JSON.parse(readFileSync(reader.path, 'utf8')) as { users: { user: Record<string, string> }[] };
  kubeconfig.users[0]!.user = { token: 'not-a-token' };
  const path = join(work, 'bad-token.kubeconfig');
  writeFileSync(path, JSON.stringify(kubeconfig));
  const usage = await source(path, { caFile: caFile(node.cert) });
  t.after(() => usage.close());
  const result = (await usage.readUsage([{ node: node.node(), claims: claims('data') }], never)).claims.get(`${namespace}/data`);
  assert.equal(result?.kind === 'unavailable' && result.reason, 'unauthorized');
  assert.deepEqual(
    node.requests.map((r) => r.status),
    [401],
  );
});

test('a client certificate: the CN is the user and the O the group the ClusterRole is bound to', async (t) => {
  const pki = mkdtempSync(join(work, 'client-'));
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: pki, stdio: 'ignore', timeout: 30_000 });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl([
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '1',
    '-subj',
    '/CN=kubelet-client-ca',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
  ]);
  openssl(['req', '-new', ...ec, '-keyout', 'client.key', '-out', 'client.csr', '-subj', '/O=autogrow-readers/CN=autogrow-cert-user']);
  writeFileSync(join(pki, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  openssl([
    'x509',
    '-req',
    '-in',
    'client.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'client.crt',
    '-days',
    '1',
    '-extfile',
    'client.ext',
  ]);
  await grant({ kind: 'Group', name: 'autogrow-readers', apiGroup: 'rbac.authorization.k8s.io' }, autoGrowRole.rules!, {
    user: 'autogrow-cert-user',
    groups: ['autogrow-readers'],
    subresource: 'stats',
    node: 'node-c',
  });
  const node = await FakeKubelet.start({
    nodeName: 'node-c',
    reviewerKubeconfigPath: cluster.adminKubeconfigPath,
    clientCa: readFileSync(join(pki, 'ca.crt')),
    volumes: [volume('data')],
  });
  t.after(() => node.close());
  const kubeconfig = JSON.parse(readFileSync(reader.path, 'utf8')) as { users: { user: Record<string, string> }[] };
  kubeconfig.users[0]!.user = {
    'client-certificate-data': readFileSync(join(pki, 'client.crt')).toString('base64'),
    'client-key-data': readFileSync(join(pki, 'client.key')).toString('base64'),
  };
  const path = join(pki, 'kubeconfig');
  writeFileSync(path, JSON.stringify(kubeconfig));
  const usage = await source(path, { caFile: caFile(node.cert) });
  t.after(() => usage.close());
  const report = await usage.readUsage([{ node: node.node(), claims: claims('data') }], never);
  assert.deepEqual(kinds(report), { data: 'sampled' });
  assert.deepEqual(
    node.requests.map(({ path, user, status }) => ({ path, user, status })),
    [{ path: '/stats/summary', user: 'autogrow-cert-user', status: 200 }],
  );
});

test("TLS: the kubelet's certificate is verified against the CA given, else the kubeconfig's; off only by name", async (t) => {
  const node = await kubelet(t, 'node-a', [volume('data')]);
  const read = async (o: Partial<KubeletSourceOptions>) => {
    const usage = await source(reader.path, o);
    t.after(() => usage.close());
    return (await usage.readUsage([{ node: node.node(), claims: claims('data') }], never)).claims.get(`${namespace}/data`);
  };
  assert.equal((await read({ caFile: caFile(node.cert) }))?.kind, 'sampled', 'the right CA');
  const wrong = await read({ caFile: caFile(selfSigned('IP:127.0.0.1').cert) });
  assert.equal(wrong?.kind === 'unavailable' && wrong.reason, 'tls', 'a wrong CA');
  assert.match(wrong?.kind === 'unavailable' ? wrong.message : '', /TLS: .*\(give the CA that signed the kubelets' serving certificates/);
  // No CA given: the kubeconfig's (the test cluster's CA), which did not sign this kubelet's certificate.
  const clusterCa = await read({});
  assert.equal(clusterCa?.kind === 'unavailable' && clusterCa.reason, 'tls', "the kubeconfig's CA");
  assert.equal((await read({ insecureSkipTlsVerify: true }))?.kind, 'sampled', 'verification off');
  // Nothing reached the handler without a trusted certificate: the client stopped at the handshake.
  assert.equal(node.requests.length, 2);
});

test('an unreachable kubelet and a hung one are "usage unavailable" for their claims only, within the timeout', async (t) => {
  const healthy = await kubelet(t, 'node-a', [volume('data')]);
  const hung = await kubelet(t, 'node-hung', [volume('stuck')]);
  hung.hang(true);
  const closedPort = await freePort();
  const unreachable: NodeClaims = {
    node: {
      metadata: { name: 'node-gone' },
      status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: closedPort } } },
    },
    claims: claims('lost'),
  };
  const noAddress: NodeClaims = {
    node: { metadata: { name: 'node-bare' }, status: { addresses: [{ type: 'ExternalIP', address: '203.0.113.9' }] } },
    claims: claims('far'),
  };
  const idle = await kubelet(t, 'node-idle', [volume('other')]);
  const timeoutMs = 1_000;
  const usage = await source(reader.path, { insecureSkipTlsVerify: true, timeoutMs, preferredAddressTypes: ['InternalIP'] });
  t.after(() => usage.close());
  const started = Date.now();
  const report = await usage.readUsage(
    [
      { node: healthy.node(), claims: claims('data') },
      { node: hung.node(), claims: claims('stuck') },
      unreachable,
      noAddress,
      // A node with nothing to measure is not asked.
      { node: idle.node(), claims: [] },
    ],
    never,
  );
  const elapsed = Date.now() - started;
  assert.deepEqual(kinds(report), { data: 'sampled', stuck: 'timeout', lost: 'unreachable', far: 'noAddress' });
  assert.ok(elapsed >= timeoutMs && elapsed < timeoutMs + 4_000, `bounded by the per-node timeout: ${elapsed}ms`);
  assert.deepEqual(report.failures.map((f) => f.source).sort(), ['node node-bare', 'node node-gone', 'node node-hung']);
  assert.equal(idle.requests.length, 0, 'no request to a node without opted-in mounted claims');
  assert.deepEqual(
    healthy.requests.map((r) => r.status),
    [200],
  );
});

test('concurrency: at most the given number of nodes are asked at once', async (t) => {
  const nodes = await Promise.all(['n1', 'n2', 'n3', 'n4'].map((name) => kubelet(t, name, [volume(`c-${name}`)])));
  for (const n of nodes) n.hang(true);
  const timeoutMs = 600;
  const usage = await source(reader.path, { insecureSkipTlsVerify: true, timeoutMs, concurrency: 2 });
  t.after(() => usage.close());
  const started = Date.now();
  const report = await usage.readUsage(
    nodes.map((n) => ({ node: n.node(), claims: claims(`c-${n.nodeName}`) })),
    never,
  );
  // Two rounds of two: the second pair is asked only once the first has timed out.
  assert.ok(Date.now() - started >= 2 * timeoutMs, `${Date.now() - started}ms`);
  assert.ok([...report.claims.values()].every((c) => c.kind === 'unavailable' && c.reason === 'timeout'));
});

test("the caller's abort ends the poll at once (not a node's failure)", async (t) => {
  const hung = await kubelet(t, 'node-hung', [volume('stuck')]);
  hung.hang(true);
  const usage = await source(reader.path, { insecureSkipTlsVerify: true, timeoutMs: 60_000 });
  t.after(() => usage.close());
  const abort = new AbortController();
  const reading = usage.readUsage([{ node: hung.node(), claims: claims('stuck') }], abort.signal);
  await eventually('the request reached the kubelet', () => hung.arrivals > 0);
  abort.abort(new Error('shutting down'));
  await assert.rejects(reading, /shutting down/);
});

test('a second poll reuses the credentials and the kept-alive connection', async (t) => {
  const node = await kubelet(t, 'node-a', [volume('data')]);
  const usage = await source(reader.path, { caFile: caFile(node.cert) });
  t.after(() => usage.close());
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(kinds(await usage.readUsage([{ node: node.node(), claims: claims('data') }], never)), { data: 'sampled' });
  }
  assert.deepEqual(
    node.requests.map((r) => r.status),
    [200, 200, 200],
  );
  assert.equal(node.connections, 1, 'one TLS connection for the three polls');
});

test('a Node port the kubelet does not listen on (from the Node, never guessed): unreachable', async (t) => {
  const usage = await source(reader.path, { insecureSkipTlsVerify: true });
  t.after(() => usage.close());
  const port = await freePort();
  const report = await usage.readUsage(
    [
      {
        node: {
          metadata: { name: 'node-z' },
          status: { addresses: [{ type: 'Hostname', address: 'localhost' }], daemonEndpoints: { kubeletEndpoint: { Port: port } } },
        },
        claims: claims('x'),
      },
    ],
    never,
  );
  const x = report.claims.get(`${namespace}/x`);
  assert.equal(x?.kind === 'unavailable' && x.reason, 'unreachable');
  assert.match(x?.kind === 'unavailable' ? x.message : '', new RegExp(`localhost:${port}`));
});

test("an exec credential plugin's token is used, and kept until it expires rather than fetched every poll", async (t) => {
  const node = await kubelet(t, 'node-a', [volume('data')]);
  const token = (JSON.parse(readFileSync(reader.path, 'utf8')) as { users: { user: { token: string } }[] }).users[0]!.user.token;
  const dir = mkdtempSync(join(work, 'exec-'));
  const runs = join(dir, 'runs');
  const plugin = join(dir, 'credential.sh');
  const expires = new Date(Date.now() + 3_600_000).toISOString();
  const credential = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token, expirationTimestamp: expires } });
  writeFileSync(plugin, `#!/bin/sh\necho run >> '${runs}'\necho '${credential}'\n`, { mode: 0o755 });
  const kubeconfig = JSON.parse(readFileSync(reader.path, 'utf8')) as { users: { user: Record<string, unknown> }[] };
  kubeconfig.users[0]!.user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' } };
  const path = join(dir, 'kubeconfig');
  writeFileSync(path, JSON.stringify(kubeconfig));
  const usage = await source(path, { caFile: caFile(node.cert) });
  t.after(() => usage.close());
  for (let i = 0; i < 2; i++) assert.deepEqual(kinds(await usage.readUsage([{ node: node.node(), claims: claims('data') }], never)), { data: 'sampled' });
  assert.equal(readFileSync(runs, 'utf8'), 'run\n', 'the plugin ran once for two polls');
  assert.deepEqual(
    node.requests.map((r) => r.user),
    [reader.username, reader.username],
  );
});
