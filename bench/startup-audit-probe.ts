// Evaluation probe for issue 15 (not part of `npm run bench`): the API requests of a start, per
// implementation, from the API server's audit log: for each request the resizer made from spawn
// until its first resize was final, when the API server received it and when it answered
// (ms after spawn). Starts alternate ours, upstream, upstream, ours, ...; medians per request.
//
//   node --import tsx bench/startup-audit-probe.ts STARTS ENTRY UPSTREAM_BIN
import { readFileSync } from 'node:fs';
import { startCluster } from '../test/cluster/cluster.js';
import { Api, sleep } from './lib/api.js';
import { klogLineTime } from './lib/klog-time.js';
import { pairOrder, startResizer, type Impl } from './lib/resizer.js';
import { createNamespace, ensureStorageClass, GI, provisionBulk, Tracker } from './lib/workload.js';

const [startsArg, oursEntry, upstreamBin] = process.argv.slice(2);
const starts = Number(startsArg);
if (!(starts >= 1 && starts <= 20) || !oursEntry || !upstreamBin) throw new Error('usage: startup-audit-probe.ts STARTS(1-20) ENTRY UPSTREAM_BIN');
const policy = JSON.stringify({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', rules: [{ level: 'Metadata' }] });
const cluster = await startCluster({ auditPolicy: policy });
const api = new Api(cluster.adminKubeconfigPath, { maxSockets: 4 });
interface Audit { verb: string; requestURI: string; user: { username: string }; requestReceivedTimestamp: string; stageTimestamp: string; stage: string }
/** An audit timestamp (RFC 3339 with µs) in ms since the epoch, with the µs. */
const ms = (t: string) => Date.parse(t) + Number((/\.\d{3}(\d{3})Z$/.exec(t)?.[1] ?? '000')) / 1000;
const rows = new Map<string, number[]>();
const add = (key: string, v: number) => rows.set(key, [...(rows.get(key) ?? []), v]);
try {
  await ensureStorageClass(api, 'su', cluster.driverName);
  await sleep(1500);
  await createNamespace(api, 'su');
  const [volume] = await provisionBulk(api, {
    ns: 'su', sizeGi: 1, storageClass: 'su', driverName: cluster.driverName,
    csi: { protoPath: cluster.driver.protoPath, address: cluster.csiAddress }, concurrency: 1, deadlineMs: 60_000, count: 1, prefix: 'vol',
  });
  const tracker = await Tracker.start(api, 'su');
  const targets = { kubeconfig: cluster.resizerKubeconfigPath, csiAddress: cluster.csiAddress, oursEntry: oursEntry!, upstreamBin: upstreamBin!, logDir: cluster.dir };
  let sizeGi = 1;
  for (let i = 0; i < starts; i++) {
    for (const impl of pairOrder(i)) {
      sizeGi++;
      await api.mergePatch(`/api/v1/namespaces/su/persistentvolumeclaims/${volume!.pvc}`, { spec: { resources: { requests: { storage: `${sizeGi}Gi` } } } });
      await sleep(500);
      const spawned = Date.now();
      const r = startResizer(impl, targets, { workers: 10, qps: 5, burst: 10, timeout: '10s', handleVolumeInUseError: true }, `su-${i}`);
      const [seen] = await tracker.waitAll([volume!.pvc], BigInt(sizeGi) * GI, 30_000);
      const finalMs = seen!.pvcAt - r.spawnedAt;
      await r.stop();
      await sleep(300);
      const mine = readFileSync(cluster.auditLogPath!, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Audit)
        .filter((a) => a.stage === 'ResponseComplete' || a.stage === 'ResponseStarted')
        .filter((a) => !a.user.username.includes('admin') && ms(a.requestReceivedTimestamp) >= spawned && ms(a.requestReceivedTimestamp) <= spawned + finalMs + 2)
        .sort((a, b) => ms(a.requestReceivedTimestamp) - ms(b.requestReceivedTimestamp));
      const seenKeys = new Map<string, number>();
      for (const a of mine) {
        const path = a.requestURI.replace(/^\/apis?\//, '').replace(/\?.*$/, (q) => (/watch=(1|true)|sendInitialEvents/.test(q) ? ' (watch)' : ''))
          .replace(/namespaces\/su\//, '').replace(/\/[^/ ]*vol-[^/ ]*/g, '/*');
        const what = `${a.verb} ${path} [${a.stage === 'ResponseStarted' ? 'started' : 'done'}]`;
        const n = (seenKeys.get(what) ?? 0) + 1;
        seenKeys.set(what, n);
        add(`${impl} ${what} #${n} received`, ms(a.requestReceivedTimestamp) - spawned);
        add(`${impl} ${what} #${n} answered`, ms(a.stageTimestamp) - spawned);
      }
      add(`${impl} FINAL (watch)`, finalMs);
      // Its own log lines too (klog's timestamps), the first of each message.
      const logged = new Set<string>();
      for (const line of readFileSync(r.proc.logPath, 'utf8').split('\n')) {
        const at = klogLineTime(line, spawned);
        const message = /\] "?([^"=]{1,60})/.exec(line)?.[1];
        if (at === undefined || message === undefined || logged.has(message) || at - spawned > finalMs) continue;
        logged.add(message);
        add(`${impl} log: ${message}`, at - spawned);
      }
    }
  }
  tracker.stop();
} finally {
  api.close();
  await cluster.stop({ keepLogs: false });
}
const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2; };
for (const impl of ['ours', 'upstream'] as Impl[]) {
  process.stdout.write(`== ${impl}\n`);
  for (const [key, v] of [...rows].filter(([k]) => k.startsWith(impl)).sort((a, b) => median(a[1]) - median(b[1]))) {
    process.stdout.write(`${median(v).toFixed(1).padStart(7)} ms  n=${String(v.length).padStart(2)}  ${key.slice(impl.length + 1)}\n`);
  }
}
