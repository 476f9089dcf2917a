// The real command on the real cluster, with the manifest's identity only (the resizer
// kubeconfig's user is bound by deploy/kubernetes/rbac.yaml and nothing else): a resize finishes,
// a refused one is recorded as infeasible and recovers, and /metrics shows it all — the CSI
// operation histogram, the work queue, client-go's REST client metrics, and our resize-state gauges.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type * as k8s from '@kubernetes/client-node';
import { freePort } from '../cluster/cluster.js';
import { csiTestClient } from '../cluster/csi-proto.js';
import { createNamespace, createStorageClass, provisionVolume, quantityBytes, requestPvcSize } from '../cluster/fixtures.js';
import { adminClients, useCluster } from '../cluster/test-cluster.js';
import { CliProcess } from './cli-harness.js';
import { eventually } from '../support/eventually.js';

const until = <T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000) => eventually(what, fn, timeoutMs, 200);

/** name{labels} → value, for the lines of one metric family. */
function samples(text: string, metric: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(\S+?)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m && m[1] === metric) out.set(m[2] ?? '', Number(m[3]));
  }
  return out;
}

test('metrics after real resizes: operations, work queue and resize-state gauges', { timeout: 300_000 }, async (t) => {
  const cluster = await useCluster();
  const admin = adminClients(cluster);
  const driver = cluster.driverName;
  const namespace = await createNamespace(admin);
  const sc = await createStorageClass(admin, { provisioner: driver, allowVolumeExpansion: true });
  const provision = () =>
    provisionVolume(admin, cluster.csiAddress, {
      namespace,
      size: '1Gi',
      storageClassName: sc.metadata!.name!,
      driverName: driver,
      csiProtoPath: cluster.csiProtoPath,
    });
  const [grows, refused] = await Promise.all([provision(), provision()]);
  // The driver's volume behind "refused" is grown out of band to 3Gi: asking for 2Gi is then a
  // shrink for the driver, which answers InvalidArgument (infeasible).
  const csi = csiTestClient(cluster.csiProtoPath, cluster.csiAddress);
  try {
    await csi.call('Controller', 'ControllerExpandVolume', {
      volume_id: refused.volumeId,
      capacity_range: { required_bytes: quantityBytes('3Gi').toString() },
    });
  } finally {
    csi.close();
  }

  const port = await freePort();
  const resizer = new CliProcess([
    `--kubeconfig=${cluster.resizerKubeconfigPath}`,
    `--csi-address=${cluster.csiAddress}`,
    `--http-endpoint=127.0.0.1:${port}`,
    '--v=2',
    '--retry-interval-start=200ms',
    '--retry-interval-max=2s',
  ]);
  t.after(() => resizer.destroy());
  await resizer.waitForLog(/"Starting external resizer"/, 90_000);
  const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();

  const pvcOf = (p: typeof grows) => admin.core.readNamespacedPersistentVolumeClaim({ namespace, name: p.pvc.metadata!.name! });
  await requestPvcSize(admin, namespace, grows.pvc.metadata!.name!, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await requestPvcSize(admin, namespace, refused.pvc.metadata!.name!, '2Gi', { retryUntilAdmittedMs: 10_000 });

  const grown = await until('the PVC to reach 2Gi', async () => {
    const pvc = await pvcOf(grows);
    return pvc.status?.capacity?.['storage'] === '2Gi' ? pvc : undefined;
  });
  assert.equal(grown.status?.allocatedResourceStatuses?.['storage'], undefined);
  await until('the refused PVC to be infeasible', async () => {
    const pvc: k8s.V1PersistentVolumeClaim = await pvcOf(refused);
    return pvc.status?.allocatedResourceStatuses?.['storage'] === 'ControllerResizeInfeasible' ? pvc : undefined;
  });

  const text = await scrape();
  const ops = samples(text, 'csi_sidecar_operations_seconds_count');
  const expand = (code: string) => ops.get(`{driver_name="${driver}",method_name="/csi.v1.Controller/ControllerExpandVolume",grpc_status_code="${code}"}`) ?? 0;
  assert.ok(expand('OK') >= 1, `ControllerExpandVolume OK recorded:\n${[...ops.keys()].join('\n')}`);
  assert.ok(expand('InvalidArgument') >= 1, 'the refusal is recorded with its code');
  assert.ok((ops.get(`{driver_name="${driver}",method_name="/csi.v1.Controller/ControllerGetCapabilities",grpc_status_code="OK"}`) ?? 0) >= 1);
  assert.ok((samples(text, 'workqueue_adds_total').get(`{name="${driver}-pvc"}`) ?? 0) >= 2);
  assert.ok(samples(text, 'workqueue_depth').has(`{name="${driver}-pvc"}`));
  assert.match(text, /^process_start_time_seconds \d/m);

  // The REST client: the status patches on the wire by code, verb and the server's host:port.
  const server = (JSON.parse(readFileSync(cluster.resizerKubeconfigPath, 'utf8')) as { clusters: Array<{ cluster: { server: string } }> }).clusters[0]!.cluster
    .server;
  const host = server.replace(/^https?:\/\//, '').replace(/\/.*$/, '');
  const apiRequests = samples(text, 'rest_client_requests_total');
  assert.ok((apiRequests.get(`{code="200",method="PATCH",host="${host}"}`) ?? 0) >= 2, `status patches recorded:\n${[...apiRequests.keys()].join('\n')}`);
  assert.ok((samples(text, 'rest_client_request_duration_seconds_count').get(`{verb="PATCH",host="${host}"}`) ?? 0) >= 2);
  assert.ok((samples(text, 'rest_client_rate_limiter_duration_seconds_count').get(`{verb="GET",host="${host}"}`) ?? 0) >= 1);
  assert.ok((samples(text, 'rest_client_transport_create_calls_total').get('{result="uncacheable"}') ?? 0) >= 1);

  const states = samples(text, 'csi_resizer_pvcs');
  assert.deepEqual([...states.keys()].sort(), [
    '{state="backoff"}',
    '{state="in_progress"}',
    '{state="infeasible"}',
    '{state="node_pending"}',
    '{state="waiting"}',
  ]);
  assert.ok((states.get('{state="infeasible"}') ?? 0) >= 1);
  assert.ok((samples(text, 'csi_resizer_oldest_unfinished_resize_seconds').get('') ?? 0) > 0);
  assert.doesNotMatch(text, new RegExp(refused.pvc.metadata!.name!), 'no PVC name in any label');

  // Recovery: a size above what the driver holds is feasible again.
  await requestPvcSize(admin, namespace, refused.pvc.metadata!.name!, '4Gi');
  const recovered = await until('the refused PVC to recover at 4Gi', async () => {
    const pvc = await pvcOf(refused);
    return pvc.status?.capacity?.['storage'] === '4Gi' ? pvc : undefined;
  });
  assert.equal(recovered.status?.allocatedResourceStatuses?.['storage'], undefined);
  const after = samples(await scrape(), 'csi_resizer_pvcs');
  assert.ok((after.get('{state="infeasible"}') ?? 0) < (states.get('{state="infeasible"}') ?? 0));
});
