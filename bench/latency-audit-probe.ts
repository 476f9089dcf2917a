// Evaluation probe (not part of `npm run bench`): where a single resize's time goes,
// per implementation, read from the API server's audit log. One resizer runs at a time (ours, then
// upstream, alternating per round) against one local control plane; each grows one claim SAMPLES
// times, 1.25 s apart, and each sample's requests are read back from the audit log: every write
// the resizer made from the edit until the claim was seen final, with when the API server
// received and answered it. Prints, per implementation, the median time from the edit's answer to
// each write being received and answered, and from the edit sent to the claim seen final through
// a watch.
//
//   node --import tsx bench/latency-audit-probe.ts ROUNDS SAMPLES ENTRY UPSTREAM_BIN
import { addSample, auditMs, byResizer, printMedians, startOneClaim } from './lib/audit-probe.js';
import { sleep } from './lib/api.js';
import { IMPLS, startResizer, type Impl } from './lib/resizer.js';
import { GI } from './lib/workload.js';

const [roundsArg, samplesArg, oursEntry, upstreamBin] = process.argv.slice(2);
const rounds = Number(roundsArg);
const perRound = Number(samplesArg);
if (!(rounds >= 1 && rounds <= 10 && perRound >= 1 && perRound <= 100) || !oursEntry || !upstreamBin) {
  throw new Error('usage: latency-audit-probe.ts ROUNDS(1-10) SAMPLES(1-100) ENTRY UPSTREAM_BIN');
}
const samples = new Map<string, number[]>();
const setup = await startOneClaim('lat', oursEntry, upstreamBin);
try {
  let sizeGi = 1;
  for (let round = 0; round < rounds; round++) {
    for (const impl of (round % 2 === 0 ? IMPLS : [...IMPLS].reverse()) as Impl[]) {
      const r = startResizer(impl, setup.targets, { workers: 10, qps: 5, burst: 10, timeout: '10s', handleVolumeInUseError: true }, `lat-${round}`);
      await sleep(3000);
      for (let i = 0; i < perRound; i++) {
        sizeGi++;
        const edited = Date.now();
        const editedPerf = performance.now();
        await setup.api.mergePatch(setup.pvcPath, { spec: { resources: { requests: { storage: `${sizeGi}Gi` } } } });
        const [seen] = await setup.tracker.waitAll([setup.pvc], BigInt(sizeGi) * GI, 30_000);
        const finalMs = seen!.pvcAt - editedPerf;
        addSample(samples, `${impl} FINAL (watch, from the edit sent)`, finalMs);
        await sleep(1250);
        // This sample's requests: from the edit until the claim was seen final.
        const lines = setup
          .auditLines()
          .filter(
            (a) =>
              a.stage === 'ResponseComplete' &&
              auditMs(a.requestReceivedTimestamp) >= edited - 1 &&
              auditMs(a.requestReceivedTimestamp) <= edited + finalMs + 2,
          );
        const edit = lines.find((a) => a.verb === 'patch' && a.requestURI.startsWith(setup.pvcPath) && !a.requestURI.includes('/status') && !byResizer(a));
        if (!edit) continue;
        const t0 = auditMs(edit.stageTimestamp);
        const writes = lines
          .filter((a) => byResizer(a) && ['patch', 'create', 'update'].includes(a.verb))
          .sort((a, b) => auditMs(a.requestReceivedTimestamp) - auditMs(b.requestReceivedTimestamp));
        const counts = new Map<string, number>();
        for (const a of writes) {
          const what = `${a.verb} ${a.requestURI
            .replace(/\?.*$/, '')
            .replace(/^\/api\/v1\/(namespaces\/lat\/)?/, '')
            .replace(/\/[^/]*(vol|lat)[^/]*/g, '/*')}`;
          const n = (counts.get(what) ?? 0) + 1;
          counts.set(what, n);
          addSample(samples, `${impl} ${what} #${n} received`, auditMs(a.requestReceivedTimestamp) - t0);
          addSample(samples, `${impl} ${what} #${n} answered`, auditMs(a.stageTimestamp) - t0);
        }
      }
      await r.stop();
    }
  }
} finally {
  await setup.stop();
}
printMedians(samples, IMPLS, 2);
