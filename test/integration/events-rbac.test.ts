// A resizer deployed without the events rule of deploy/kubernetes/rbac.yaml, against the real API
// server: every event write is refused, the log says so once (not once per event, as upstream's
// recorder does), resizes go on, and once the rule is granted it says so and events are written
// again without a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig } from '../cluster/kube.js';
import { createNamespace, createStorageClass, deletePvc, provisionVolume, requestPvcSize, uniqueName } from '../cluster/fixtures.js';
import { startMockDriver } from '../cluster/mock-driver.js';
import { identityWithRunnerRole, runnerRules } from '../cluster/rbac.js';
import { startResizer, eventually } from '../support/in-process-resizer.js';
import { pvcWhen } from './modify-fixtures.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);
const driver = await startMockDriver({ name: `${uniqueName('evrbac')}.mock.csi.k8s.io` });
process.once('beforeExit', () => void driver.stop());
const namespace = await createNamespace(admin, 'rz-events-rbac');
const storageClassName = uniqueName('rz-sc');
await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: driver.name });

const isEventsRule = (r: { apiGroups?: string[]; resources?: string[] }) => (r.apiGroups ?? ['']).includes('') && (r.resources ?? []).includes('events');
const EVENTS_OFF = 'Missing RBAC permission: no events are recorded until it is granted (resizes and modifications are not affected)';
const EVENTS_ON = 'RBAC permission granted, events recorded again';
/** The line's message, without klog's header. */
const message = (line: string) => /\] "((?:[^"\\]|\\.)*)"/.exec(line)?.[1] ?? '';

async function grownClaim(t: { after(fn: () => unknown): void }): Promise<string> {
  const v = await provisionVolume(admin, driver.address, { namespace, size: '1Gi', storageClassName, driverName: driver.name });
  const name = v.pvc.metadata!.name!;
  t.after(() => deletePvc(admin, namespace, name));
  await requestPvcSize(admin, namespace, name, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await pvcWhen(admin, namespace, name, 'resized to 2Gi', (pvc) => pvc.status?.capacity?.['storage'] === '2Gi');
  return name;
}

async function eventsOf(claim: string): Promise<string[]> {
  const list = await admin.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${claim}` });
  return list.items.map((e) => e.reason ?? '');
}

test('without the events rule: one warning for every refused event, resizes go on, events are written again once it is granted', async (t) => {
  const withoutEvents = runnerRules().filter((r) => !isEventsRule(r));
  assert.equal(withoutEvents.length, runnerRules().length - 1, 'rbac.yaml has one events rule');
  const identity = await identityWithRunnerRole(admin, {
    namespace,
    resizerKubeconfigPath: cluster.resizerKubeconfigPath,
    rules: withoutEvents,
    after: (fn) => t.after(fn),
  });
  await identity.untilAllowed('create', '', 'events', false);

  const resizer = await startResizer({ kubeconfig: identity.kubeconfigPath, csiAddress: driver.address });
  t.after(() => resizer.stop());
  const { logs } = resizer;

  // Three resizes: six events (Resizing, VolumeResizeSuccessful), every one refused.
  const refused = [await grownClaim(t), await grownClaim(t), await grownClaim(t)];
  await eventually('the startup RBAC check', () => logs.some((l) => message(l) === 'RBAC permissions checked'));
  const warning = await eventually('the warning', () => logs.find((l) => message(l) === EVENTS_OFF));
  assert.match(warning, /^W/);
  assert.match(warning, / permission="events create(,patch)?"/);
  for (const claim of refused) assert.deepEqual(await eventsOf(claim), [], `events of ${claim} were written without the rule`);

  // The operator adds the rule: the next event is written, and the grant is said once.
  await identity.setRules(runnerRules());
  await identity.untilAllowed('create', '', 'events');
  const accepted = await grownClaim(t);
  await eventually('the events of the claim grown after the grant', async () => (await eventsOf(accepted)).includes('VolumeResizeSuccessful'));
  await eventually('the grant', () => logs.some((l) => message(l) === EVENTS_ON));

  // Nothing repeated: the server refused six writes, the log said it once.
  assert.deepEqual(
    logs.filter((l) => /Missing RBAC permission|forbidden|Failed to write event/i.test(l)),
    [warning],
  );
  assert.equal(logs.filter((l) => message(l) === EVENTS_ON).length, 1);
});
