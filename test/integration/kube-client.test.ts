// The Kubernetes access layer against the real kube-apiserver: our informer follows PVCs created,
// changed and deleted through the admin client; RV-checked status patches conflict when stale and
// work as the resizer's RBAC identity; Events are written; two Lease electors agree on one leader
// and hand over on release.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createNamespace, uniqueName } from '../cluster/fixtures.js';
import { patchAs } from '../cluster/kube.js';
import { adminClients, useCluster, type ClusterHandle, type KubeClients } from '../cluster/test-cluster.js';
import { HttpKubeClient } from '../../src/kube/wire/http-client.js';
import { KubeApiError, isConflict } from '../../src/kube/api/errors.js';
import { ApiEventRecorder, EventType } from '../../src/kube/api/events.js';
import { Informer } from '../../src/kube/cache/informer.js';
import { objectKey } from '../../src/kube/cache/keys.js';
import { loadKubeConfig, type ClientConfig } from '../../src/kube/wire/kubeconfig.js';
import { LeaderElector } from '../../src/kube/api/leader-election.js';
import { Resources } from '../../src/kube/api/resources.js';
import { createLogger, silentLogger } from '../../src/observability/log/logger.js';
import { eventually } from '../support/eventually.js';
import { asApiBody, pvc } from '../support/builders.js';

let cluster: ClusterHandle;
let resizerConfig: ClientConfig;
let admin: KubeClients;
let namespace: string;
const clients: HttpKubeClient[] = [];

function resizerClient(): HttpKubeClient {
  const c = new HttpKubeClient({ kubeConfig: resizerConfig, qps: 50, burst: 100 });
  clients.push(c);
  return c;
}

before(async () => {
  cluster = await useCluster();
  resizerConfig = await loadKubeConfig({ kubeconfigPath: cluster.resizerKubeconfigPath });
  admin = adminClients(cluster);
  namespace = await createNamespace(admin, 'rz-kube');
});

after(async () => {
  for (const c of clients) c.close();
  await admin?.core.deleteNamespace({ name: namespace }).catch(() => {});
});

async function createPvc(name: string) {
  return admin.core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: asApiBody(pvc({ name, namespace, volumeName: null, phase: null, accessModes: ['ReadWriteOnce'], request: '1Gi', storageClassName: 'none' })),
  });
}

test('informer (as the resizer) syncs PVCs and sees adds, updates and deletes', async (t) => {
  await createPvc('before-sync');
  const informer = new Informer({ listWatcher: resizerClient().listWatcher(Resources.persistentVolumeClaims), namespace, log: silentLogger });
  const log: string[] = [];
  informer.addEventHandler({
    add: (o) => log.push(`add ${objectKey(o)}`),
    update: (_a, b) => log.push(`update ${objectKey(b)}`),
    delete: (o) => log.push(`delete ${objectKey(o)}`),
  });
  const ctl = new AbortController();
  const running = informer.run(ctl.signal);
  t.after(async () => {
    ctl.abort();
    await running;
  });
  await informer.waitForSync(AbortSignal.timeout(15_000));
  assert.ok(informer.store.get(`${namespace}/before-sync`));
  assert.equal(informer.store.get(`${namespace}/before-sync`)?.kind, 'PersistentVolumeClaim');

  await createPvc('after-sync');
  await eventually('add', () => log.includes(`add ${namespace}/after-sync`));
  await admin.core.patchNamespacedPersistentVolumeClaim({ namespace, name: 'after-sync', body: { metadata: { labels: { touched: 'yes' } } } }, patchAs());
  await eventually('update', () => informer.store.get(`${namespace}/after-sync`)?.metadata?.labels?.['touched'] === 'yes');
  assert.ok(log.includes(`update ${namespace}/after-sync`));
  // Admission adds the pvc-protection finalizer and no controller-manager removes it: do it here.
  await admin.core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'after-sync' });
  await admin.core.patchNamespacedPersistentVolumeClaim({ namespace, name: 'after-sync', body: { metadata: { finalizers: null } } }, patchAs());
  await eventually('delete', () => log.includes(`delete ${namespace}/after-sync`));
  assert.equal(informer.store.get(`${namespace}/after-sync`), undefined);
});

test('patchPvcStatus as the resizer works with a fresh resourceVersion and conflicts (409) with a stale one', async () => {
  const name = uniqueName('rz-pvc');
  const created = await createPvc(name);
  const rv = created.metadata!.resourceVersion!;
  const client = resizerClient();
  const signal = AbortSignal.timeout(10_000);
  const condition = { type: 'Resizing', status: 'True', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
  const patched = await client.patchPvcStatus(namespace, name, { status: { conditions: [condition] } }, { resourceVersion: rv }, signal);
  assert.equal((patched['status'] as any).conditions[0].type, 'Resizing');
  assert.notEqual(patched.metadata?.resourceVersion, rv);

  const err = await client.patchPvcStatus(namespace, name, { status: { conditions: [] } }, { resourceVersion: rv }, signal).catch((e) => e);
  assert.ok(err instanceof KubeApiError, String(err));
  assert.equal(err.status, 409);
  assert.ok(isConflict(err));
});

test('events are created in the object namespace and aggregated', async (t) => {
  const name = uniqueName('rz-pvc');
  const created = await createPvc(name);
  const recorder = new ApiEventRecorder({ client: resizerClient(), component: `external-resizer ${cluster.driverName}`, log: silentLogger });
  t.after(() => recorder.close());
  const involved = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', metadata: created.metadata as any };
  recorder.event(involved, EventType.Normal, 'Resizing', `External resizer is resizing volume pv-${name}`);
  recorder.event(involved, EventType.Normal, 'Resizing', `External resizer is resizing volume pv-${name}`);
  await recorder.flush();
  const list = await admin.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` });
  assert.equal(list.items.length, 1);
  const ev = list.items[0]!;
  assert.equal(ev.reason, 'Resizing');
  assert.equal(ev.count, 2, 'neither event was dropped');
  assert.equal(ev.source?.component, `external-resizer ${cluster.driverName}`);
  assert.equal(ev.involvedObject.uid, created.metadata!.uid);
});

test('two electors on the real API server: exactly one leads; release hands over', async (t) => {
  const lease = uniqueName('external-resizer-test');
  const leading: string[] = [];
  const bLines: string[] = [];
  const make = (identity: string, log = silentLogger) =>
    new LeaderElector({
      client: resizerClient(),
      namespace: 'default',
      name: lease,
      identity,
      leaseDurationMs: 8000,
      renewDeadlineMs: 6000,
      retryPeriodMs: 500,
      releaseOnCancel: true,
      callbacks: {
        onStartedLeading: () => {
          leading.push(identity);
        },
        onStoppedLeading: () => {},
      },
      log,
    });
  const a = make('replica-a');
  const b = make('replica-b', createLogger({ verbosity: 4, format: 'text', write: (l) => bLines.push(l) }));
  const ctlA = new AbortController();
  const ctlB = new AbortController();
  const runA = a.run(ctlA.signal);
  await eventually('a leads', () => a.isLeader());
  const runB = b.run(ctlB.signal);
  t.after(async () => {
    ctlA.abort();
    ctlB.abort();
    await Promise.all([runA, runB]);
  });
  // b has tried twice and found the lease held: it had its chances to take over and did not.
  await eventually('b refused twice', () => bLines.filter((l) => l.includes('"Failed to acquire lease"')).length >= 2);
  assert.deepEqual(leading, ['replica-a']);
  assert.equal(b.isLeader(), false);
  const held = await admin.coordination.readNamespacedLease({ namespace: 'default', name: lease });
  assert.equal(held.spec?.holderIdentity, 'replica-a');

  ctlA.abort();
  await runA;
  const released = Date.now();
  await eventually('b leads', () => b.isLeader(), 10_000);
  assert.ok(Date.now() - released < 8000, 'took over before the 8 s lease would have expired');
  assert.deepEqual(leading, ['replica-a', 'replica-b']);
  await admin.coordination.deleteNamespacedLease({ namespace: 'default', name: lease }).catch(() => {});
});
