// Evaluation probe (not part of `npm run bench`): the API requests of a start, per
// implementation, from the API server's audit log: for each request the resizer made from spawn
// until its first resize was final, when the API server received it (and, for a watch, when it
// began streaming), with the resizer's own log lines beside them (klog's timestamps), all in ms
// after spawn. Starts alternate ours, upstream, upstream, ours, ...; medians per line.
//
//   node --import tsx bench/startup-audit-probe.ts STARTS ENTRY UPSTREAM_BIN
import { readFileSync } from 'node:fs';
import { addSample, auditMs, byResizer, printMedians, startOneClaim } from './lib/audit-probe.js';
import { sleep } from './lib/api.js';
import { klogLineTime } from './lib/klog-time.js';
import { IMPLS, pairOrder, startResizer } from './lib/resizer.js';
import { GI } from './lib/workload.js';

const [startsArg, oursEntry, upstreamBin] = process.argv.slice(2);
const starts = Number(startsArg);
if (!(starts >= 1 && starts <= 20) || !oursEntry || !upstreamBin) throw new Error('usage: startup-audit-probe.ts STARTS(1-20) ENTRY UPSTREAM_BIN');
const samples = new Map<string, number[]>();
const setup = await startOneClaim('su', oursEntry, upstreamBin);
try {
  let sizeGi = 1;
  for (let i = 0; i < starts; i++) {
    for (const impl of pairOrder(i)) {
      sizeGi++;
      await setup.api.mergePatch(setup.pvcPath, { spec: { resources: { requests: { storage: `${sizeGi}Gi` } } } });
      await sleep(500);
      const spawned = Date.now();
      const r = startResizer(impl, setup.targets, { workers: 10, qps: 5, burst: 10, timeout: '10s', handleVolumeInUseError: true }, `su-${i}`);
      const [seen] = await setup.tracker.waitAll([setup.pvc], BigInt(sizeGi) * GI, 30_000);
      const finalMs = seen!.pvcAt - r.spawnedAt;
      await r.stop();
      await sleep(300);
      const mine = setup
        .auditLines()
        // One line per request: a watch when it began streaming, anything else when it was answered.
        .filter((a) => byResizer(a) && a.stage === (a.verb === 'watch' ? 'ResponseStarted' : 'ResponseComplete'))
        .filter((a) => auditMs(a.requestReceivedTimestamp) >= spawned && auditMs(a.requestReceivedTimestamp) <= spawned + finalMs + 2)
        .sort((a, b) => auditMs(a.requestReceivedTimestamp) - auditMs(b.requestReceivedTimestamp));
      const counts = new Map<string, number>();
      for (const a of mine) {
        const path = a.requestURI
          .replace(/^\/apis?\//, '')
          .replace(/\?.*$/, (q) => (/watch=(1|true)|sendInitialEvents/.test(q) ? ' (watch)' : ''))
          .replace(/namespaces\/su\//, '')
          .replace(/\/[^/ ]*vol-[^/ ]*/g, '/*');
        const what = a.verb === 'watch' ? `${a.verb} ${path}, streaming` : `${a.verb} ${path}`;
        const n = (counts.get(what) ?? 0) + 1;
        counts.set(what, n);
        addSample(samples, `${impl} ${what} #${n} received`, auditMs(a.requestReceivedTimestamp) - spawned);
        addSample(samples, `${impl} ${what} #${n} answered`, auditMs(a.stageTimestamp) - spawned);
      }
      addSample(samples, `${impl} FINAL (watch)`, finalMs);
      // Its own log lines too, the first of each message.
      const logged = new Set<string>();
      for (const line of readFileSync(r.proc.logPath, 'utf8').split('\n')) {
        const at = klogLineTime(line, spawned);
        const message = /\] "?([^"=]{1,60})/.exec(line)?.[1];
        if (at === undefined || message === undefined || logged.has(message) || at - spawned > finalMs) continue;
        logged.add(message);
        addSample(samples, `${impl} log: ${message}`, at - spawned);
      }
    }
  }
} finally {
  await setup.stop();
}
printMedians(samples, IMPLS, 1);
