import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeApiServer } from '../../../test/fakes/fake-apiserver.js';
import { HttpKubeClient } from './http-client.js';
import { isConflict, isNotFound, KubeApiError } from '../api/errors.js';
import { loadKubeConfig } from './kubeconfig.js';
import { PatchType } from '../api/patch.js';

const PVCS = 'v1/persistentvolumeclaims';

async function setup(t: { after: (fn: () => unknown) => void }) {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  const client = new HttpKubeClient({ kubeConfig: server.kubeConfig('tok-1'), qps: 0, burst: 1, requestTimeoutMs: 500 });
  t.after(() => client.close());
  return { server, client };
}

test('patchPvcStatus: strategic merge on /status with the RV precondition; stale RV → 409 KubeApiError', async (t) => {
  const { server, client } = await setup(t);
  const stored = server.put(PVCS, { kind: 'PersistentVolumeClaim', metadata: { name: 'a', namespace: 'ns' }, status: { phase: 'Bound' } });
  const signal = AbortSignal.timeout(2000);
  const out = await client.patchPvcStatus(
    'ns',
    'a',
    { status: { capacity: { storage: '2Gi' } } },
    { resourceVersion: stored.metadata.resourceVersion },
    signal,
  );
  assert.equal((out['status'] as any).capacity.storage, '2Gi');
  const req = server.requests.at(-1)!;
  assert.equal(req.path, '/api/v1/namespaces/ns/persistentvolumeclaims/a/status');
  assert.equal(req.contentType, 'application/strategic-merge-patch+json');
  assert.equal((req.body as any).metadata.resourceVersion, stored.metadata.resourceVersion);
  assert.equal(req.authorization, 'Bearer tok-1');

  const err = await client.patchPvcStatus('ns', 'a', { status: {} }, { resourceVersion: stored.metadata.resourceVersion }, signal).catch((e) => e);
  assert.ok(err instanceof KubeApiError);
  assert.equal(err.status, 409);
  assert.equal(err.reason, 'Conflict');
  assert.ok(isConflict(err));

  await client.patchPv('pv-x', { spec: {} }, { type: PatchType.Merge }, signal).catch((e) => {
    assert.ok(isNotFound(e));
  });
  assert.equal(server.requests.at(-1)!.contentType, 'application/merge-patch+json');
});

test('errors map status and reason; 422/403 helpers', async (t) => {
  const { server, client } = await setup(t);
  server.failNext({ status: 403, reason: 'Forbidden' });
  const e = await client.getSecret('ns', 's', AbortSignal.timeout(1000)).catch((x) => x);
  assert.ok(e instanceof KubeApiError && e.status === 403 && e.reason === 'Forbidden');
  const missing = await client.getVolumeAttributesClass('gold', AbortSignal.timeout(1000)).catch((x) => x);
  assert.ok(isNotFound(missing));
});

test('hasResource uses discovery; an unserved group/version is false', async (t) => {
  const { server, client } = await setup(t);
  server.discovery.set('storage.k8s.io/v1', [
    { name: 'volumeattributesclasses', kind: 'VolumeAttributesClass' },
    { name: 'storageclasses', kind: 'StorageClass' },
  ]);
  const s = AbortSignal.timeout(1000);
  assert.equal(await client.hasResource('storage.k8s.io/v1', 'VolumeAttributesClass', s), true);
  assert.equal(await client.hasResource('storage.k8s.io/v1', 'Nope', s), false);
  assert.equal(await client.hasResource('storage.k8s.io/v1beta1', 'VolumeAttributesClass', s), false);
});

test('getNode, getStorageClass and listStorageClasses read cluster-scoped objects by their paths; endpoint names the server', async (t) => {
  const { server, client } = await setup(t);
  server.put('v1/nodes', { kind: 'Node', metadata: { name: 'node-1', labels: { zone: 'a' } } });
  server.put('storage.k8s.io/v1/storageclasses', { kind: 'StorageClass', metadata: { name: 'fast' }, provisioner: 'p' } as never);
  const s = AbortSignal.timeout(2000);
  assert.deepEqual((await client.getNode('node-1', s)).metadata?.labels, { zone: 'a' });
  assert.equal(server.requests.at(-1)!.path, '/api/v1/nodes/node-1');
  assert.equal((await client.getStorageClass('fast', s))['provisioner'], 'p');
  assert.equal(server.requests.at(-1)!.path, '/apis/storage.k8s.io/v1/storageclasses/fast');
  assert.deepEqual(
    (await client.listStorageClasses(s)).map((sc) => sc.metadata?.name),
    ['fast'],
  );
  assert.ok(isNotFound(await client.getStorageClass('slow', s).catch((e: unknown) => e)));
  assert.equal(client.endpoint.server, new URL(server.url).origin);
  assert.equal(client.endpoint.proxy, undefined);
});

test('per-request timeout and caller abort end the call', async (t) => {
  const { server, client } = await setup(t);
  server.listDelayMs = 2000;
  await assert.rejects(
    client.listWatcher({ group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true }).list({}, new AbortController().signal),
    /timed out/,
  );
  const ctl = new AbortController();
  const p = client.listWatcher({ group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true }).list({}, ctl.signal);
  ctl.abort(new Error('shutdown'));
  await assert.rejects(p, /shutdown/);
});

/** One turn of the event loop: an HTTP client may return a connection that finished an answer to its pool only after it. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('keep-alive: requests one after another reuse one connection', async (t) => {
  const { server, client } = await setup(t);
  for (let i = 0; i < 5; i++) {
    await client.getLease('ns', 'x', AbortSignal.timeout(1000)).catch(() => {});
    await turn();
  }
  assert.equal(server.connectionsAccepted, 1);
});

test('keep-alive: requests issued back to back (no turn between) share at most two connections', async (t) => {
  const { server, client } = await setup(t);
  for (let i = 0; i < 10; i++) await client.getLease('ns', 'x', AbortSignal.timeout(1000)).catch(() => {});
  assert.ok(server.connectionsAccepted <= 2, `${server.connectionsAccepted} connections for 10 requests`);
});

test('watches have connections of their own: a request after a watch opened reuses the idle request connection', async (t) => {
  const { server, client } = await setup(t);
  const pods = client.listWatcher({ group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true });
  await client.getLease('ns', 'x', AbortSignal.timeout(1000)).catch(() => {});
  await turn();
  assert.equal(server.connectionsAccepted, 1);
  const watching = new AbortController();
  t.after(() => watching.abort());
  await pods.watch({ resourceVersion: '0' }, watching.signal);
  // The watch opened its own connection instead of taking the idle one the request left...
  assert.equal(server.connectionsAccepted, 2);
  for (let i = 0; i < 3; i++) {
    await client.getLease('ns', 'x', AbortSignal.timeout(1000)).catch(() => {});
    await turn();
  }
  // ...so the requests after it (the first resize's patches) need no new handshake.
  assert.equal(server.connectionsAccepted, 2);
});

test('the rate limiter spaces requests', async (t) => {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  const client = new HttpKubeClient({ kubeConfig: server.kubeConfig(), qps: 20, burst: 2 });
  t.after(() => client.close());
  const start = performance.now();
  for (let i = 0; i < 6; i++) await client.getLease('ns', 'x', AbortSignal.timeout(2000)).catch(() => {});
  assert.ok(performance.now() - start >= 180, 'four requests beyond the burst at 20 qps');
});

test('loadKubeConfig: --master replaces the server; a relative tokenFile is read again, so a rotated token is used', async (t) => {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kc-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'token'), 'first\n');
  fs.writeFileSync(
    path.join(dir, 'config'),
    [
      'apiVersion: v1',
      'kind: Config',
      'current-context: c',
      'clusters: [{name: k, cluster: {server: "http://127.0.0.1:1", insecure-skip-tls-verify: true}}]',
      'users: [{name: u, user: {tokenFile: token}}]',
      'contexts: [{name: c, context: {cluster: k, user: u}}]',
    ].join('\n'),
  );
  const kc = await loadKubeConfig({ kubeconfigPath: path.join(dir, 'config'), masterUrl: server.url });
  assert.equal(kc.server, server.url);
  assert.deepEqual(kc.auth, { kind: 'tokenFile', path: path.join(dir, 'token') });
  const client = new HttpKubeClient({ kubeConfig: kc, qps: 0, burst: 1, authRefreshMs: 0 });
  t.after(() => client.close());
  await client.getLease('ns', 'x', AbortSignal.timeout(1000)).catch(() => {});
  assert.equal(server.requests.at(-1)?.authorization, 'Bearer first');
  fs.writeFileSync(path.join(dir, 'token'), 'second\n');
  await client.getLease('ns', 'x', AbortSignal.timeout(1000)).catch(() => {});
  assert.equal(server.requests.at(-1)?.authorization, 'Bearer second');
});
