// The per-call deadlines of upstream v2.3.0 (§2.1), from the command line to the driver: the
// in-process resizer against the real API server and the scripted CSI driver, which records the
// deadline (grpc-timeout) each call arrives with and can hang until the client gives up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig } from '../cluster/kube.js';
import { requestPvcSize } from '../cluster/fixtures.js';
import type { FaultMethod } from '../fakes/fault-driver.js';
import { eventually } from '../support/in-process-resizer.js';
import { faultScenario, type FaultScenario } from '../support/fault-scenario.js';
import { eventsFor } from '../support/api-reads.js';
import { createVac, deleteVac, setClass } from './modify-fixtures.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);

// The client sets the deadline just before it sends; the driver reads it a moment later.
const SLACK_MS = 500;

/** The deadline the first call of `method` arrived with. */
function firstDeadlineMs(s: FaultScenario, method: FaultMethod): number {
  const call = s.driver.callsOf(method)[0];
  assert.ok(call, `the driver received no ${method}`);
  return call.deadlineMs;
}

function assertDeadline(s: FaultScenario, method: FaultMethod, expectedMs: number): void {
  const ms = firstDeadlineMs(s, method);
  assert.ok(ms > expectedMs - SLACK_MS && ms <= expectedMs, `${method} arrived with a deadline ${ms} ms away, expected ${expectedMs} ms`);
}

/** The csi_sidecar_operations_seconds sample of the calls of `method` that ended with `code`: how many, and how long in all. */
async function operations(s: FaultScenario, method: string, code: string): Promise<{ count: number; seconds: number }> {
  const { values } = await s.resizer.metrics.csiOperations.get();
  const pick = (suffix: string) =>
    values.find(
      (v) =>
        v.metricName === `csi_sidecar_operations_seconds_${suffix}` &&
        v.labels['method_name'] === `/csi.v1.Controller/${method}` &&
        v.labels['grpc_status_code'] === code,
    )?.value ?? 0;
  return { count: pick('count'), seconds: pick('sum') };
}

async function classFor(t: { after(fn: () => unknown): void }, s: FaultScenario): Promise<string> {
  const name = await createVac(admin, s.driver.name, { iops: '3000' });
  t.after(() => deleteVac(admin, name));
  return name;
}

test('--resize-timeout and --modify-timeout reach the driver: a hanging expand ends DeadlineExceeded after the resize timeout, a hanging modify after the modify timeout', async (t) => {
  const s = await faultScenario(t, cluster, admin, { namespacePrefix: 'rz-timeouts', resizerArgs: ['--resize-timeout=1500ms', '--modify-timeout=4s'] });
  // Waiting for the driver keeps --timeout (10s); the capability queries have the resize timeout.
  assertDeadline(s, 'Probe', 10_000);
  assertDeadline(s, 'GetPluginInfo', 10_000);
  assertDeadline(s, 'ControllerGetCapabilities', 1_500);

  s.driver.script('ControllerExpandVolume', { hang: true });
  await requestPvcSize(admin, s.namespace, s.pvcName, '2Gi', { retryUntilAdmittedMs: 10_000 });
  const failed = await eventually('a VolumeResizeFailed event', async () =>
    (await eventsFor(admin, s.namespace, s.pvcName)).find((e) => e.reason === 'VolumeResizeFailed'),
  );
  assert.match(failed.message, /rpc error: code = DeadlineExceeded/);
  assertDeadline(s, 'ControllerExpandVolume', 1_500);
  const expand = await operations(s, 'ControllerExpandVolume', 'DeadlineExceeded');
  assert.equal(expand.count, 1);
  assert.ok(expand.seconds >= 1.5 - 0.05 && expand.seconds < 1.5 + 1, `the hanging expand took ${expand.seconds} s`);

  s.driver.script('ControllerModifyVolume', { hang: true });
  await setClass(admin, s.namespace, s.pvcName, await classFor(t, s));
  const modify = await eventually('a ControllerModifyVolume ended DeadlineExceeded', async () => {
    const seen = await operations(s, 'ControllerModifyVolume', 'DeadlineExceeded');
    return seen.count > 0 ? seen : undefined;
  });
  assertDeadline(s, 'ControllerModifyVolume', 4_000);
  assert.equal(modify.count, 1);
  assert.ok(modify.seconds >= 4 - 0.05 && modify.seconds < 4 + 1, `the hanging modify took ${modify.seconds} s`);
});

test('an explicit --timeout is the deadline of every call, --resize-timeout and --modify-timeout notwithstanding', async (t) => {
  const s = await faultScenario(t, cluster, admin, {
    namespacePrefix: 'rz-timeouts',
    resizerArgs: ['--resize-timeout=1500ms', '--modify-timeout=4s', '--timeout=3s'],
  });
  await requestPvcSize(admin, s.namespace, s.pvcName, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await eventually('a ControllerExpandVolume', () => s.driver.callsOf('ControllerExpandVolume').length > 0);
  await setClass(admin, s.namespace, s.pvcName, await classFor(t, s));
  await eventually('a ControllerModifyVolume', () => s.driver.callsOf('ControllerModifyVolume').length > 0);
  for (const method of ['Probe', 'ControllerGetCapabilities', 'ControllerExpandVolume', 'ControllerModifyVolume'] as const) assertDeadline(s, method, 3_000);
});
