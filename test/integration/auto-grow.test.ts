// --auto-grow end to end against the real API server: the real resizer (process runner and app),
// as an identity with rbac.yaml's rules and the auto-grow component's, a fault driver that expands
// volumes, and kubelet stand-ins over HTTPS (test/fakes/fake-kubelet.ts) that authenticate every
// request with a TokenReview and authorise it with a SubjectAccessReview for nodes/stats.
// One resizer grows a nearly full claim (and the resize controller expands it), reports a claim at
// its limit once, only tells about a dry-run claim, is refused by a real ResourceQuota without a
// storm, and says that an unreachable kubelet's claim cannot be measured. A restarted resizer keeps
// the cooldown (it lives on the claim), and explain shows it. Without the flag nothing of this runs.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useCluster, adminClients } from '../cluster/test-cluster.js';
import { createNamespace, uniqueName } from '../cluster/fixtures.js';
import { freePort } from '../cluster/cluster.js';
import { patchAs } from '../cluster/kube.js';
import { FaultDriver } from '../fakes/fault-driver.js';
import { FakeKubelet, type FakeVolume } from '../fakes/fake-kubelet.js';
import { eventsFor, readPv, readPvc } from '../support/api-reads.js';
import { eventually, startResizer, type RunningResizer } from '../support/in-process-resizer.js';
import { admissionReady, deleteNode, GiB, mountingPod, nodeAt, optedInClaim, optedInClass, resizerIdentity } from '../support/auto-grow-fixtures.js';
import { parseConfig } from '../../src/flags/config.js';
import { runExplain } from '../../src/diagnose/explain-facts.js';
import { runDoctor } from '../../src/diagnose/doctor.js';
import { checkPermissions } from '../../src/app/permission-check.js';
import { HttpKubeClient } from '../../src/kube/wire/http-client.js';
import { loadKubeConfig } from '../../src/kube/wire/kubeconfig.js';
import { renderExplanation } from '../../src/diagnose/explain-report.js';
import { createLogger, silentLogger } from '../../src/observability/log/logger.js';
import { formatBytes } from '../../src/model/quantity.js';

const cluster = await useCluster();
const admin = adminClients(cluster);
const work = mkdtempSync(join(tmpdir(), 'rz-auto-grow-'));
process.once('exit', () => rmSync(work, { recursive: true, force: true }));

const LIMIT = 'resize.topolvm.io/storage_limit';
const LAST_GROW = 'auto-grow.csi-resizer.io/last-grow';
const namespace = await createNamespace(admin, 'rz-autogrow');
const quotaNamespace = await createNamespace(admin, 'rz-autogrow-quota');
const identity = await resizerIdentity(admin, cluster, { namespace, dir: work });

const driverName = uniqueName('grow.csi');
const driver = await FaultDriver.start({ name: driverName });
const storageClassName = await optedInClass(admin, driverName);
const nodeName = uniqueName('ag-node');
const kubelet = await FakeKubelet.start({ nodeName, reviewerKubeconfigPath: cluster.adminKubeconfigPath });
await nodeAt(admin, nodeName, kubelet.port);
// A node whose pods mount only a claim that does not opt in: its kubelet must never be asked.
const quietNode = uniqueName('ag-node-quiet');
const quietKubelet = await FakeKubelet.start({ nodeName: quietNode, reviewerKubeconfigPath: cluster.adminKubeconfigPath });
await nodeAt(admin, quietNode, quietKubelet.port);
const goneNode = uniqueName('ag-node-gone');
await nodeAt(admin, goneNode, await freePort());
let first: RunningResizer | undefined;
const kubeletCa = join(work, 'kubelet-ca.crt');
writeFileSync(kubeletCa, kubelet.cert);
after(async () => {
  await first?.stop();
  await kubelet.close();
  await quietKubelet.close();
  await deleteNode(admin, quietNode);
  await driver.stop();
  await deleteNode(admin, nodeName);
  await deleteNode(admin, goneNode);
});

const claim = async (ns: string, annotations: Record<string, string>, node = nodeName) => {
  const c = await optedInClaim(admin, driver, { namespace: ns, storageClassName, driverName, annotations });
  await mountingPod(admin, ns, c.pvc, node);
  return c;
};
const claims = {
  data: await claim(namespace, { [LIMIT]: '20Gi' }),
  full: await claim(namespace, { [LIMIT]: '10Gi' }),
  dry: await claim(namespace, { [LIMIT]: '20Gi', 'auto-grow.csi-resizer.io/dry-run': 'true' }),
  roomy: await claim(namespace, { [LIMIT]: '20Gi' }),
  far: await claim(namespace, { [LIMIT]: '20Gi' }, goneNode),
  quota: await claim(quotaNamespace, { [LIMIT]: '20Gi' }),
  notOptedIn: await claim(namespace, {}, quietNode),
};
quietKubelet.setVolumes([{ namespace, claim: claims.notOptedIn.pvc, capacityBytes: 10n * GiB, availableBytes: 0n }]);
await admissionReady(admin, namespace, claims.data.pvc);
await admissionReady(admin, quotaNamespace, claims.quota.pvc);
// A real ResourceQuota: 10Gi of requests, all used. Without kube-controller-manager its status is
// written here, as the quota controller would.
await admin.core.createNamespacedResourceQuota({
  namespace: quotaNamespace,
  body: { metadata: { name: 'storage' }, spec: { hard: { 'requests.storage': '10Gi' } } },
});
await admin.core.patchNamespacedResourceQuotaStatus(
  { namespace: quotaNamespace, name: 'storage', body: { status: { hard: { 'requests.storage': '10Gi' }, used: { 'requests.storage': '10Gi' } } } },
  patchAs(),
);

const volume = (ns: string, c: { pvc: string }, availableBytes: bigint, capacityBytes = 10n * GiB): FakeVolume => ({
  namespace: ns,
  claim: c.pvc,
  capacityBytes,
  availableBytes,
  inodes: 655_360n,
  inodesFree: 600_000n,
});
const nearlyFull = GiB / 2n;
kubelet.setVolumes([
  volume(namespace, claims.data, nearlyFull),
  volume(namespace, claims.full, nearlyFull),
  volume(namespace, claims.dry, nearlyFull),
  volume(namespace, claims.roomy, 8n * GiB),
  volume(quotaNamespace, claims.quota, nearlyFull),
]);

const autoGrowArgs = [
  '--auto-grow',
  '--auto-grow-interval=1s',
  '--auto-grow-usage-timeout=2s',
  `--kubelet-certificate-authority=${kubeletCa}`,
  '--kubelet-preferred-address-types=InternalIP',
];
const start = (args: string[]) => startResizer({ kubeconfig: identity.kubeconfig, csiAddress: driver.address, args });

async function count(r: RunningResizer, result: string): Promise<number> {
  const metric = await r.metrics.registry.getSingleMetric('csi_resizer_auto_grow_total')?.get();
  return metric?.values.find((v) => v.labels['result'] === result)?.value ?? 0;
}
const summaries = () => kubelet.requests.filter((r) => r.path === '/stats/summary');
/** Waits for `n` more answered polls of the kubelet (each poll asks it once). */
async function polls(n: number): Promise<void> {
  const target = summaries().length + n;
  await eventually(`${n} more polls`, () => summaries().length >= target, 30_000);
}
const request = async (ns: string, c: { pvc: string }) => (await readPvc(admin, ns, c.pvc)).spec.resources?.requests?.['storage'];
const reasonsOf = async (ns: string, c: { pvc: string }) => (await eventsFor(admin, ns, c.pvc)).map((e) => `${e.type} ${e.reason}`);

test('grows a nearly full claim, and the resize controller expands its volume', async () => {
  first = await start(autoGrowArgs);
  await eventually('data grown to 11Gi', async () => (await readPvc(admin, namespace, claims.data.pvc)).status?.capacity?.['storage'] === '11Gi', 30_000);
  const pvc = await readPvc(admin, namespace, claims.data.pvc);
  assert.equal(pvc.spec.resources?.requests?.['storage'], '11Gi');
  const record = JSON.parse(pvc.metadata.annotations?.[LAST_GROW] ?? '{}') as Record<string, string>;
  assert.deepEqual(
    { from: record['from'], to: record['to'], filesystemBytes: record['filesystemBytes'] },
    { from: '10Gi', to: '11Gi', filesystemBytes: String(10n * GiB) },
  );
  assert.equal((await readPv(admin, claims.data.pv)).spec.capacity?.['storage'], '11Gi');
  const events = await eventsFor(admin, namespace, claims.data.pvc);
  const grown = events.find((e) => e.reason === 'AutoGrowRequested');
  assert.equal(grown?.type, 'Normal');
  assert.match(grown?.message ?? '', /^Raised the storage request from 10Gi to 11Gi: 512Mi of 10Gi free \(threshold 1Gi\)$/);
  assert.ok(
    events.some((e) => e.reason === 'VolumeResizeSuccessful'),
    'the resize controller finished the expansion',
  );
  assert.equal(await count(first, 'grown'), 1);
  const reaction = await first.metrics.registry.getSingleMetric('csi_resizer_auto_grow_reaction_seconds')?.get();
  assert.equal(reaction?.values.find((v) => (v as { metricName?: string }).metricName?.endsWith('_count'))?.value, 1);
  // Every kubelet request was authenticated as the resizer's ServiceAccount and allowed.
  assert.ok(summaries().every((r) => r.user === identity.username && r.status === 200));
  // The startup RBAC check asked for the auto-grow rules too, and found them granted.
  await eventually('the RBAC check', () => first!.logs.some((l) => l.includes('RBAC permissions checked')));
  assert.ok(!first.logs.some((l) => l.includes('Missing RBAC permission')));
});

test('a claim at its limit: one Warning, the limit recorded on the claim, counted at every poll', async () => {
  assert.ok(first);
  await eventually(
    'the limit recorded',
    async () => (await readPvc(admin, namespace, claims.full.pvc)).metadata.annotations?.['auto-grow.csi-resizer.io/limit-reached'] === '10Gi',
  );
  await polls(3);
  const events = await eventsFor(admin, namespace, claims.full.pvc);
  assert.deepEqual(
    events.filter((e) => e.reason.startsWith('AutoGrow')).map((e) => [e.type, e.reason, e.count]),
    [['Warning', 'AutoGrowLimitReached', 1]],
  );
  assert.equal(await request(namespace, claims.full), '10Gi');
  assert.ok((await count(first, 'limit_reached')) >= 3);
});

test('dry-run: a Normal event saying what would be done, and nothing written', async () => {
  assert.ok(first);
  await eventually('the dry-run event', async () => (await reasonsOf(namespace, claims.dry)).includes('Normal AutoGrowDryRun'));
  await polls(2);
  const pvc = await readPvc(admin, namespace, claims.dry.pvc);
  assert.equal(pvc.spec.resources?.requests?.['storage'], '10Gi');
  assert.equal(pvc.metadata.annotations?.[LAST_GROW], undefined);
  const dry = (await eventsFor(admin, namespace, claims.dry.pvc)).filter((e) => e.reason === 'AutoGrowDryRun');
  assert.equal(dry.length, 1);
  assert.equal(dry[0]!.count, 1);
  assert.equal(dry[0]!.message, 'Dry run: would raise the storage request from 10Gi to 11Gi: 512Mi of 10Gi free (threshold 1Gi)');
  assert.ok((await count(first, 'dry_run')) >= 2);
});

test('a ResourceQuota refusal: one Warning with the API message, then a slow retry, not a storm', async () => {
  assert.ok(first);
  await eventually('the refusal', async () => (await reasonsOf(quotaNamespace, claims.quota)).includes('Warning AutoGrowRefused'));
  await polls(3);
  const refused = (await eventsFor(admin, quotaNamespace, claims.quota.pvc)).filter((e) => e.reason === 'AutoGrowRefused');
  assert.equal(refused.length, 1);
  assert.equal(refused[0]!.count, 1, 'no second attempt within the first retry interval (5 minutes)');
  assert.match(
    refused[0]!.message,
    /^The API server refused the storage request 11Gi: .*exceeded quota: storage, requested: requests\.storage=1Gi, used: requests\.storage=10Gi, limited: requests\.storage=10Gi/,
  );
  assert.equal(await request(quotaNamespace, claims.quota), '10Gi');
  assert.equal(await count(first, 'refused'), 1);
});

test('an unreachable kubelet: its claim is "usage unavailable" (one Warning naming the cause), the other node is read as usual', async () => {
  assert.ok(first);
  await eventually('the usage warning', async () => (await reasonsOf(namespace, claims.far)).includes('Warning AutoGrowUsageUnavailable'));
  await polls(2);
  const warnings = (await eventsFor(admin, namespace, claims.far.pvc)).filter((e) => e.reason === 'AutoGrowUsageUnavailable');
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0]!.count, 1);
  assert.match(warnings[0]!.message, new RegExp(`kubelet on node ${goneNode} \\(127\\.0\\.0\\.1:\\d+\\): .*ECONNREFUSED`));
  assert.equal(await request(namespace, claims.far), '10Gi');
  assert.ok((await count(first, 'usage_unavailable')) >= 2);
  // A claim with room, on the same node as the others: measured, nothing to do, nothing said.
  assert.deepEqual(
    (await reasonsOf(namespace, claims.roomy)).filter((r) => r.includes('AutoGrow')),
    [],
  );
  assert.ok(first.logs.some((l) => l.includes('Cannot read volume usage') && l.includes(goneNode)));
  // A node whose pods mount no opted-in claim: no request, not even a connection.
  assert.equal(quietKubelet.arrivals, 0);
  assert.equal(quietKubelet.connections, 0);
  assert.equal(await request(namespace, claims.notOptedIn), '10Gi');
});

test('doctor --auto-grow: the auto-grow permissions granted, and a kubelet that answers', async () => {
  const config = parseConfig([`--kubeconfig=${identity.kubeconfig}`, `--csi-address=${driver.address}`, ...autoGrowArgs]);
  const report = await runDoctor({ config, log: silentLogger }, AbortSignal.timeout(60_000));
  const check = (name: string) => report.checks.find((c) => c.name === name);
  assert.equal(check('RBAC')?.status, 'ok', JSON.stringify(check('RBAC')));
  const autoGrow = check('Auto-grow');
  // Pods are listed by name: a claim on the unreachable node may come first, and is reported beside the answer.
  assert.ok(autoGrow?.status === 'ok' || autoGrow?.status === 'warn', JSON.stringify(autoGrow));
  assert.match(autoGrow?.summary ?? '', new RegExp(`^kubelet on node ${nodeName} answered: .* free \\(6 claim\\(s\\) opt in\\)$`));
  assert.ok((autoGrow?.details ?? []).every((d) => d.includes(goneNode)));
  // Without the component, each auto-grow rule is named as missing, with where it comes from.
  const bare = await resizerIdentity(admin, cluster, { namespace, dir: work, autoGrow: false });
  const bareReport = await runDoctor(
    { config: parseConfig([`--kubeconfig=${bare.kubeconfig}`, `--csi-address=${driver.address}`, ...autoGrowArgs]), log: silentLogger },
    AbortSignal.timeout(60_000),
  );
  const rbac = bareReport.checks.find((c) => c.name === 'RBAC');
  // Resizes go on without auto-grow's rules: a warning, each rule with what it disables.
  assert.equal(rbac?.status, 'warn', JSON.stringify(rbac));
  const disables = 'disables auto-grow (resizes and modifications are not affected)';
  assert.deepEqual(rbac?.details?.sort(), [
    `nodes get: ${disables}`,
    `nodes/stats get: ${disables}`,
    `persistentvolumeclaims patch: ${disables}`,
    `storageclasses.storage.k8s.io list,watch: ${disables}`,
  ]);
});

test('the startup RBAC check without the component: one warning per auto-grow rule, pointing at deploy/kubernetes/auto-grow', async () => {
  const bare = await resizerIdentity(admin, cluster, { namespace, dir: work, autoGrow: false });
  const client = new HttpKubeClient({ kubeConfig: await loadKubeConfig({ kubeconfigPath: bare.kubeconfig }), qps: 100, burst: 100 });
  try {
    const lines: string[] = [];
    const needs = { pods: true, volumeAttributesClasses: false, leaseNamespace: undefined, autoGrow: { kubelets: true } };
    const missing = await checkPermissions(
      client,
      needs,
      createLogger({ verbosity: 0, format: 'text', write: (l) => lines.push(l) }),
      AbortSignal.timeout(30_000),
    );
    // storageclasses list,watch, persistentvolumeclaims patch, nodes get, nodes/stats get.
    assert.equal(missing.length, 4);
    assert.equal(lines.length, 4);
    assert.ok(
      lines.every((l) => l.includes('auto-grow will not grow claims until it is granted (see deploy/kubernetes/auto-grow)')),
      lines.join('\n'),
    );
  } finally {
    client.close();
  }
});

test('the cooldown holds across a restart: it is on the claim, not in memory; explain says when the next grow is allowed', async () => {
  assert.ok(first);
  // The filesystem grew with the volume and is nearly full again.
  kubelet.setVolumes([volume(namespace, claims.data, nearlyFull, 11n * GiB)]);
  await polls(2);
  await first.stop({ graceful: true });
  first = undefined;

  const second = await start(autoGrowArgs);
  try {
    await eventually('the new leader waits for the cooldown', async () => (await count(second, 'cooldown')) >= 2, 30_000);
    assert.equal(await request(namespace, claims.data), '11Gi');
    assert.equal(await count(second, 'grown'), 0);
    assert.equal((await eventsFor(admin, namespace, claims.data.pvc)).filter((e) => e.reason === 'AutoGrowRequested').length, 1);
  } finally {
    await second.stop();
  }

  // A person runs explain, as a cluster reader (the resizer itself never reads single claims).
  const config = parseConfig([`--kubeconfig=${cluster.adminKubeconfigPath}`, `--csi-address=${driver.address}`, ...autoGrowArgs]);
  const explained = await runExplain({ config, log: silentLogger, claim: `${namespace}/${claims.data.pvc}` }, AbortSignal.timeout(30_000));
  const autoGrow = explained.explanation.autoGrow;
  assert.equal(autoGrow?.decision, 'cooldown');
  assert.equal(autoGrow?.limit, '20Gi');
  assert.deepEqual(autoGrow?.usage && { filesystem: autoGrow.usage.filesystem, available: autoGrow.usage.available, threshold: autoGrow.usage.threshold }, {
    filesystem: '11Gi',
    available: '512Mi',
    threshold: formatBytes((11n * GiB) / 10n, 'BinarySI'),
  });
  const lastGrowAt = Date.parse((JSON.parse((await readPvc(admin, namespace, claims.data.pvc)).metadata.annotations![LAST_GROW]!) as { at: string }).at);
  assert.equal(autoGrow?.nextGrowAllowedAt, new Date(lastGrowAt + (8 * 60 + 10) * 60_000).toISOString());
  assert.match(
    renderExplanation(explained.key, explained.explanation, new Date()),
    /Auto-grow: needs more; waits for the cooldown until .*\n {2}- usage: 512Mi of 11Gi free/,
  );
});

test('without --auto-grow: no kubelet is asked, no StorageClass cache, no auto-grow metric, nothing written', async () => {
  kubelet.setVolumes([volume(namespace, claims.roomy, nearlyFull)]);
  const arrivals = kubelet.arrivals;
  const connections = kubelet.connections;
  const off = await start([]);
  try {
    // The resizer works: a user's resize of another claim goes through.
    await admin.core.patchNamespacedPersistentVolumeClaim(
      { namespace, name: claims.dry.pvc, body: { spec: { resources: { requests: { storage: '12Gi' } } } } },
      patchAs(),
    );
    await eventually('the user resize done', async () => (await readPvc(admin, namespace, claims.dry.pvc)).status?.capacity?.['storage'] === '12Gi', 30_000);
    assert.equal(kubelet.arrivals, arrivals, 'no request reached a kubelet');
    assert.equal(kubelet.connections, connections, 'no connection to a kubelet');
    assert.equal(await request(namespace, claims.roomy), '10Gi');
    assert.equal(off.metrics.registry.getSingleMetric('csi_resizer_auto_grow_total'), undefined);
    assert.ok(!off.logs.some((l) => l.includes('storageclasses')), 'no StorageClass informer');
    assert.ok(!off.logs.some((l) => /auto-grow/i.test(l)));
    assert.ok(
      off.logs.some((l) => l.includes('Informer synced') && l.includes('persistentvolumeclaims')),
      'the informer lines this relies on are logged',
    );
  } finally {
    await off.stop();
  }
});
