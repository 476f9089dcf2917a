// Evaluation probe for issue 15 (not part of `npm run bench`): what the CSI layer costs a fresh
// process, for two source trees (e.g. a snapshot of main from bench/snapshot.sh and the working
// tree). Each tree's GrpcCsiClient is bundled the way scripts/build.sh bundles the resizer (one
// ES module, dependencies included) into a tiny program that starts the client against the
// Kubernetes CSI mock driver (connect, Probe, GetPluginInfo) and makes three more calls
// (GetPluginCapabilities, ControllerGetCapabilities, a ControllerExpandVolume the driver refuses);
// it reports the time from process start to the last answer, the process's CPU and its peak RSS.
// The programs run alternately, old new old new ... Run (needs the built components):
//   node --import tsx bench/grpc-startup-probe.ts OLD_ROOT NEW_ROOT [rounds]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildSync } from 'esbuild';
import { startMockDriver } from '../test/cluster/mock-driver.js';

const [oldRoot, newRoot, roundsArg = '10'] = process.argv.slice(2);
if (!oldRoot || !newRoot) throw new Error('usage: grpc-startup-probe.ts OLD_ROOT NEW_ROOT [rounds]');
const rounds = Number(roundsArg);
const dir = mkdtempSync(join(tmpdir(), 'grpc-startup-'));

function program(root: string, name: string): string {
  const abs = resolve(root);
  const entry = join(dir, `${name}-entry.ts`);
  writeFileSync(entry, `
import { GrpcCsiClient } from '${abs}/src/csi/client.ts';
import { createMetrics } from '${abs}/src/observability/metrics.ts';
import { silentLogger } from '${abs}/src/observability/logger.ts';
const signal = new AbortController().signal;
// { processMetrics: false } for trees before createMetrics lost that option (it never sets them up now).
const client = await GrpcCsiClient.start({ address: process.argv[2], timeoutMs: 10_000, log: silentLogger, metrics: createMetrics({ processMetrics: false }) }, signal);
await client.getPluginCapabilities(signal);
await client.getControllerCapabilities(signal);
await client.expandVolume({ volumeId: 'none', requiredBytes: 1n << 30n, secrets: {}, capability: null }, signal).catch(() => undefined);
const ms = performance.now();
client.close();
const cpu = process.cpuUsage();
process.stdout.write(JSON.stringify({ ms, cpuMs: (cpu.user + cpu.system) / 1000, maxRssMiB: process.resourceUsage().maxRSS / 1024 }));
`);
  const outfile = join(dir, `${name}.mjs`);
  buildSync({
    entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', target: 'node24', outfile, logLevel: 'warning',
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  });
  return outfile;
}

const programs = { old: program(oldRoot, 'old'), new: program(newRoot, 'new') };
const driver = await startMockDriver();
type Sample = { ms: number; cpuMs: number; maxRssMiB: number };
const samples: Record<string, Sample[]> = { old: [], new: [] };
try {
  for (let r = 0; r < rounds; r++) {
    for (const [name, file] of Object.entries(programs)) {
      samples[name]!.push(JSON.parse(execFileSync(process.execPath, [file, driver.address], { encoding: 'utf8' })) as Sample);
    }
  }
} finally {
  await driver.stop();
  rmSync(dir, { recursive: true, force: true });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [name, rs] of Object.entries(samples)) {
  process.stdout.write(`${name.padEnd(4)} start to 5 CSI calls answered ${median(rs.map((r) => r.ms)).toFixed(0)} ms, ` +
    `CPU ${median(rs.map((r) => r.cpuMs)).toFixed(0)} ms, peak RSS ${median(rs.map((r) => r.maxRssMiB)).toFixed(1)} MiB (median of ${rs.length})\n`);
}
