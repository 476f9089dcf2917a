// The faults of the chaos suite, each injected faultAtMs into a burst:
//   apiserver-kill    kube-apiserver SIGKILLed, down apiserverDownMs, restarted with the same flags and port
//   etcd-restart      etcd SIGKILLed, down etcdDownMs, restarted on its data
//   etcd-compaction   etcd compacted past every watcher's resourceVersion and the watches cut: each
//                     re-watch gets 410 Gone (the API server runs with --watch-cache=false for this
//                     run, so watches are served by etcd, where compaction bites; with the watch
//                     cache on, a re-watch within its window would be served from memory)
//   proxy-blackhole   every connection between the resizer and the API server reset, then nothing
//                     delivered for blackholeMs (new connections accepted but held)
//   driver-kill       the CSI driver SIGKILLed with calls in flight, restarted after driverDownMs
//                     with its volumes intact
//   leader-kill       two replicas with leader election; the leader SIGKILLed; the standby finishes
//   recreate          every other claim deleted and created again under the same name, bound to a
//                     new volume and asking for 3Gi, while the 2Gi resizes of the old ones run
import type { Impl } from '../../bench/lib/resizer.js';
import { pool, sleep, type Api } from '../../bench/lib/api.js';
import { GI } from '../../bench/lib/workload.js';
import { DRIVER_NAME, LEASE_NAMESPACE, STORAGE_CLASS, replacementHandle, type Fault, type FaultContext } from './harness.js';

const BOTH: readonly Impl[] = ['ours', 'upstream'];
const LABEL = 'csi-resizer-bench';
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export const apiserverKill: Fault = {
  id: 'apiserver-kill',
  title: 'kube-apiserver SIGKILLed and restarted',
  impls: BOTH,
  replicas: 1,
  async inject(ctx) {
    const t = await ctx.env.cluster.restart('apiserver', { signal: 'SIGKILL', downMs: ctx.env.settings.apiserverDownMs });
    ctx.facts.push(`apiserver unavailable ${secs(t.readyAt - t.killedAt)} (killed to ready)`);
  },
};

export const etcdRestart: Fault = {
  id: 'etcd-restart',
  title: 'etcd SIGKILLed and restarted',
  impls: BOTH,
  replicas: 1,
  async inject(ctx) {
    const t = await ctx.env.cluster.restart('etcd', { signal: 'SIGKILL', downMs: ctx.env.settings.etcdDownMs });
    ctx.facts.push(`etcd unavailable ${secs(t.readyAt - t.killedAt)} (killed to healthy)`);
  },
};

export const etcdCompaction: Fault = {
  id: 'etcd-compaction',
  title: 'etcd compacted, watches cut (410 Gone)',
  impls: BOTH,
  replicas: 1,
  async prepare(ctx) {
    await ctx.env.cluster.restart('apiserver', { signal: 'SIGTERM', extraArgs: ['--watch-cache=false'] });
  },
  async inject(ctx) {
    const { env } = ctx;
    const pvcs = `/api/v1/namespaces/${ctx.ns}/persistentvolumeclaims`;
    // Newer than anything the resizer can have seen of its claims.
    const rvAtFault = (await env.api.callRetry<{ metadata: { resourceVersion: string } }>('GET', `${pvcs}?limit=1`)).metadata.resourceVersion;
    // Hold the resizer off the API server while the revision moves on and etcd compacts.
    env.proxy.blackhole();
    const cut = env.proxy.cut();
    try {
      for (let i = 0; i < 2; i++) {
        await env.api.callRetry('POST', `/api/v1/namespaces/${ctx.ns}/configmaps`, { metadata: { generateName: 'bump-' } });
      }
      const revision = await etcdRevision(env.cluster.etcdUrl);
      await etcdPost(env.cluster.etcdUrl, '/v3/kv/compaction', { revision, physical: true });
      const probe = await firstWatchEvent(env.api, pvcs, rvAtFault, 10_000);
      ctx.facts.push(`${cut} connections cut; etcd compacted at revision ${revision}; a watch from the fault's start (${rvAtFault}) got ${probe}`);
      if (!/410/.test(probe)) throw new Error(`the compaction did not expire old watches: ${probe}`);
    } finally {
      env.proxy.restore();
    }
  },
  async cleanup(ctx) {
    await ctx.env.cluster.restart('apiserver', { signal: 'SIGTERM' });
  },
  readLogs(ctx, logs) {
    if (ctx.impl !== 'ours') return;
    const lines = logs.split('\n');
    const relists = lines.filter((l) => l.includes('Watch resourceVersion too old, relisting')).length;
    const failures = lines.filter((l) => l.includes('List/watch failed')).length;
    ctx.facts.push(`ours logged ${relists} relists after 410 and ${failures} list/watch failures`);
  },
};

export const proxyBlackhole: Fault = {
  id: 'proxy-blackhole',
  title: 'connections to the API server cut, then black-holed',
  impls: BOTH,
  replicas: 1,
  async inject(ctx) {
    const { proxy, settings } = ctx.env;
    proxy.blackhole();
    const cut = proxy.cut();
    const acceptedBefore = proxy.stats.accepted;
    // The outage itself: a sleep on purpose, its length is the fault.
    await sleep(settings.blackholeMs);
    const held = proxy.stats.accepted - acceptedBefore;
    proxy.restore();
    ctx.facts.push(`${cut} connections reset, then ${secs(settings.blackholeMs)} of black hole (${held} new connections held)`);
  },
};

export const driverKill: Fault = {
  id: 'driver-kill',
  title: 'CSI driver SIGKILLed mid-call, restarted with its volumes',
  impls: BOTH,
  replicas: 1,
  async inject(ctx) {
    await ctx.driver.kill('SIGKILL');
    // The driver stays down this long on purpose: the length of the outage is the fault.
    await sleep(ctx.env.settings.driverDownMs);
    await ctx.driver.start();
  },
  readLogs(ctx) {
    // Only the kill leaves a call unanswered: the calls received and never answered were in flight.
    const open = new Map<string, number>();
    for (const c of ctx.driver.calls()) {
      if (c.method !== 'ControllerExpandVolume' || c.volumeId === undefined) continue;
      open.set(c.volumeId, (open.get(c.volumeId) ?? 0) + (c.event === 'call' ? 1 : -1));
    }
    const inFlight = [...open.values()].reduce((sum, n) => sum + Math.max(0, n), 0);
    ctx.facts.push(
      `${inFlight} expand calls received by the driver and never answered (killed mid-call); driver back after ${secs(ctx.env.settings.driverDownMs)}`,
    );
  },
};

export const leaderKill: Fault = {
  id: 'leader-kill',
  title: 'leader SIGKILLed, standby takes over',
  impls: BOTH,
  replicas: 2,
  async inject(ctx) {
    const { api } = ctx.env;
    const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases/${ctx.leaseName}`;
    const holder = (await api.callRetry<{ spec?: { holderIdentity?: string } }>('GET', leasePath)).spec?.holderIdentity ?? '';
    const leader = ctx.replicas.find((r) => holder.includes(r.label.replace(/^(ours|upstream)-/, '')));
    if (!leader) throw new Error(`no replica matches the lease holder ${JSON.stringify(holder)}`);
    await leader.kill('SIGKILL');
    const killedAt = Date.now();
    const deadline = killedAt + 120_000;
    let next = holder;
    while (next === holder && Date.now() < deadline) {
      await sleep(200);
      next =
        (await api.call<{ spec?: { holderIdentity?: string } }>('GET', leasePath).catch(() => ({ spec: { holderIdentity: holder } }))).spec?.holderIdentity ??
        '';
    }
    ctx.facts.push(
      next === holder
        ? `leader ${holder} killed; no takeover within 120 s`
        : `leader ${holder} killed; ${next} took the lease after ${secs(Date.now() - killedAt)}`,
    );
  },
};

export const recreate: Fault = {
  id: 'recreate',
  title: 'claims deleted and recreated under the same name',
  impls: BOTH,
  replicas: 1,
  async inject(ctx) {
    const { api, settings } = ctx.env;
    const picked = [...ctx.expected.keys()].filter((name) => Number(name.split('-').at(-1)) % 2 === 0);
    await pool(picked, settings.concurrency, async (name) => {
      const i = Number(name.split('-').at(-1));
      await recreateClaim(api, ctx, name, i);
    });
    ctx.facts.push(`${picked.length} of ${ctx.expected.size} claims recreated at 3Gi on new volumes; old PVs may only show 1Gi or 2Gi`);
  },
};

export const FAULTS: readonly Fault[] = [apiserverKill, etcdRestart, etcdCompaction, proxyBlackhole, driverKill, leaderKill, recreate];

async function recreateClaim(api: Api, ctx: FaultContext, name: string, i: number): Promise<void> {
  const { ns } = ctx;
  const path = `/api/v1/namespaces/${ns}/persistentvolumeclaims/${name}`;
  const old = await api.callRetry<{ spec: { volumeName: string } }>('GET', path);
  // Deleted as a user would; the protection finalizer goes as the pvc-protection controller would
  // take it off (no pod uses the claim).
  await api.callRetry('DELETE', path);
  await api.mergePatch(path, { metadata: { finalizers: null } }).catch(() => {});
  const deadline = Date.now() + 30_000;
  for (;;) {
    const gone = await api.call('GET', path).then(
      () => false,
      (err: { status?: number }) => err.status === 404,
    );
    if (gone) break;
    if (Date.now() > deadline) throw new Error(`${name} was not deleted within 30 s`);
    await sleep(100);
  }
  ctx.retired.push({ pv: old.spec.volumeName, allowedBytes: [GI, 2n * GI] });
  const pv = `${ns}-new-${i}`;
  const created = await api.callRetry<{ metadata: { uid: string } }>('POST', `/api/v1/namespaces/${ns}/persistentvolumeclaims`, {
    metadata: { name, namespace: ns, labels: { [LABEL]: ns } },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      storageClassName: STORAGE_CLASS,
      volumeName: pv,
      volumeMode: 'Filesystem',
    },
  });
  await api.callRetry('POST', '/api/v1/persistentvolumes', {
    metadata: { name: pv, labels: { [LABEL]: ns }, annotations: { 'pv.kubernetes.io/provisioned-by': DRIVER_NAME } },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: STORAGE_CLASS,
      volumeMode: 'Filesystem',
      csi: { driver: DRIVER_NAME, volumeHandle: replacementHandle(ns, i) },
      claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: ns, name, uid: created.metadata.uid },
    },
  });
  await api.mergePatch(`/api/v1/persistentvolumes/${pv}/status`, { status: { phase: 'Bound' } });
  await api.mergePatch(`${path}/status`, { status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } } });
  ctx.expected.set(name, 3n * GI);
  await api.mergePatch(path, { spec: { resources: { requests: { storage: '3Gi' } } } });
}

async function etcdPost(etcdUrl: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(`${etcdUrl}${path}`, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

/** etcd's current revision, from the header of any range request (through its JSON gateway). */
async function etcdRevision(etcdUrl: string): Promise<string> {
  const res = await etcdPost(etcdUrl, '/v3/kv/range', { key: Buffer.from('chaos-probe').toString('base64') });
  const revision = res?.header?.revision;
  if (typeof revision !== 'string') throw new Error(`etcd range answered without a revision: ${JSON.stringify(res).slice(0, 200)}`);
  return revision;
}

/** What a watch from `rv` answers first: "410 ..." for an expired resourceVersion. */
async function firstWatchEvent(api: Api, path: string, rv: string, timeoutMs: number): Promise<string> {
  let answer: string | undefined;
  const w = api.watch(path, rv, (ev) => {
    answer ??= ev.type === 'ERROR' ? `${ev.object?.code} ${ev.object?.reason ?? ''}`.trim() : ev.type;
  });
  const deadline = Date.now() + timeoutMs;
  while (answer === undefined && Date.now() < deadline) {
    const ended = await Promise.race([w.ended.then(() => true), sleep(100).then(() => false)]);
    if (ended) break;
  }
  w.stop();
  return answer ?? 'no event';
}
