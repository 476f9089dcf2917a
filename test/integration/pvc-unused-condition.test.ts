// The PVC condition `Unused` (Kubernetes 1.36+, PersistentVolumeClaimUnusedSinceTime, beta and on in
// 1.37): kube-controller-manager's PVC protection controller writes it with a full status update.
// Our status patches (strategic merge diffs of a draft, src/kube/api/patch.ts) must leave it as KCM
// wrote it, against the real API server: through a resize that fails (ControllerResizeError
// written) and, lowered, finishes (the error removed), a modify, and a resize right after KCM
// flipped the condition.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig } from '../cluster/kube.js';
import { requestPvcSize } from '../cluster/fixtures.js';
import { faultScenario, GiB } from '../support/fault-scenario.js';
import { eventually } from '../support/eventually.js';
import { ContentType } from '../../src/kube/api/content-type.js';
import { KubeHttp } from '../../src/kube/wire/http.js';
import { loadKubeConfig } from '../../src/kube/wire/kubeconfig.js';
import type { Pvc, PvcCondition } from '../../src/model/objects.js';
import { conditionOf, createVac, deleteVac, modifiedTo, setClass } from './modify-fixtures.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);
// Plain JSON both ways (the generated client turns times into Dates and back): the condition as KCM sends it.
const raw = new KubeHttp({ kubeConfig: await loadKubeConfig({ kubeconfigPath: cluster.adminKubeconfigPath }), qps: 50, burst: 100 });

function claimNow(namespace: string, name: string): Promise<Pvc> {
  return raw.request<Pvc>({ method: 'GET', path: `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${name}` }, AbortSignal.timeout(10_000));
}

/** Polls the claim (plain JSON) until `ok`. */
function claimWhen(namespace: string, name: string, what: string, ok: (pvc: Pvc) => boolean): Promise<Pvc> {
  return eventually(what, async () => {
    const pvc = await claimNow(namespace, name);
    return ok(pvc) ? pvc : undefined;
  });
}

/** What pvc_protection_controller's setUnusedCondition does: the claim with its conditions set, back through UpdateStatus. */
async function updateStatusAsKcm(namespace: string, name: string, conditions: (conditions: PvcCondition[]) => PvcCondition[]): Promise<void> {
  const path = `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${name}`;
  const claim = await claimNow(namespace, name);
  const body = { ...claim, status: { ...claim.status, conditions: conditions(claim.status?.conditions ?? []) } };
  await raw.request({ method: 'PUT', path: `${path}/status`, body, contentType: ContentType.Json }, AbortSignal.timeout(10_000));
}

/** RFC 3339 to the second, as metav1.Time marshals. */
const secondsNow = () => new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');

test('the Unused condition kube-controller-manager writes survives a failed and a recovered resize and a modify, unchanged', async (t) => {
  t.after(() => raw.close());
  // Above 5Gi the driver fails (a final error): the failed resize stays failed until the request is lowered.
  const s = await faultScenario(t, cluster, admin, {
    namespacePrefix: 'rz-unused',
    driver: { expandLimit: { bytes: 5n * GiB, code: GrpcStatus.INTERNAL, details: 'backend said no' } },
  });
  const unused: PvcCondition = {
    type: 'Unused',
    status: 'True',
    // Go marshals the zero metav1.Time KCM leaves there as null.
    lastProbeTime: null,
    lastTransitionTime: secondsNow(),
    reason: 'NoPodsUsingPVC',
    message: 'No pods are currently referencing this PVC',
  };
  await updateStatusAsKcm(s.namespace, s.pvcName, (existing) => [...existing, unused]);
  const asWritten = conditionOf(await claimNow(s.namespace, s.pvcName), 'Unused');
  assert.deepEqual(asWritten, unused, 'the API server keeps the condition as KCM writes it');

  // A resize that fails: ControllerResizeError goes in beside Unused; lowered, it finishes and the error goes.
  await requestPvcSize(admin, s.namespace, s.pvcName, '10Gi', { retryUntilAdmittedMs: 10_000 });
  const failed = await claimWhen(s.namespace, s.pvcName, 'ControllerResizeError', (p) => conditionOf(p, 'ControllerResizeError')?.status === 'True');
  assert.deepEqual(conditionOf(failed, 'Unused'), unused, 'Unused beside ControllerResizeError');
  await requestPvcSize(admin, s.namespace, s.pvcName, '2Gi');
  const grown = await claimWhen(
    s.namespace,
    s.pvcName,
    'capacity 2Gi with no resize condition',
    (p) => p.status?.capacity?.['storage'] === '2Gi' && !(p.status?.conditions ?? []).some((c) => c.type !== 'Unused'),
  );
  assert.deepEqual(grown.status?.conditions, [unused], 'only Unused is left, as KCM wrote it');

  // A modify: ModifyingVolume comes and goes beside it.
  const vac = await createVac(admin, s.driver.name, { iops: '3000' });
  t.after(() => deleteVac(admin, vac));
  await setClass(admin, s.namespace, s.pvcName, vac);
  const modified = await claimWhen(s.namespace, s.pvcName, `current class ${vac}`, modifiedTo(vac));
  assert.equal(s.driver.callsOf('ControllerModifyVolume').length, 1);
  assert.deepEqual(modified.status?.conditions, [unused], 'Unused unchanged after the modify');

  // KCM flips it (a pod starts using the claim) just before the next resize: our writes keep the new one.
  const flipped: PvcCondition = {
    ...unused,
    status: 'False',
    reason: 'PodUsingPVC',
    message: 'A pod is currently referencing this PVC',
    lastTransitionTime: secondsNow(),
  };
  await updateStatusAsKcm(s.namespace, s.pvcName, (existing) => existing.map((c) => (c.type === 'Unused' ? flipped : c)));
  // At once: the resizer's cache may still hold the claim from before the flip.
  await requestPvcSize(admin, s.namespace, s.pvcName, '3Gi');
  const final = await claimWhen(s.namespace, s.pvcName, 'capacity 3Gi', (p) => p.status?.capacity?.['storage'] === '3Gi');
  assert.deepEqual(final.status?.conditions, [flipped], 'the flipped condition, not the one the resizer saw first');
});
