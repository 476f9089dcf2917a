// Evaluation probe for issue 15 (not part of `npm run bench`): where a single resize's time goes,
// per implementation, read from the API server's audit log. One resizer runs at a time (ours, then
// upstream, alternating per round) against one local control plane; each grows one claim SAMPLES
// times, 1.25 s apart, and each sample's requests are read back from the audit log: the edit, then
// every request the resizer made until the claim's final status update, with when the API server
// received and answered each (µs). Prints, per implementation, the median gap from the edit's
// answer to each of the resizer's writes being received and answered, and from the edit sent to
// the claim seen final through a watch.
//
//   node --import tsx bench/latency-audit-probe.ts ROUNDS SAMPLES ENTRY UPSTREAM_BIN
import { readFileSync } from 'node:fs';
import { startCluster } from '../test/cluster/cluster.js';
import { Api, sleep } from './lib/api.js';
import { startResizer, type Impl } from './lib/resizer.js';
import { createNamespace, ensureStorageClass, GI, provisionBulk, Tracker } from './lib/workload.js';

const [roundsArg, samplesArg, oursEntry, upstreamBin] = process.argv.slice(2);
const rounds = Number(roundsArg);
const samples = Number(samplesArg);
if (!(rounds >= 1 && rounds <= 10 && samples >= 1 && samples <= 100) || !oursEntry || !upstreamBin) {
  throw new Error('usage: latency-audit-probe.ts ROUNDS(1-10) SAMPLES(1-100) ENTRY UPSTREAM_BIN');
}
const policy = JSON.stringify({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', rules: [{ level: 'Metadata' }] });
const cluster = await startCluster({ auditPolicy: policy });
const api = new Api(cluster.adminKubeconfigPath, { maxSockets: 4 });
interface Audit { verb: string; requestURI: string; userAgent?: string; user: { username: string }; requestReceivedTimestamp: string; stageTimestamp: string; stage: string }
const us = (t: string) => Date.parse(t) * 1000 + Number((/\.(\d{6})Z$/.exec(t)?.[1] ?? '000000').slice(3));
const gaps = new Map<string, number[]>();
const add = (impl: Impl, step: string, v: number) => {
  const key = `${impl} ${step}`;
  gaps.set(key, [...(gaps.get(key) ?? []), v / 1000]);
};
try {
  await ensureStorageClass(api, 'lat', cluster.driverName);
  await sleep(1500);
  await createNamespace(api, 'lat');
  const [volume] = await provisionBulk(api, {
    ns: 'lat', sizeGi: 1, storageClass: 'lat', driverName: cluster.driverName,
    csi: { protoPath: cluster.driver.protoPath, address: cluster.csiAddress }, concurrency: 1, deadlineMs: 60_000, count: 1, prefix: 'vol',
  });
  const tracker = await Tracker.start(api, 'lat');
  const pvcPath = `/api/v1/namespaces/lat/persistentvolumeclaims/${volume!.pvc}`;
  let sizeGi = 1;
  const targets = { kubeconfig: cluster.resizerKubeconfigPath, csiAddress: cluster.csiAddress, oursEntry: oursEntry!, upstreamBin: upstreamBin!, logDir: cluster.dir };
  for (let round = 0; round < rounds; round++) {
    for (const impl of (round % 2 === 0 ? ['ours', 'upstream'] : ['upstream', 'ours']) as Impl[]) {
      const r = startResizer(impl, targets, { workers: 10, qps: 5, burst: 10, timeout: '10s', handleVolumeInUseError: true }, `lat-${round}`);
      await sleep(3000);
      for (let i = 0; i < samples; i++) {
        sizeGi++;
        const edited = Date.now();
        const editedPerf = performance.now();
        await api.mergePatch(pvcPath, { spec: { resources: { requests: { storage: `${sizeGi}Gi` } } } });
        const [seen] = await tracker.waitAll([volume!.pvc], BigInt(sizeGi) * GI, 30_000);
        const finalMs = seen!.pvcAt - editedPerf;
        add(impl, 'FINAL (watch, from the edit sent)', finalMs * 1000);
        await sleep(1250);
        // This sample's requests: from the edit until the claim was seen final.
        const lines = readFileSync(cluster.auditLogPath!, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Audit)
          .filter((a) => a.stage === 'ResponseComplete' && us(a.requestReceivedTimestamp) >= edited * 1000 - 1000 && us(a.requestReceivedTimestamp) <= (edited + finalMs + 2) * 1000);
        const edit = lines.find((a) => a.verb === 'patch' && a.requestURI.startsWith(pvcPath) && !a.requestURI.includes('/status') && a.user.username.includes('admin'));
        if (!edit) continue;
        const t0 = us(edit.stageTimestamp);
        const mine = lines.filter((a) => !a.user.username.includes('admin') && us(a.requestReceivedTimestamp) > us(edit.requestReceivedTimestamp) && a.verb !== 'watch' && a.verb !== 'list' && a.verb !== 'get' && /persistentvolume|events/.test(a.requestURI))
          .sort((a, b) => us(a.requestReceivedTimestamp) - us(b.requestReceivedTimestamp));
        const counts = new Map<string, number>();
        for (const a of mine) {
          const what = `${a.verb} ${a.requestURI.replace(/\?.*$/, '').replace(/^\/api\/v1\/(namespaces\/lat\/)?/, '').replace(/\/[^/]*(vol|lat)[^/]*/g, '/*')}`;
          const n = (counts.get(what) ?? 0) + 1;
          counts.set(what, n);
          add(impl, `${what} #${n} received`, us(a.requestReceivedTimestamp) - t0);
          add(impl, `${what} #${n} answered`, us(a.stageTimestamp) - t0);
        }
      }
      await r.stop();
    }
  }
  tracker.stop();
} finally {
  api.close();
  await cluster.stop({ keepLogs: false });
}
const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2; };
for (const [key, v] of [...gaps].sort((a, b) => median(a[1]) - median(b[1]))) {
  process.stdout.write(`${median(v).toFixed(2).padStart(8)} ms  n=${String(v.length).padStart(3)}  ${key}\n`);
}
