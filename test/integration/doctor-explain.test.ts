// `csi-resizer doctor` and `csi-resizer explain` against the real API server, one test per cause
// of "my PVC does not resize": the wrong socket, missing RBAC, no leader, a StorageClass that
// forbids expansion, a PV of another driver, a claimRef UID mismatch, a class that does not exist,
// an infeasible size and a kubelet that never finishes. The states are made by our resizer running
// against the scripted driver, not written by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig, patchAs } from '../cluster/kube.js';
import {
  createNamespace,
  kubeconfigWithoutRules,
  createStorageClass,
  deletePv,
  deletePvc,
  provisionVolume,
  requestPvcSize,
  uniqueName,
} from '../cluster/fixtures.js';
import { eventually } from '../support/in-process-resizer.js';
import { faultScenario, GiB } from '../support/fault-scenario.js';
import { readPvc } from '../support/api-reads.js';
import { runSubcommand, type Subcommand } from '../../src/diagnose/subcommands.js';
import { runCli } from './cli-harness.js';
import { identityWithRunnerRole, runnerRules } from '../cluster/rbac.js';
import { HttpKubeClient } from '../../src/kube/wire/http-client.js';
import { loadKubeConfig } from '../../src/kube/wire/kubeconfig.js';
import { microTime } from '../../src/model/time.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);

async function run(command: Subcommand, args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runSubcommand(command, args, {
    program: 'csi-resizer',
    out: (s) => {
      out += s;
    },
    err: (s) => {
      err += s;
    },
  });
  return { code, out, err };
}

interface DoctorJson {
  driver: string | null;
  healthy: boolean;
  checks: { name: string; status: string; summary: string; details?: string[] }[];
  claims: { claim: string; operation: string; state: string; forMs: number | null }[];
}

async function doctor(args: string[]): Promise<{ code: number; report: DoctorJson }> {
  const r = await run('doctor', [...args, '--output=json']);
  return { code: r.code, report: JSON.parse(r.out) as DoctorJson };
}

const check = (r: DoctorJson, name: string) => {
  const c = r.checks.find((x) => x.name === name);
  assert.ok(c, `no ${name} check in ${JSON.stringify(r.checks)}`);
  return c;
};

// One scripted driver serves every claim below: expansions above 5Gi are OutOfRange, and every
// expansion needs the node (so a claim that grows waits for a kubelet that never comes).
const s = await faultScenario({ after: (fn) => test.after(fn) }, cluster, admin, {
  driver: {
    expandLimit: { bytes: 5n * GiB, code: GrpcStatus.OUT_OF_RANGE, details: 'requested capacity exceeds maximum' },
    nodeExpansionRequired: true,
    capabilities: { controllerModify: true },
  },
  resizerArgs: ['--retry-interval-max=1m'],
  namespacePrefix: 'rz-doctor',
});
const base = [`--kubeconfig=${cluster.adminKubeconfigPath}`, `--csi-address=${s.driver.address}`];

async function anotherClaim(size = '1Gi'): Promise<{ pvc: string; pv: string }> {
  const id = uniqueName('vol');
  s.driver.createVolume(id, GiB);
  const v = await provisionVolume(admin, s.driver.address, {
    namespace: s.namespace,
    size,
    storageClassName: s.storageClassName,
    driverName: s.driver.name,
    existingVolumeId: id,
  });
  const names = { pvc: v.pvc.metadata!.name!, pv: v.pv.metadata!.name! };
  test.after(async () => {
    await deletePvc(admin, s.namespace, names.pvc);
    await deletePv(admin, names.pv);
  });
  return names;
}

test("infeasible size: explain names the driver's answer and what to lower; doctor and explain both call the claim infeasible", async () => {
  await requestPvcSize(admin, s.namespace, s.pvcName, '10Gi', { retryUntilAdmittedMs: 10_000 });
  await eventually(
    'ControllerResizeInfeasible',
    async () => (await readPvc(admin, s.namespace, s.pvcName)).status?.allocatedResourceStatuses?.['storage'] === 'ControllerResizeInfeasible',
  );

  const explained = await run('explain', [`${s.namespace}/${s.pvcName}`, ...base]);
  assert.equal(explained.code, 0, explained.err);
  assert.match(explained.out, /Decision: Waiting: the driver called 10Gi infeasible/);
  assert.match(explained.out, /Warning VolumeResizeFailed .*code = OutOfRange desc = requested capacity exceeds maximum/);
  assert.match(explained.out, /Lower the request to a size the driver accepts \(at least the current capacity, 1Gi\)/);
  assert.match(explained.out, /^State: resize infeasible$/m);

  const { code, report } = await doctor(base);
  assert.equal(report.driver, s.driver.name);
  assert.ok(
    report.claims.some((c) => c.claim === `${s.namespace}/${s.pvcName}` && c.state === 'infeasible'),
    JSON.stringify(report.claims),
  );
  assert.equal(check(report, 'Claims').status, 'warn');
  assert.equal(check(report, 'CSI driver').status, 'ok');
  assert.equal(check(report, 'API server').status, 'ok');
  assert.match(check(report, 'API server').summary, /version v1\.\d+\.\d+/);
  assert.equal(code, report.healthy ? 0 : 1);
});

test('a kubelet that never finishes: explain says the node must grow it, in the state doctor shows with how long it has waited', async () => {
  const c = await anotherClaim();
  await requestPvcSize(admin, s.namespace, c.pvc, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await eventually(
    'NodeResizePending',
    async () => (await readPvc(admin, s.namespace, c.pvc)).status?.allocatedResourceStatuses?.['storage'] === 'NodeResizePending',
  );

  const explained = await run('explain', [`${s.namespace}/${c.pvc}`, ...base]);
  assert.match(explained.out, /Decision: Waiting for kubelet: node expansion pending/);
  assert.match(explained.out, /No pod uses the claim: kubelet grows the file system the next time a pod mounts it/);
  assert.match(explained.out, /^State: resize waiting for kubelet$/m);

  const { report } = await doctor(base);
  const row = report.claims.find((x) => x.claim === `${s.namespace}/${c.pvc}`);
  assert.equal(row?.state, 'waiting for kubelet');
  assert.ok(row.forMs !== null && row.forMs >= 0);
});

test('a claimRef that names another claim UID: explain says the volume is ignored; doctor warns', async () => {
  const c = await anotherClaim();
  await admin.core.patchPersistentVolume({ name: c.pv, body: { spec: { claimRef: { uid: 'stale-uid-from-a-deleted-claim' } } } }, patchAs());
  const explained = await run('explain', [`${s.namespace}/${c.pvc}`, ...base]);
  assert.match(explained.out, /Decision: Ignored: PV .* is claimed by another PVC .*stale-uid-from-a-deleted-claim/);
  const { report } = await doctor(base);
  const refs = check(report, 'Claim references');
  assert.equal(refs.status, 'warn');
  assert.ok(refs.details?.some((d) => d.includes(c.pv)));
});

test('a class that does not exist: explain says the modify waits for it and how to fix it', async () => {
  const c = await anotherClaim();
  await admin.core.patchNamespacedPersistentVolumeClaim(
    { name: c.pvc, namespace: s.namespace, body: { spec: { volumeAttributesClassName: 'no-such-class' } } },
    patchAs(),
  );
  const explained = await run('explain', [`${s.namespace}/${c.pvc}`, ...base]);
  assert.match(explained.out, /Modify: waiting; VolumeAttributesClass no-such-class does not exist/);
  assert.match(explained.out, /Create VolumeAttributesClass no-such-class for driver /);
});

test('a PV of another driver: explain says whose it is', async (t) => {
  const namespace = await createNamespace(admin, 'rz-doctor-other');
  const sc = await createStorageClass(admin, { allowVolumeExpansion: true, provisioner: cluster.driverName });
  const v = await provisionVolume(admin, cluster.csiAddress, {
    namespace,
    size: '1Gi',
    storageClassName: sc.metadata!.name!,
    driverName: cluster.driverName,
    csiProtoPath: cluster.csiProtoPath,
  });
  t.after(() => deletePvc(admin, namespace, v.pvc.metadata!.name!));
  const explained = await run('explain', [`${namespace}/${v.pvc.metadata!.name!}`, ...base]);
  assert.match(
    explained.out,
    new RegExp(
      `Not this resizer's claim: the PV belongs to CSI driver ${cluster.driverName.replace(/\./g, '\\.')}, this resizer serves ${s.driver.name.replace(/\./g, '\\.')}`,
    ),
  );
});

test('a StorageClass of the driver without allowVolumeExpansion: doctor warns and names it', async () => {
  const sc = await createStorageClass(admin, { allowVolumeExpansion: false, provisioner: s.driver.name });
  test.after(() =>
    admin.storage.deleteStorageClass({ name: sc.metadata!.name! }).then(
      () => undefined,
      () => undefined,
    ),
  );
  const { report } = await doctor(base);
  const classes = check(report, 'StorageClasses');
  assert.equal(classes.status, 'warn');
  assert.deepEqual(classes.details, [sc.metadata!.name!]);
});

test('the wrong socket: doctor fails and says where it looked (real CLI, exit 1)', async () => {
  const missing = join(mkdtempSync(join(tmpdir(), 'rz-doctor-')), 'csi.sock');
  const r = await runCli(['doctor', `--kubeconfig=${cluster.adminKubeconfigPath}`, `--csi-address=${missing}`], { timeoutMs: 60_000 });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, new RegExp(`\\[FAIL\\] CSI socket: no socket at ${missing.replace(/[.]/g, '\\.')}`));
  assert.match(r.stdout, /\[ OK \] API server: /);
  assert.match(r.stdout, /Problems found/);
});

test('missing RBAC: doctor names every missing rule and what it disables; explain says it cannot read the claim', async (t) => {
  const namespace = await createNamespace(admin, 'rz-doctor-rbac');
  const path = await kubeconfigWithoutRules(admin, cluster.resizerKubeconfigPath, namespace, 'rz-doctor-');
  t.after(() =>
    admin.core.deleteNamespace({ name: namespace }).then(
      () => undefined,
      () => undefined,
    ),
  );

  const { code, report } = await doctor([`--kubeconfig=${path}`, `--csi-address=${s.driver.address}`]);
  assert.equal(code, 1);
  const rbac = check(report, 'RBAC');
  assert.equal(rbac.status, 'fail');
  assert.ok(rbac.details?.includes('persistentvolumeclaims/status patch: disables resizes and modifications'), JSON.stringify(rbac.details));
  assert.ok(rbac.details?.includes('persistentvolumes list,watch: disables resizes and modifications'));
  assert.ok(rbac.details?.includes('events create,patch: disables events on claims (resizes and modifications are not affected)'));

  const explained = await run('explain', [`${s.namespace}/${s.pvcName}`, `--kubeconfig=${path}`, `--csi-address=${s.driver.address}`]);
  assert.equal(explained.code, 1);
  assert.match(explained.err, /forbidden/);
});

test('a role without the VolumeAttributesClass rule: doctor names the rule and says it disables modify, a warning', async (t) => {
  const namespace = await createNamespace(admin, 'rz-doctor-vac');
  t.after(() =>
    admin.core.deleteNamespace({ name: namespace }).then(
      () => undefined,
      () => undefined,
    ),
  );
  const identity = await identityWithRunnerRole(admin, {
    namespace,
    resizerKubeconfigPath: cluster.resizerKubeconfigPath,
    rules: runnerRules().filter((r) => !(r.resources ?? []).includes('volumeattributesclasses')),
    after: (fn) => t.after(fn),
  });
  await identity.untilAllowed('list', 'storage.k8s.io', 'volumeattributesclasses', false);

  const { report } = await doctor([`--kubeconfig=${identity.kubeconfigPath}`, `--csi-address=${s.driver.address}`]);
  const rbac = check(report, 'RBAC');
  assert.equal(rbac.status, 'warn', 'resizes still work: a warning, not a failure');
  assert.deepEqual(rbac.details, [
    'volumeattributesclasses.storage.k8s.io list,watch: disables modify (VolumeAttributesClass changes are not applied; resizes are not affected)',
  ]);
});

test('no leader: doctor says when no Lease exists, when it expired, and who leads when it is fresh', async (t) => {
  const namespace = await createNamespace(admin, 'rz-doctor-lease');
  const args = [...base, '--leader-election', `--leader-election-namespace=${namespace}`];
  t.after(() =>
    admin.core.deleteNamespace({ name: namespace }).then(
      () => undefined,
      () => undefined,
    ),
  );

  let { report } = await doctor(args);
  assert.equal(check(report, 'Leader').status, 'warn');
  assert.match(check(report, 'Leader').summary, /no Lease/);

  const leaseName = `external-resizer-${s.driver.name.replace(/[^a-zA-Z0-9-]/g, '-')}`;
  const stale = microTime(Date.now() - 10 * 60_000);
  const api = new HttpKubeClient({ kubeConfig: await loadKubeConfig({ kubeconfigPath: cluster.adminKubeconfigPath }), qps: 50, burst: 50 });
  t.after(() => api.close());
  const never = new AbortController().signal;
  const created = await api.createLease(
    namespace,
    {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: leaseName },
      spec: { holderIdentity: 'old-pod', leaseDurationSeconds: 15, renewTime: stale, acquireTime: stale },
    },
    never,
  );
  ({ report } = await doctor(args));
  assert.equal(check(report, 'Leader').status, 'fail');
  assert.match(check(report, 'Leader').summary, /held by old-pod expired \(last renewed 10m\d*s? ago/);
  assert.equal(report.healthy, false);

  await api.updateLease(namespace, { ...created, spec: { ...(created['spec'] as object), renewTime: microTime(Date.now()) } }, never);
  ({ report } = await doctor(args));
  assert.equal(check(report, 'Leader').status, 'ok');
  assert.match(check(report, 'Leader').summary, /old-pod leads for /);
});

test('explain through the real CLI: JSON output and a missing claim exits 1', async () => {
  const r = await runCli(['explain', `${s.namespace}/does-not-exist`, ...base, '--output=json'], { timeoutMs: 60_000 });
  assert.equal(r.code, 1, r.stderr);
  const parsed = JSON.parse(r.stdout) as { claim: string; claimFound: boolean; verdict: string };
  assert.equal(parsed.claim, `${s.namespace}/does-not-exist`);
  assert.equal(parsed.claimFound, false);
  assert.match(parsed.verdict, /does not exist/);
  const usage = await runCli(['explain', ...base], { timeoutMs: 60_000 });
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /usage: csi-resizer explain NAMESPACE\/PVC/);
});
