// The modify controller against the real API server and a scripted CSI driver
// (test/fakes/fault-driver.ts) for what the real mock driver never answers: InvalidArgument
// (Infeasible and the slow set), final and non-final errors, a call cut short by a restart; and
// for what it doesn't show: the request's parameters and secrets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig } from '../cluster/kube.js';
import { createNamespace } from '../cluster/fixtures.js';
import { eventually } from '../support/in-process-resizer.js';
import { faultScenario, type FaultScenario, type FaultScenarioOptions } from '../support/fault-scenario.js';
import { eventsFor, readPv, readPvc, reasons } from '../support/api-reads.js';
import { conditionOf, createVac, deleteVac, modifiedTo, pvcWhen, setClass } from './modify-fixtures.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);
type T = { after(fn: () => unknown): void };

interface Scenario extends FaultScenario {
  /** mutable_parameters of every ControllerModifyVolume so far, in order. */
  modifyCalls(): Record<string, string>[];
  vac(parameters: Record<string, string>): Promise<string>;
}

async function scenario(t: T, opts: FaultScenarioOptions = {}): Promise<Scenario> {
  const base = await faultScenario(t, cluster, admin, { namespacePrefix: 'rz-modify-fault', ...opts });
  return Object.assign(base, {
    modifyCalls: () => base.driver.callsOf('ControllerModifyVolume').map((c) => c.request['mutable_parameters'] as Record<string, string>),
    async vac(parameters: Record<string, string>) {
      const name = await createVac(admin, base.driver.name, parameters);
      t.after(() => deleteVac(admin, name));
      return name;
    },
  });
}

const pvcOf = (s: Scenario) => readPvc(admin, s.namespace, s.pvcName);
const callsReach = (s: Scenario, n: number, timeoutMs?: number) =>
  eventually(`${n} ControllerModifyVolume calls`, async () => (s.modifyCalls().length >= n ? s.modifyCalls() : undefined), timeoutMs);
const modifyEvents = async (s: Scenario) => (await eventsFor(admin, s.namespace, s.pvcName)).filter((e) => e.reason.startsWith('VolumeModify'));

test('request: the class parameters plus --extra-modify-metadata keys, secrets from the modify-secret annotations, never logged; modify-only driver', async (t) => {
  const namespace = await createNamespace(admin, 'rz-modify-secret');
  await admin.core.createNamespacedSecret({ namespace, body: { metadata: { name: 'modify-creds' }, stringData: { token: 'modify-very-secret' } } });
  await admin.core.createNamespacedSecret({ namespace, body: { metadata: { name: 'expand-creds' }, stringData: { password: 'expand-very-secret' } } });
  const s = await scenario(t, {
    namespace,
    driver: { capabilities: { controllerExpand: false, nodeExpand: false } },
    resizerArgs: ['--extra-modify-metadata'],
    volume: {
      pvAnnotations: {
        'volume.kubernetes.io/controller-modify-secret-name': 'modify-creds',
        'volume.kubernetes.io/controller-modify-secret-namespace': namespace,
      },
      controllerExpandSecretRef: { name: 'expand-creds', namespace },
    },
  });
  const gold = await s.vac({ iops: '3000' });
  await setClass(admin, s.namespace, s.pvcName, gold);
  await pvcWhen(admin, s.namespace, s.pvcName, `current class ${gold}`, modifiedTo(gold));

  const [call] = s.driver.callsOf('ControllerModifyVolume');
  assert.ok(call);
  assert.equal(call.request['volume_id'], s.volumeId);
  assert.deepEqual(call.request['mutable_parameters'], {
    iops: '3000',
    'csi.storage.k8s.io/pvc/name': s.pvcName,
    'csi.storage.k8s.io/pvc/namespace': s.namespace,
    'csi.storage.k8s.io/pv/name': s.pvName,
  });
  assert.deepEqual(call.request['secrets'], { token: 'modify-very-secret' });
  assert.deepEqual(s.driver.volumeParameters(s.volumeId)?.['iops'], '3000');
  assert.ok(!s.resizer.logs.some((l) => l.includes('very-secret')), 'a secret reached the logs');
});

test('secrets fall back to controllerExpandSecretRef; without --extra-modify-metadata only the class parameters are sent', async (t) => {
  const namespace = await createNamespace(admin, 'rz-modify-secret');
  await admin.core.createNamespacedSecret({ namespace, body: { metadata: { name: 'expand-creds' }, stringData: { password: 'expand-very-secret' } } });
  const s = await scenario(t, { namespace, volume: { controllerExpandSecretRef: { name: 'expand-creds', namespace } } });
  const gold = await s.vac({ iops: '3000' });
  await setClass(admin, s.namespace, s.pvcName, gold);
  await pvcWhen(admin, s.namespace, s.pvcName, `current class ${gold}`, modifiedTo(gold));
  const [call] = s.driver.callsOf('ControllerModifyVolume');
  assert.deepEqual(call?.request['mutable_parameters'], { iops: '3000' });
  assert.deepEqual(call?.request['secrets'], { password: 'expand-very-secret' });
});

test('InvalidArgument: Infeasible, conditions and a Warning; retried once per slow-set period; choosing a valid class recovers at once', async (t) => {
  const s = await scenario(t, { resizerArgs: ['--retry-interval-max=4s'] });
  const bad = await s.vac({ iops: '999999' });
  const good = await s.vac({ iops: '3000' });
  s.driver.script(
    'ControllerModifyVolume',
    { code: GrpcStatus.INVALID_ARGUMENT, details: 'iops 999999 is above the maximum of 16000' },
    { code: GrpcStatus.INVALID_ARGUMENT, details: 'iops 999999 is above the maximum of 16000' },
  );
  await setClass(admin, s.namespace, s.pvcName, bad);

  const infeasible = await pvcWhen(admin, s.namespace, s.pvcName, 'Infeasible', (p) => p.status?.modifyVolumeStatus?.status === 'Infeasible');
  assert.deepEqual(infeasible.status?.modifyVolumeStatus, { targetVolumeAttributesClassName: bad, status: 'Infeasible' });
  assert.equal(infeasible.status?.currentVolumeAttributesClassName, undefined);
  const modifying = conditionOf(infeasible, 'ModifyingVolume');
  assert.equal(modifying?.status, 'True');
  assert.equal(modifying?.message, `Modifying volume to "${bad}" failed. Waiting for retry.`);
  const error = conditionOf(infeasible, 'ModifyVolumeError');
  assert.equal(error?.status, 'True');
  assert.equal(error?.reason, 'InvalidArgument');
  assert.equal(error?.message, 'iops 999999 is above the maximum of 16000');
  const events = await eventually('Warning', async () => {
    const e = await modifyEvents(s);
    return e.some((x) => x.reason === 'VolumeModifyFailed') ? e : undefined;
  });
  assert.deepEqual(reasons(events), ['VolumeModify', 'VolumeModifyFailed']);
  assert.equal(events[1]?.type, 'Warning');
  assert.equal(events[1]?.message, 'rpc error: code = InvalidArgument desc = iops 999999 is above the maximum of 16000');

  // The slow set: no second call before the 4 s retention is over, then one.
  const [first] = s.driver.callsOf('ControllerModifyVolume');
  await callsReach(s, 2, 10_000);
  const second = s.driver.callsOf('ControllerModifyVolume')[1]!;
  assert.ok(second.at - first!.at >= 3_500, `second attempt after ${second.at - first!.at} ms`);
  assert.equal(s.modifyCalls().length, 2);

  // A different class leaves the slow set and is applied right away.
  const changedAt = Date.now();
  await setClass(admin, s.namespace, s.pvcName, good);
  await pvcWhen(admin, s.namespace, s.pvcName, `current class ${good}`, modifiedTo(good));
  const third = s.driver.callsOf('ControllerModifyVolume')[2]!;
  assert.ok(third.at - changedAt < 3_000, `the new class was tried ${third.at - changedAt} ms after the change`);
  assert.deepEqual(s.modifyCalls(), [{ iops: '999999' }, { iops: '999999' }, { iops: '3000' }]);
  assert.equal((await readPv(admin, s.pvName)).spec.volumeAttributesClassName, good);
});

test('rollback: after an Infeasible class, pointing back at the current class re-applies it', async (t) => {
  const s = await scenario(t);
  const gold = await s.vac({ iops: '3000' });
  const bad = await s.vac({ iops: '999999' });
  await setClass(admin, s.namespace, s.pvcName, gold);
  await pvcWhen(admin, s.namespace, s.pvcName, `current class ${gold}`, modifiedTo(gold));
  s.driver.script('ControllerModifyVolume', { code: GrpcStatus.INVALID_ARGUMENT, details: 'no' });
  await setClass(admin, s.namespace, s.pvcName, bad);
  await pvcWhen(admin, s.namespace, s.pvcName, 'Infeasible', (p) => p.status?.modifyVolumeStatus?.status === 'Infeasible');
  await setClass(admin, s.namespace, s.pvcName, gold);
  const pvc = await pvcWhen(admin, s.namespace, s.pvcName, `back to ${gold}`, modifiedTo(gold));
  assert.equal(pvc.spec.volumeAttributesClassName, gold);
  assert.deepEqual(s.modifyCalls(), [{ iops: '3000' }, { iops: '999999' }, { iops: '3000' }]);
  assert.equal((await readPv(admin, s.pvName)).spec.volumeAttributesClassName, gold);
});

test('cancel: clearing the class of an Infeasible first modify drops ModifyingVolume with a VolumeModifyCanceled event', async (t) => {
  const s = await scenario(t, { resizerArgs: ['--retry-interval-max=1m'] });
  const bad = await s.vac({ iops: '999999' });
  s.driver.script('ControllerModifyVolume', { code: GrpcStatus.INVALID_ARGUMENT, details: 'no' });
  await setClass(admin, s.namespace, s.pvcName, bad);
  await pvcWhen(admin, s.namespace, s.pvcName, 'Infeasible', (p) => p.status?.modifyVolumeStatus?.status === 'Infeasible');
  await setClass(admin, s.namespace, s.pvcName, null);

  const canceled = await pvcWhen(admin, s.namespace, s.pvcName, 'ModifyingVolume gone', (p) => !conditionOf(p, 'ModifyingVolume'));
  // The status stays as it was (upstream leaves it; the API server keeps it).
  assert.deepEqual(canceled.status?.modifyVolumeStatus, { targetVolumeAttributesClassName: bad, status: 'Infeasible' });
  assert.equal(conditionOf(canceled, 'ModifyVolumeError')?.reason, 'InvalidArgument');
  const events = await eventually('VolumeModifyCanceled', async () => {
    const e = await modifyEvents(s);
    return e.some((x) => x.reason === 'VolumeModifyCanceled') ? e : undefined;
  });
  const cancel = events.find((e) => e.reason === 'VolumeModifyCanceled');
  assert.equal(cancel?.type, 'Normal');
  assert.equal(cancel?.message, 'Cancelled modify.');
  assert.equal(s.modifyCalls().length, 1);
});

test('final non-infeasible error: InProgress with the error conditions; a new class chosen meanwhile replaces the target', async (t) => {
  // A long first backoff, so the user's change comes before the retry of the old target.
  const s = await scenario(t, { resizerArgs: ['--retry-interval-start=5s'] });
  const gold = await s.vac({ iops: '3000' });
  const silver = await s.vac({ iops: '1000' });
  s.driver.script('ControllerModifyVolume', { code: GrpcStatus.INTERNAL, details: 'backend exploded' });
  await setClass(admin, s.namespace, s.pvcName, gold);

  const failed = await pvcWhen(admin, s.namespace, s.pvcName, 'ModifyVolumeError', (p) => !!conditionOf(p, 'ModifyVolumeError'));
  assert.deepEqual(failed.status?.modifyVolumeStatus, { targetVolumeAttributesClassName: gold, status: 'InProgress' });
  assert.equal(conditionOf(failed, 'ModifyingVolume')?.message, `Modifying volume to "${gold}" failed. Waiting for retry.`);
  assert.equal(conditionOf(failed, 'ModifyVolumeError')?.reason, 'Internal');
  assert.equal(conditionOf(failed, 'ModifyVolumeError')?.message, 'backend exploded');
  const warning = await eventually('Warning', async () => (await modifyEvents(s)).find((e) => e.reason === 'VolumeModifyFailed'));
  assert.equal(warning.message, 'rpc error: code = Internal desc = backend exploded');

  // The failure was definitive, so the user's new choice replaces the old target.
  await setClass(admin, s.namespace, s.pvcName, silver);
  await pvcWhen(admin, s.namespace, s.pvcName, `current class ${silver}`, modifiedTo(silver));
  assert.deepEqual(s.modifyCalls(), [{ iops: '3000' }, { iops: '1000' }]);
  assert.equal((await readPv(admin, s.pvName)).spec.volumeAttributesClassName, silver);
});

test('non-final error: the target is kept (a class change waits) until it resolves, then the new class is applied', async (t) => {
  const s = await scenario(t, { resizerArgs: ['--retry-interval-start=500ms'] });
  const gold = await s.vac({ iops: '3000' });
  const silver = await s.vac({ iops: '1000' });
  s.driver.script(
    'ControllerModifyVolume',
    { code: GrpcStatus.UNAVAILABLE, details: 'backend busy' },
    { code: GrpcStatus.UNAVAILABLE, details: 'backend busy' },
    { code: GrpcStatus.UNAVAILABLE, details: 'backend busy' },
  );
  await setClass(admin, s.namespace, s.pvcName, gold);

  const uncertain = await pvcWhen(admin, s.namespace, s.pvcName, 'ModifyVolumeError', (p) => !!conditionOf(p, 'ModifyVolumeError'));
  assert.deepEqual(uncertain.status?.modifyVolumeStatus, { targetVolumeAttributesClassName: gold, status: 'InProgress' });
  assert.equal(conditionOf(uncertain, 'ModifyingVolume')?.message, `Modifying volume to "${gold}" is still in progress.`);
  assert.equal(conditionOf(uncertain, 'ModifyVolumeError')?.reason, 'Unavailable');
  const warning = await eventually('Warning', async () => (await modifyEvents(s)).find((e) => e.reason === 'VolumeModifyFailed'));
  assert.equal(warning.message, `rpc error: code = Unavailable desc = backend busy. Still modifying to VAC ${gold}`);

  await setClass(admin, s.namespace, s.pvcName, silver);
  await pvcWhen(admin, s.namespace, s.pvcName, `current class ${silver}`, modifiedTo(silver), 30_000);
  // Three failures and the success all carried gold's parameters; silver came after.
  assert.deepEqual(s.modifyCalls(), [{ iops: '3000' }, { iops: '3000' }, { iops: '3000' }, { iops: '3000' }, { iops: '1000' }]);
  const successes = (await modifyEvents(s)).filter((e) => e.reason === 'VolumeModifySuccessful').map((e) => e.message);
  assert.deepEqual(successes, [
    `external resizer modified volume ${s.pvcName} with vac ${gold} successfully`,
    `external resizer modified volume ${s.pvcName} with vac ${silver} successfully`,
  ]);
});

test('restart with a modify in progress: the InProgress target is retried first (seeded as uncertain), then the new class', async (t) => {
  const s = await scenario(t, { resizerArgs: ['--timeout=60s'] });
  const gold = await s.vac({ iops: '3000' });
  const silver = await s.vac({ iops: '1000' });
  // The driver never answers the first call: the resizer goes away with the operation in flight.
  s.driver.script('ControllerModifyVolume', { hang: true });
  await setClass(admin, s.namespace, s.pvcName, gold);
  await callsReach(s, 1);
  const inProgress = await pvcOf(s);
  assert.deepEqual(inProgress.status?.modifyVolumeStatus, { targetVolumeAttributesClassName: gold, status: 'InProgress' });
  await s.resizer.stop();

  // Meanwhile the user changes their mind; a fresh process must not trust that gold never happened.
  await setClass(admin, s.namespace, s.pvcName, silver);
  await s.restartResizer();
  await pvcWhen(admin, s.namespace, s.pvcName, `current class ${silver}`, modifiedTo(silver));
  // The second gold call is the uncertain PVC being finished before the new class is applied.
  assert.deepEqual(s.modifyCalls(), [{ iops: '3000' }, { iops: '3000' }, { iops: '1000' }]);
  assert.match(s.resizer.logs.join('\n'), /"Starting external resizer for modify volume" controller="/);
});
