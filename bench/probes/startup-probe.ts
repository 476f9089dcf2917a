// Evaluation probe (not part of `npm run bench`): the start-up of several builds of
// our resizer, started alternately against one cluster, with the time after spawn of every log
// line. Each start is the bench's startup scenario (one claim grown while no resizer runs, the
// bench's flags, a pod's environment: lib/resizer.ts sidecarEnv) timed to the claim's final
// state through a watch, with the process's CPU and memory (VmRSS, VmHWM) read then. The log lines say where the time goes
// (Version: Node's start and the bundle's load; then discovery, the CSI start-up, the informers'
// first lists, the resize).
//
//   node --import tsx bench/probes/startup-probe.ts ROUNDS ENTRY... > summary.txt
//
// ENTRY is a dist/main.js; it runs with NODE_FLAGS, and with extra node flags when written
// ENTRY#--flag1#--flag2 (an old build as it shipped: bench/.build/snap/dist/main.js#--heap-growing-percent=30).
// Environment: OUT=<file> (default /tmp/startup-probe.json) gets every start's log lines; V=<n> the
// --v of the resizers (default 1); NODE_ARGS extra node flags for every entry (e.g. --cpu-prof
// --cpu-prof-dir=DIR); HOLD=<ms> keeps each resizer running that long after the resize.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { startCluster } from '../../test/cluster/cluster.js';
import { Api, sleep } from '../lib/api.js';
import { commonArgs, readProc, sidecarEnv } from '../lib/resizer.js';
import { NODE_FLAGS } from '../../scripts/node-flags.js';
import { createNamespace, ensureStorageClass, GI, provisionBulk, Tracker } from '../lib/workload.js';

interface Start {
  entry: string;
  round: number;
  /** Spawn to the claim seen final. */
  ms: number;
  cpuSeconds: number;
  /** VmRSS and VmHWM (peak) when the claim was seen final. */
  rssKiB: number;
  hwmKiB: number;
  load: string;
  /** [ms after spawn, line] of everything the resizer wrote until it was stopped. */
  lines: [number, string][];
}

const [roundsArg, ...entries] = process.argv.slice(2);
const rounds = Number(roundsArg);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 50 || entries.length === 0) {
  throw new Error('usage: startup-probe.ts ROUNDS(1-50) ENTRY[#--node-flag...]...');
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const lineAt = (start: Start, re: RegExp) => start.lines.find(([, l]) => re.test(l))?.[0] ?? NaN;

const cluster = await startCluster({});
const api = new Api(cluster.adminKubeconfigPath, { maxSockets: 8 });
const starts: Start[] = [];
try {
  await ensureStorageClass(api, 'startup-probe', cluster.driverName);
  await sleep(1500); // the resize admission plugin reads StorageClasses from an informer
  const ns = 'startup-probe';
  await createNamespace(api, ns);
  const [volume] = await provisionBulk(api, {
    ns,
    sizeGi: 1,
    storageClass: 'startup-probe',
    driverName: cluster.driverName,
    csi: { protoPath: cluster.driver.protoPath, address: cluster.csiAddress },
    concurrency: 4,
    deadlineMs: 60_000,
    count: 1,
    prefix: 'vol',
  });
  const tracker = await Tracker.start(api, ns);
  const targets = { kubeconfig: cluster.resizerKubeconfigPath, csiAddress: cluster.csiAddress, oursEntry: '', upstreamBin: '', logDir: '' };
  const args = commonArgs(targets, { workers: 10, timeout: '10s', qps: 5, burst: 10, handleVolumeInUseError: true, verbosity: Number(process.env['V'] ?? 1) });
  const extraNodeArgs = (process.env['NODE_ARGS'] ?? '').split(' ').filter(Boolean);
  let sizeGi = 1;
  for (let round = 0; round < rounds; round++) {
    for (const spec of entries) {
      const [entry, ...entryFlags] = spec.split('#');
      sizeGi += 1;
      await api.mergePatch(`/api/v1/namespaces/${ns}/persistentvolumeclaims/${volume!.pvc}`, { spec: { resources: { requests: { storage: `${sizeGi}Gi` } } } });
      await sleep(500);
      const spawnedAt = performance.now();
      // A V8 startup snapshot blob (`snapshot:<blob>`) runs as `node --snapshot-blob <blob> -- args`.
      const target = entry!.startsWith('snapshot:') ? ['--snapshot-blob', entry!.slice('snapshot:'.length), '--'] : [entry!];
      const child = spawn(process.execPath, [...NODE_FLAGS, ...entryFlags, ...extraNodeArgs, ...target, ...args], {
        env: sidecarEnv('ours'),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const lines: [number, string][] = [];
      let pending = '';
      const onData = (chunk: Buffer) => {
        const at = Math.round(performance.now() - spawnedAt);
        pending += chunk.toString();
        for (let i = pending.indexOf('\n'); i >= 0; i = pending.indexOf('\n')) {
          lines.push([at, pending.slice(0, i)]);
          pending = pending.slice(i + 1);
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      const [seen] = await tracker.waitAll([volume!.pvc], BigInt(sizeGi) * GI, 60_000);
      const { cpuSeconds, rssKiB, hwmKiB } = readProc(child.pid!);
      await sleep(Number(process.env['HOLD'] ?? 0));
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      const start: Start = {
        entry: spec,
        round,
        ms: Math.round(seen!.pvcAt - spawnedAt),
        cpuSeconds,
        rssKiB,
        hwmKiB,
        load: readFileSync('/proc/loadavg', 'utf8').split(' ')[0]!,
        lines,
      };
      starts.push(start);
      process.stderr.write(`${spec} round ${round}: ${start.ms} ms, ${cpuSeconds} CPU-s, load ${start.load}\n`);
    }
  }
  tracker.stop();
} finally {
  api.close();
  await cluster.stop({ keepLogs: false });
  writeFileSync(process.env['OUT'] ?? '/tmp/startup-probe.json', JSON.stringify(starts));
}

for (const spec of entries) {
  const mine = starts.filter((s) => s.entry === spec);
  const version = mine.map((s) => lineAt(s, /"Version"/));
  process.stdout.write(
    `${spec}: ${mine.length} starts, load ${mine.map((s) => s.load).join(' ')}\n` +
      `  spawn to first resize final ${median(mine.map((s) => s.ms))} ms, CPU ${median(mine.map((s) => s.cpuSeconds)).toFixed(3)} s, ` +
      `RSS ${(median(mine.map((s) => s.rssKiB)) / 1024).toFixed(1)} MiB (peak ${(median(mine.map((s) => s.hwmKiB)) / 1024).toFixed(1)}) then (medians)\n` +
      `  Version line ${median(version)} ms after spawn; Version to ServeMux listening ${median(mine.map((s, i) => lineAt(s, /"ServeMux listening"/) - version[i]!))} ms, to first resize final ${median(mine.map((s, i) => s.ms - version[i]!))} ms\n`,
  );
}
