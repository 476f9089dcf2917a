// A node replica's PV and claim caches against an in-memory API server: what they keep at start-up,
// and every order in which a claim and its volume can arrive, leave and come back afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeApiWithClient, type FakeApiServer } from '../../test/fakes/fake-apiserver.js';
import { pv, pvc } from '../../test/support/builders.js';
import { eventually } from '../../test/support/eventually.js';
import { Informer } from '../kube/cache/informer.js';
import { objectKey } from '../kube/cache/keys.js';
import { Resources } from '../kube/api/resources.js';
import type { NodeSelectorTerm } from '../model/node-affinity.js';
import type { KubeObject, Pv, Pvc } from '../model/objects.js';
import { NodeVolumeScope } from './node-volume-scope.js';
import { createLogger } from '../observability/log/logger.js';
import { NodeLocalCaches } from './node-local-caches.js';

const PVS = 'v1/persistentvolumes';
const PVCS = 'v1/persistentvolumeclaims';
const DRIVER = 'lvm.csi.example.com';
const NODE = 'node-a';
const NO_AFFINITY_LINE = 'PV has no node affinity; node-local resizers leave it alone';

const on = (node: string): NodeSelectorTerm[] => [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }];

/** A PV of the driver on `node` (no node affinity when undefined), bound to `claim` in ns when given. */
function volume(name: string, node: string | undefined, claim?: string, driver = DRIVER): Pv {
  return pv({
    name,
    driver,
    nodeAffinity: node === undefined ? undefined : on(node),
    claim: claim === undefined ? undefined : { namespace: 'ns', name: claim },
  });
}

/** A claim in ns bound to `volumeName` (unbound when null). */
const claim = (name: string, volumeName: string | null): Pvc => pvc({ name, volumeName, phase: volumeName === null ? 'Pending' : 'Bound' });

async function setup(t: { after: (fn: () => unknown) => void }, before?: (s: FakeApiServer) => void) {
  const { server, client } = await fakeApiWithClient(t, before);
  const lines: string[] = [];
  const log = createLogger({ verbosity: 2, format: 'text', write: (l) => lines.push(l) });
  const caches = new NodeLocalCaches({ scope: new NodeVolumeScope({ name: NODE, labels: { 'kubernetes.io/hostname': NODE } }, log), driverName: DRIVER });
  const options = { log, watchList: false, backoff: { initialMs: 10, maxMs: 50 } };
  const pvs = new Informer<Pv>({ ...options, listWatcher: client.listWatcher(Resources.persistentVolumes), transform: caches.pvTransform((o) => o as Pv) });
  const pvcs = new Informer<Pvc>({
    ...options,
    listWatcher: client.listWatcher(Resources.persistentVolumeClaims),
    transform: caches.pvcTransform((o) => o as Pvc, pvs.store),
  });
  caches.connect(pvs, pvcs);
  const claimEvents: string[] = [];
  pvcs.addEventHandler({
    add: (o) => claimEvents.push(`add ${objectKey(o)}`),
    delete: (o) => claimEvents.push(`delete ${objectKey(o)}`),
  });
  const ctl = new AbortController();
  const running = Promise.all([pvs.run(ctl.signal), NodeLocalCaches.claimsAfterVolumes(pvs, pvcs)(ctl.signal)]);
  t.after(async () => {
    ctl.abort();
    await running;
  });
  await Promise.all([pvs.waitForSync(AbortSignal.timeout(5000)), pvcs.waitForSync(AbortSignal.timeout(5000))]);
  /** Lists of one claim's name: the reads of claims whose PV arrived after them. */
  const claimReads = () =>
    server.listRequests().filter((r) => r.path.includes('persistentvolumeclaims') && r.query.get('fieldSelector')?.startsWith('metadata.name='));
  return { server, pvs, pvcs, lines, claimEvents, claimReads };
}

const keys = (informer: Informer<KubeObject>) => informer.store.keys().sort();

test("at start-up only this node's PVs and the claims bound to them are cached, with no read per claim", async (t) => {
  const { server, pvs, pvcs, claimReads } = await setup(t, (s) => {
    for (const [name, node] of [
      ['pv-a1', NODE],
      ['pv-a2', NODE],
      ['pv-b1', 'node-b'],
      ['pv-b2', 'node-b'],
      ['pv-none', undefined],
    ] as const) {
      s.put(PVS, volume(name, node, `c-${name}`));
      s.put(PVCS, claim(`c-${name}`, name));
    }
    s.put(PVS, volume('pv-other-driver', undefined, undefined, 'other.csi.example.com'));
    s.put(PVCS, claim('unbound', null));
    s.put(PVCS, claim('bound-to-a-missing-pv', 'pv-missing'));
  });
  assert.deepEqual(keys(pvs), ['pv-a1', 'pv-a2']);
  assert.deepEqual(keys(pvcs), ['ns/c-pv-a1', 'ns/c-pv-a2']);
  assert.equal(claimReads().length, 0);
  // The claim informer's first request came after the PV informer's list was answered.
  const paths = server.requests.map((r) => r.path);
  assert.ok(paths.findIndex((p) => p.includes('persistentvolumeclaims')) > paths.findIndex((p) => p.endsWith('/persistentvolumes')));
});

test("a PV of the driver without node affinity is reported once; another driver's is not reported", async (t) => {
  const { server, lines } = await setup(t, (s) => {
    s.put(PVS, volume('pv-none', undefined));
    s.put(PVS, volume('pv-other-driver', undefined, undefined, 'other.csi.example.com'));
  });
  server.put(PVS, { ...volume('pv-none', undefined), metadata: { name: 'pv-none', labels: { changed: 'yes' } } });
  server.put(PVS, volume('pv-none-later', undefined));
  await eventually('the later PV reported', () => lines.some((l) => l.includes(NO_AFFINITY_LINE) && l.includes('pv-none-later')));
  const reported = lines.filter((l) => l.includes(NO_AFFINITY_LINE));
  assert.equal(reported.filter((l) => l.includes('pv="pv-none"')).length, 1);
  assert.equal(reported.length, 2);
  assert.ok(!reported.some((l) => l.includes('pv-other-driver')));
});

test('claim first, then its PV: the claim is read again and cached when the PV arrives', async (t) => {
  const { server, pvcs, claimEvents, claimReads } = await setup(t);
  // Bound already, so nothing about the claim changes once its PV exists.
  server.put(PVCS, claim('early', 'pv-late'));
  server.put(PVS, volume('pv-other', 'node-b', 'other'));
  server.put(PVS, volume('pv-late', NODE, 'early'));
  await eventually('the claim cached', () => pvcs.store.get('ns/early'));
  assert.deepEqual(claimEvents, ['add ns/early']);
  assert.deepEqual(
    claimReads().map((r) => [r.path, r.query.get('fieldSelector')]),
    [['/api/v1/namespaces/ns/persistentvolumeclaims', 'metadata.name=early']],
  );
});

test('PV first, then its claim: the claim is cached from the watch', async (t) => {
  const { server, pvs, pvcs, claimEvents } = await setup(t);
  server.put(PVS, volume('pv-first', NODE, 'later'));
  await eventually('the PV cached', () => pvs.store.get('pv-first'));
  server.put(PVCS, claim('later', 'pv-first'));
  server.put(PVCS, claim('elsewhere', 'pv-elsewhere'));
  await eventually('the claim cached', () => pvcs.store.get('ns/later'));
  assert.deepEqual(keys(pvcs), ['ns/later']);
  assert.deepEqual(claimEvents, ['add ns/later']);
});

test('a PV bound again to another claim: the new claim is cached, the deleted one is gone', async (t) => {
  const { server, pvcs, claimEvents } = await setup(t, (s) => {
    s.put(PVS, volume('pv-r', NODE, 'first'));
    s.put(PVCS, claim('first', 'pv-r'));
  });
  assert.deepEqual(keys(pvcs), ['ns/first']);
  server.remove(PVCS, 'ns', 'first');
  server.put(PVS, { ...volume('pv-r', NODE), status: { phase: 'Released' } });
  server.put(PVCS, claim('second', 'pv-r'));
  server.put(PVS, volume('pv-r', NODE, 'second'));
  await eventually('the second claim cached', () => pvcs.store.get('ns/second'));
  assert.deepEqual(keys(pvcs), ['ns/second']);
  assert.deepEqual(claimEvents, ['add ns/first', 'delete ns/first', 'add ns/second']);
});

test('a claim deleted and made again under its name, bound to a new PV of the node, is cached as the new one', async (t) => {
  const { server, pvcs, claimEvents } = await setup(t, (s) => {
    s.put(PVS, volume('pv-old', NODE, 'data'));
    s.put(PVCS, claim('data', 'pv-old'));
  });
  const oldUid = pvcs.store.get('ns/data')?.metadata.uid;
  server.remove(PVCS, 'ns', 'data');
  server.remove(PVS, undefined, 'pv-old');
  await eventually('the old claim gone', () => pvcs.store.get('ns/data') === undefined);
  server.put(PVCS, claim('data', null));
  // As a provisioner binds: the claim names its new PV before the PV exists.
  server.put(PVCS, claim('data', 'pv-new'));
  server.put(PVS, volume('pv-new', NODE, 'data'));
  await eventually('the new claim cached', () => pvcs.store.get('ns/data')?.spec.volumeName === 'pv-new');
  assert.notEqual(pvcs.store.get('ns/data')?.metadata.uid, oldUid);
  assert.deepEqual(claimEvents, ['add ns/data', 'delete ns/data', 'add ns/data']);
});

test('a PV that leaves (deleted, or its affinity now selects another node) takes its claim; one that comes back brings it', async (t) => {
  const { server, pvs, pvcs, claimEvents } = await setup(t, (s) => {
    for (const name of ['pv-1', 'pv-2', 'pv-3']) {
      s.put(PVS, volume(name, NODE, `c-${name}`));
      s.put(PVCS, claim(`c-${name}`, name));
    }
  });
  server.remove(PVS, undefined, 'pv-1');
  server.put(PVS, volume('pv-2', 'node-b', 'c-pv-2'));
  await eventually('both claims gone', () => pvcs.store.size === 1);
  assert.deepEqual(keys(pvs), ['pv-3']);
  assert.deepEqual(keys(pvcs), ['ns/c-pv-3']);

  // Back on this node: the claim did not change, so only a read brings it back.
  server.put(PVS, volume('pv-2', NODE, 'c-pv-2'));
  await eventually('the claim back', () => pvcs.store.get('ns/c-pv-2'));
  assert.deepEqual(claimEvents.slice(3), ['delete ns/c-pv-1', 'delete ns/c-pv-2', 'add ns/c-pv-2']);
});

test('a PV that gains node affinity for this node is cached, with its claim', async (t) => {
  const { server, pvs, pvcs } = await setup(t, (s) => {
    s.put(PVS, volume('pv-x', undefined, 'cx'));
    s.put(PVCS, claim('cx', 'pv-x'));
  });
  assert.equal(pvs.store.size, 0);
  server.put(PVS, volume('pv-x', NODE, 'cx'));
  await eventually('the claim cached', () => pvcs.store.get('ns/cx'));
  assert.deepEqual(keys(pvs), ['pv-x']);
});

test("a cached claim bound again to another node's PV leaves the cache", async (t) => {
  const { server, pvcs, claimEvents } = await setup(t, (s) => {
    s.put(PVS, volume('pv-a', NODE, 'moving'));
    s.put(PVS, volume('pv-b', 'node-b'));
    s.put(PVCS, claim('moving', 'pv-a'));
  });
  server.put(PVCS, claim('moving', 'pv-b'));
  await eventually('the claim gone', () => pvcs.store.size === 0);
  assert.deepEqual(claimEvents, ['add ns/moving', 'delete ns/moving']);
});
