// Probe (not part of `npm run bench`): the CSI client as the working tree has it against another
// tree (e.g. the hand-written channel before it was replaced), both against the grpc-go mock
// driver, in two parts:
//   - client CPU per call: GrpcCsiClient.getControllerCapabilities, CALLS calls at CONCURRENCY per
//     round, the trees alternating in one process; the median per tree;
//   - a fresh process: each tree's GrpcCsiClient bundled the way scripts/build.sh bundles the
//     resizer (one ES module, dependencies included) into a small program that starts the client
//     (connect, Probe, GetPluginInfo) and makes three more calls; time from process start to the
//     last answer, the process's CPU and peak RSS, STARTS runs alternating; the medians.
// Bounded: rounds x 2 x CALLS calls, and 2 x STARTS processes. Run (needs the built components):
//   mkdir -p bench/.build/old && git archive main src | tar -x -C bench/.build/old
//   node --import tsx bench/probes/csi-channel-probe.ts bench/.build/old [calls] [concurrency] [rounds] [starts]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';
import { startMockDriver } from '../../test/cluster/mock-driver.js';

const [otherRoot, callsArg = '2000', concurrencyArg = '10', roundsArg = '5', startsArg = '12'] = process.argv.slice(2);
if (!otherRoot) throw new Error('usage: csi-channel-probe.ts OTHER_ROOT [calls] [concurrency] [rounds] [starts]');
const [calls, concurrency, rounds, starts] = [callsArg, concurrencyArg, roundsArg, startsArg].map(Number) as [number, number, number, number];

interface Tree {
  name: string;
  client: { getControllerCapabilities(signal: AbortSignal): Promise<unknown>; close(): void };
}

async function load(root: string, name: string, address: string): Promise<Tree> {
  const url = (p: string) => pathToFileURL(resolve(root, p)).href;
  const { GrpcCsiClient } = await import(url('src/csi/client.ts'));
  const { createMetrics } = await import(url('src/observability/metrics.ts'));
  const { silentLogger } = await import(url('src/observability/log/logger.ts'));
  const client = await GrpcCsiClient.start({ address, timeoutMs: 10_000, log: silentLogger, metrics: createMetrics() }, new AbortController().signal);
  return { name, client };
}

async function round(tree: Tree): Promise<number> {
  const signal = new AbortController().signal;
  let next = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < calls) await tree.client.getControllerCapabilities(signal);
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A bundled program that starts the tree's client, makes three calls and prints its costs. */
function startProgram(root: string, name: string, dir: string): string {
  const abs = resolve(root);
  const entry = join(dir, `${name}-entry.ts`);
  writeFileSync(
    entry,
    `
import { GrpcCsiClient } from '${abs}/src/csi/client.ts';
import { createMetrics } from '${abs}/src/observability/metrics.ts';
import { silentLogger } from '${abs}/src/observability/log/logger.ts';
const signal = new AbortController().signal;
const client = await GrpcCsiClient.start({ address: process.argv[2], timeoutMs: 10_000, log: silentLogger, metrics: createMetrics() }, signal);
await client.getPluginCapabilities(signal);
await client.getControllerCapabilities(signal);
await client.expandVolume({ volumeId: 'none', requiredBytes: 1n << 30n, secrets: {}, capability: null }, signal).catch(() => undefined);
const ms = performance.now();
client.close();
const cpu = process.cpuUsage();
process.stdout.write(JSON.stringify({ ms, cpuMs: (cpu.user + cpu.system) / 1000, maxRssMiB: process.resourceUsage().maxRSS / 1024 }));
`,
  );
  const outfile = join(dir, `${name}.mjs`);
  buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    outfile,
    logLevel: 'warning',
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  });
  return outfile;
}

const driver = await startMockDriver();
const dir = mkdtempSync(join(tmpdir(), 'rz-csi-probe-'));
try {
  const trees = [await load(otherRoot, `other (${otherRoot})`, driver.address), await load('.', 'working tree', driver.address)];
  for (const tree of trees) await round(tree); // warm-up
  const perCall = new Map<string, number[]>(trees.map((t) => [t.name, []]));
  for (let r = 0; r < rounds; r++) for (const tree of r % 2 === 0 ? trees : [...trees].reverse()) perCall.get(tree.name)!.push(await round(tree));
  for (const [name, xs] of perCall)
    process.stdout.write(`${name}: median ${median(xs).toFixed(1)} µs client CPU per call (rounds: ${xs.map((x) => x.toFixed(1)).join(' ')})\n`);
  for (const tree of trees) tree.client.close();

  const programs = [
    { name: `other (${otherRoot})`, file: startProgram(otherRoot, 'other', dir) },
    { name: 'working tree', file: startProgram('.', 'working', dir) },
  ];
  type Sample = { ms: number; cpuMs: number; maxRssMiB: number };
  const samples = new Map<string, Sample[]>(programs.map((p) => [p.name, []]));
  for (let r = 0; r < starts; r++) {
    for (const program of r % 2 === 0 ? programs : [...programs].reverse()) {
      samples
        .get(program.name)!
        .push(JSON.parse(execFileSync(process.execPath, [program.file, driver.address], { encoding: 'utf8', timeout: 60_000 })) as Sample);
    }
  }
  for (const [name, xs] of samples) {
    process.stdout.write(
      `${name}: fresh process, start to 5 CSI calls answered ${median(xs.map((x) => x.ms)).toFixed(0)} ms, ` +
        `CPU ${median(xs.map((x) => x.cpuMs)).toFixed(0)} ms, peak RSS ${median(xs.map((x) => x.maxRssMiB)).toFixed(1)} MiB (median of ${xs.length})\n`,
    );
  }
} finally {
  await driver.stop();
  rmSync(dir, { recursive: true, force: true });
}
