// A resizer deployed without the VolumeAttributesClass rule of deploy/kubernetes/rbac.yaml (as
// many drivers shipped after upgrading), against the real API server: it says once, as a warning,
// that modify is off and which rule to add; resizes go on meanwhile; once the rule is granted it
// says so and applies a claim's class change without a restart; and no forbidden line repeats.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig } from '../cluster/kube.js';
import { createNamespace, createStorageClass, deletePvc, provisionVolume, requestPvcSize, uniqueName } from '../cluster/fixtures.js';
import { startMockDriver } from '../cluster/mock-driver.js';
import { identityWithRunnerRole, runnerRules } from '../cluster/rbac.js';
import { startResizer, eventually, type RunningResizer } from '../support/in-process-resizer.js';
import { readPvc } from '../support/api-reads.js';
import { createVac, deleteVac, modifiedTo, pvcWhen, setClass } from './modify-fixtures.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);
const driver = await startMockDriver({ name: `${uniqueName('vacrbac')}.mock.csi.k8s.io` });
process.once('beforeExit', () => void driver.stop());
const namespace = await createNamespace(admin, 'rz-vac-rbac');
const storageClassName = uniqueName('rz-sc');
await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: driver.name });

const isVacRule = (r: { apiGroups?: string[]; resources?: string[] }) =>
  (r.apiGroups ?? []).includes('storage.k8s.io') && (r.resources ?? []).includes('volumeattributesclasses');

const MODIFY_OFF = 'Missing RBAC permission: modify is off until it is granted (resizes are not affected)';
const MODIFY_ON = 'RBAC permission granted, modify starting';
/** The line's message, without klog's header. */
const message = (line: string) => /\] "((?:[^"\\]|\\.)*)"/.exec(line)?.[1] ?? '';

/** csi_resizer_informer_refusals_total{resource="volumeattributesclasses"} of the running resizer. */
async function refusals(resizer: RunningResizer): Promise<number> {
  const metric = await resizer.metrics.informerRefusals.get();
  return metric.values.find((v) => v.labels['resource'] === 'volumeattributesclasses')?.value ?? 0;
}

async function claim(t: { after(fn: () => unknown): void }) {
  const v = await provisionVolume(admin, driver.address, { namespace, size: '1Gi', storageClassName, driverName: driver.name });
  const name = v.pvc.metadata!.name!;
  t.after(() => deletePvc(admin, namespace, name));
  return name;
}

test('without the VolumeAttributesClass rule: one warning, resizes go on, modify starts when the rule is granted, no restart', async (t) => {
  const withoutVac = runnerRules().filter((r) => !isVacRule(r));
  assert.equal(withoutVac.length, runnerRules().length - 1, 'rbac.yaml has one VolumeAttributesClass rule');
  const identity = await identityWithRunnerRole(admin, {
    namespace,
    resizerKubeconfigPath: cluster.resizerKubeconfigPath,
    rules: withoutVac,
    after: (fn) => t.after(fn),
  });
  await identity.untilAllowed('list', 'storage.k8s.io', 'volumeattributesclasses', false);

  const gold = await createVac(admin, driver.name, { iops: '3000' });
  t.after(() => deleteVac(admin, gold));
  const waitsForModify = await claim(t);
  const grows = await claim(t);

  const resizer = await startResizer({ kubeconfig: identity.kubeconfigPath, csiAddress: driver.address });
  t.after(() => resizer.stop());
  const { logs } = resizer;

  // Said once, as a warning naming the rule; the startup check, run after it, finds the same rule
  // missing and says nothing more.
  const warning = await eventually('the warning', () => logs.find((l) => message(l) === MODIFY_OFF));
  assert.match(warning, /^W/);
  assert.match(warning, / permission="volumeattributesclasses\.storage\.k8s\.io list,watch" err=".*forbidden/);
  await eventually('the startup RBAC check', () => logs.some((l) => message(l) === 'RBAC permissions checked' && / missing=1$/.test(l)));

  // Modify is off, resizes go on.
  await setClass(admin, namespace, waitsForModify, gold);
  await requestPvcSize(admin, namespace, grows, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await pvcWhen(admin, namespace, grows, 'resized to 2Gi', (pvc) => pvc.status?.capacity?.['storage'] === '2Gi');
  // Let the refusals repeat (each retried with backoff) before the rule is granted.
  await eventually('four refused lists or watches of classes', async () => (await refusals(resizer)) >= 4, 30_000);
  const waiting = await readPvc(admin, namespace, waitsForModify);
  assert.equal(waiting.status?.currentVolumeAttributesClassName, undefined, 'modified while modify was off');
  assert.ok(!logs.some((l) => message(l) === 'Starting external resizer for modify volume'), 'the modify controller started without its cache');

  // The operator adds the rule: the refused informer is accepted at its next retry (backoff at
  // most 30 s), says so, and the modify controller starts and applies the class.
  await identity.setRules(runnerRules());
  await identity.untilAllowed('list', 'storage.k8s.io', 'volumeattributesclasses');
  await pvcWhen(admin, namespace, waitsForModify, `current class ${gold}`, modifiedTo(gold), 90_000);
  const granted = logs.findIndex((l) => message(l) === MODIFY_ON);
  assert.ok(granted >= 0, 'no "permission granted" line');
  assert.match(logs[granted]!, /^I.* permission="volumeattributesclasses\.storage\.k8s\.io list,watch"$/);
  assert.ok(logs.findIndex((l) => message(l) === 'Starting external resizer for modify volume') > granted, 'modify started before the grant was said');

  // Nothing repeated in between: the server refused again and again, the log said it once.
  assert.ok((await refusals(resizer)) >= 4);
  assert.deepEqual(
    logs.filter((l) => /Missing RBAC permission|forbidden|List\/watch failed/i.test(l)),
    [warning],
  );
});

test('with --feature-gates=VolumeAttributesClass=false the rule is not needed: nothing is said, resizes go on', async (t) => {
  const identity = await identityWithRunnerRole(admin, {
    namespace,
    resizerKubeconfigPath: cluster.resizerKubeconfigPath,
    rules: runnerRules().filter((r) => !isVacRule(r)),
    after: (fn) => t.after(fn),
  });
  await identity.untilAllowed('list', 'storage.k8s.io', 'volumeattributesclasses', false);
  const grows = await claim(t);
  const resizer = await startResizer({
    kubeconfig: identity.kubeconfigPath,
    csiAddress: driver.address,
    args: ['--feature-gates=VolumeAttributesClass=false'],
  });
  t.after(() => resizer.stop());

  await requestPvcSize(admin, namespace, grows, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await pvcWhen(admin, namespace, grows, 'resized to 2Gi', (pvc) => pvc.status?.capacity?.['storage'] === '2Gi');
  await eventually('the startup RBAC check', () => resizer.logs.some((l) => message(l) === 'RBAC permissions checked' && / missing=0$/.test(l)));
  assert.deepEqual(
    resizer.logs.filter((l) => /Missing RBAC|permission granted|forbidden|List\/watch failed/i.test(l)),
    [],
  );
});
