// A user's edit that lands between auto-grow's read of a claim and its write, against the real API
// server. The race is made certain by holding back the claim watch of the auto-grow wiring
// (app/build/auto-grow.ts, built as the app builds it, on real informers and a real client): the
// controller decides on the old version, its patch carries that resourceVersion, the API server
// answers 409, and nothing of the user's edit is lost. Once the watch delivers the edit, the claim
// is decided again from it: the user's new increase is the one applied.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useCluster, adminClients } from '../cluster/test-cluster.js';
import { createNamespace, uniqueName } from '../cluster/fixtures.js';
import { patchAs } from '../cluster/kube.js';
import { FakeKubelet } from '../fakes/fake-kubelet.js';
import { eventsFor, readPvc } from '../support/api-reads.js';
import { eventually } from '../support/eventually.js';
import { admissionReady, deleteNode, GiB, mountingPod, nodeAt, optedInClaim, optedInClass, resizerIdentity } from '../support/auto-grow-fixtures.js';
import { FaultDriver } from '../fakes/fault-driver.js';
import { buildAutoGrow } from '../../src/app/build/auto-grow.js';
import { ControllerKit } from '../../src/app/build/controller-kit.js';
import { InformerSet } from '../../src/app/build/informers.js';
import { PermissionNotices } from '../../src/app/permission-notices.js';
import { realClock } from '../../src/base/clock.js';
import { parseConfig } from '../../src/flags/config.js';
import { type ListWatcher } from '../../src/kube/api/client.js';
import { HttpKubeClient } from '../../src/kube/wire/http-client.js';
import { loadKubeConfig } from '../../src/kube/wire/kubeconfig.js';
import { Resources, type ResourceRef } from '../../src/kube/api/resources.js';
import { everyVolume } from '../../src/model/volume-scope.js';
import { createLogger } from '../../src/observability/log/logger.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { toPodClaimUsage, type PodClaimUsage } from '../../src/resize/in-use.js';
import type { Resizer } from '../../src/resize/resizer.js';

const cluster = await useCluster();
const admin = adminClients(cluster);
const work = mkdtempSync(join(tmpdir(), 'rz-auto-grow-conflict-'));
process.once('exit', () => rmSync(work, { recursive: true, force: true }));

/** Holds back a watch's events while paused (the informer sees nothing new), then lets them through in order. */
class WatchGate {
  private paused = false;
  private waiters: (() => void)[] = [];

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    for (const wake of this.waiters.splice(0)) wake();
  }

  wrap(inner: ListWatcher): ListWatcher {
    return {
      resource: inner.resource,
      list: (options, signal) => inner.list(options, signal),
      watch: async (options, signal) => {
        const events = await inner.watch(options, signal);
        const open = async () => {
          while (this.paused) await new Promise<void>((resolve) => this.waiters.push(resolve));
        };
        return {
          async *[Symbol.asyncIterator]() {
            for await (const event of events) {
              await open();
              yield event;
            }
          },
        };
      },
    };
  }
}

test("a user's edit between the read and the write wins; the claim is decided again from it", async (t) => {
  const namespace = await createNamespace(admin, 'rz-autogrow-race');
  const identity = await resizerIdentity(admin, cluster, { namespace, dir: work });
  const driverName = uniqueName('race.csi');
  const driver = await FaultDriver.start({ name: driverName });
  t.after(() => driver.stop());
  const storageClassName = await optedInClass(admin, driverName);
  const nodeName = uniqueName('ag-node');
  const kubelet = await FakeKubelet.start({ nodeName, reviewerKubeconfigPath: cluster.adminKubeconfigPath });
  t.after(() => kubelet.close());
  await nodeAt(admin, nodeName, kubelet.port);
  t.after(() => deleteNode(admin, nodeName));
  const c = await optedInClaim(admin, driver, { namespace, storageClassName, driverName, annotations: { 'resize.topolvm.io/storage_limit': '20Gi' } });
  await mountingPod(admin, namespace, c.pvc, nodeName);
  await admissionReady(admin, namespace, c.pvc);
  const usage = (availableBytes: bigint) => [{ namespace, claim: c.pvc, capacityBytes: 10n * GiB, availableBytes }];
  kubelet.setVolumes(usage(8n * GiB));

  const kubeConfig = await loadKubeConfig({ kubeconfigPath: identity.kubeconfig });
  const kube = new HttpKubeClient({ kubeConfig, qps: 100, burst: 100 });
  t.after(() => kube.close());
  const lines: string[] = [];
  const log = createLogger({ verbosity: 4, format: 'text', write: (l) => lines.push(l) });
  const gate = new WatchGate();
  const caFile = join(work, 'kubelet-ca.crt');
  writeFileSync(caFile, kubelet.cert);
  const config = parseConfig([
    '--auto-grow',
    '--auto-grow-interval=500ms',
    `--kubelet-certificate-authority=${caFile}`,
    '--kubelet-preferred-address-types=InternalIP',
  ]);
  const resizer: Resizer = {
    name: driverName,
    supportsControlPlaneExpansion: true,
    expansionMode: 'online',
    canSupport: (pv) => pv.spec.csi?.driver === driverName,
    resize: () => Promise.reject(new Error('no resize controller in this test')),
  };
  const metrics = createMetrics();
  // The claim watch goes through the gate; every other cache is the app's.
  const gatedKube = {
    listWatcher: (resource: ResourceRef) =>
      resource === Resources.persistentVolumeClaims ? gate.wrap(kube.listWatcher(resource)) : kube.listWatcher(resource),
  };
  const permissions = { rules: [], notices: new PermissionNotices(log) };
  const informers = new InformerSet({ kube: gatedKube, resyncPeriodMs: config.resyncPeriodMs, metrics, log, scope: everyVolume, driverName, permissions });
  const kit = new ControllerKit({ config, clock: realClock, log, metrics, kube, driverName, gates: config.gates, scope: everyVolume, informers });
  const pods = informers.add<PodClaimUsage>('pod-informer', Resources.pods, { transform: (o, k) => toPodClaimUsage(o, k, undefined, (n) => n) });
  const wiring = buildAutoGrow(kit, { resizer, pods, queue: { numRequeues: () => 0 } }, kubeConfig);
  const stop = new AbortController();
  const running = Promise.all([informers.run(stop.signal), wiring.controller.run(stop.signal)]);
  t.after(async () => {
    stop.abort();
    await running;
    wiring.close();
    kit.close();
  });

  await eventually('a first poll', () => kubelet.requests.length > 0);
  gate.pause();
  // The user's edit: a bigger increase. The controller's cache keeps the version before it.
  await admin.core.patchNamespacedPersistentVolumeClaim(
    { namespace, name: c.pvc, body: { metadata: { annotations: { 'resize.topolvm.io/increase': '5Gi' } } } },
    patchAs(),
  );
  kubelet.setVolumes(usage(GiB / 2n));
  await eventually('the write refused for the conflict', () => lines.some((l) => l.includes('the claim changed since it was read')));
  const meanwhile = await readPvc(admin, namespace, c.pvc);
  assert.equal(meanwhile.spec.resources?.requests?.['storage'], '10Gi', 'nothing was written over the edit');
  assert.equal(meanwhile.metadata.annotations?.['resize.topolvm.io/increase'], '5Gi');
  assert.equal(meanwhile.metadata.annotations?.['auto-grow.csi-resizer.io/last-grow'], undefined);

  gate.resume();
  await eventually("grown by the user's increase", async () => (await readPvc(admin, namespace, c.pvc)).spec.resources?.requests?.['storage'] === '15Gi');
  await eventually(
    'one AutoGrowRequested event',
    async () => (await eventsFor(admin, namespace, c.pvc)).filter((e) => e.reason === 'AutoGrowRequested').length === 1,
  );
  assert.equal(JSON.parse((await readPvc(admin, namespace, c.pvc)).metadata.annotations!['auto-grow.csi-resizer.io/last-grow']!).to, '15Gi');
});
