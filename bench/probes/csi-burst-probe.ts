// Probe (not part of `npm run bench`): N concurrent CSI calls at once, as the interop table's
// "200 concurrent calls" row makes them, through GrpcCsiClient of the working tree, of another
// tree (e.g. main before a change), and through plain @grpc/grpc-js (the same options, wait-for-
// ready and deadline, none of our code), all against the grpc-go fault driver. Each run is a fresh
// process (run through tsx, so that a profile names each file) that starts the client and makes
// BURSTS bursts of N ControllerGetCapabilities calls; it reports each burst's wall time
// and the process's CPU during it. Runs alternate between the arms; medians per burst. With
// --cpu-prof, each run also writes a CPU profile, and the first burst's samples are summed by
// package (our files, grpc-js, node:http2, GC...) over all runs of an arm. With --driver-error,
// the driver answers ControllerExpandVolume with its own Unavailable and the calls are expands:
// how long a driver's error answer takes to reach the caller.
// Bounded: RUNS x 3 processes of BURSTS x N calls. Run (needs the built components):
//   mkdir -p bench/.build/old && git archive main src | tar -x -C bench/.build/old
//   node --import tsx bench/probes/csi-burst-probe.ts bench/.build/old [runs] [n] [bursts] [--cpu-prof] [--driver-error]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startGoFaultDriver } from '../../test/cluster/go-fault-driver.js';

const args = process.argv.slice(2);
const profile = args.includes('--cpu-prof');
const driverError = args.includes('--driver-error');
const [otherRoot, runsArg = '12', nArg = '200', burstsArg = '3'] = args.filter((a) => !a.startsWith('--'));
if (!otherRoot) throw new Error('usage: csi-burst-probe.ts OTHER_ROOT [runs] [n] [bursts] [--cpu-prof] [--driver-error]');
const [runs, n, bursts] = [runsArg, nArg, burstsArg].map(Number) as [number, number, number];

interface Run {
  wallMs: number[];
  cpuMs: number[];
  /** process.hrtime of each burst's start and end, in µs (a CPU profile's clock). */
  windowsUs: Array<[number, number]>;
}

const BURSTS = `
const n = Number(process.argv[3]);
const out = { wallMs: [], cpuMs: [], windowsUs: [] };
for (let b = 0; b < Number(process.argv[4]); b++) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: n }, call));
  const end = process.hrtime.bigint();
  const used = process.cpuUsage(cpu);
  out.wallMs.push(Number(end - start) / 1e6);
  out.cpuMs.push((used.user + used.system) / 1000);
  out.windowsUs.push([Number(start / 1000n), Number(end / 1000n)]);
}
process.stdout.write(JSON.stringify(out));
process.exit(0);
`;

function ourProgram(root: string): string {
  const abs = resolve(root);
  return `
import { GrpcCsiClient } from '${abs}/src/csi/client.ts';
import { createMetrics } from '${abs}/src/observability/metrics.ts';
import { silentLogger } from '${abs}/src/observability/log/logger.ts';
const signal = new AbortController().signal;
const client = await GrpcCsiClient.start({ address: process.argv[2], timeoutMs: 10_000, log: silentLogger, metrics: createMetrics() }, signal);
const call = ${
    driverError
      ? "() => client.expandVolume({ volumeId: 'vol-1', requiredBytes: 1n << 30n, secrets: {}, capability: null }, signal).catch(() => undefined)"
      : '() => client.getControllerCapabilities(signal)'
  };
${BURSTS}`;
}

const PLAIN_PROGRAM = `
import * as grpc from '@grpc/grpc-js';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { CHANNEL_OPTIONS } from '${resolve('.')}/src/csi/driver-channel.ts';
import { Controller, Identity } from '${resolve('.')}/src/csi/proto/gen/csi_pb.ts';
const client = new grpc.Client(process.argv[2], grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
const unary = (method, init = {}) => () =>
  new Promise((resolve, reject) =>
    client.makeUnaryRequest(
      '/' + method.parent.typeName + '/' + method.name,
      (m) => Buffer.from(toBinary(method.input, m)),
      (b) => fromBinary(method.output, b),
      create(method.input, init),
      new grpc.Metadata({ waitForReady: true }),
      { deadline: Date.now() + 10_000 },
      (err, value) => (err ? reject(err) : resolve(value)),
    ),
  );
await unary(Identity.method.probe)();
await unary(Identity.method.getPluginInfo)();
const call = ${
  driverError
    ? "() => unary(Controller.method.controllerExpandVolume, { volumeId: 'vol-1', capacityRange: { requiredBytes: 1n << 30n } })().catch(() => undefined)"
    : 'unary(Controller.method.controllerGetCapabilities)'
};
${BURSTS}`;

/** Writes the program where its packages resolve; it runs through tsx, so a profile names each file. */
function program(name: string, source: string): string {
  const file = join(BUILD_DIR, `${name}.ts`);
  writeFileSync(file, source);
  return file;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The package a profile's frame belongs to: one of ours (src/...), a dependency, a node: module, or V8's own. */
function packageOf(url: string, functionName: string): string {
  const ours = /\/src\/(.+)$/.exec(url);
  if (ours && !url.includes('node_modules')) return `ours: ${ours[1]}`;
  const dep = /node_modules\/(@[^/]+\/[^/]+|[^/]+)/.exec(url);
  if (dep) return dep[1]!;
  if (url.startsWith('node:')) return url.replace('internal/', '');
  return url === '' ? functionName || '(native)' : url;
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { url: string; functionName: string } }>;
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Adds the samples of `profile` that fall in [fromUs, toUs] to `byPackage` (µs). */
function addWindow(byPackage: Map<string, number>, profile: CpuProfile, fromUs: number, toUs: number): void {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i]!;
    if (at < fromUs || at > toUs) return;
    const frame = frames.get(id)!;
    const key = packageOf(frame.url, frame.functionName);
    byPackage.set(key, (byPackage.get(key) ?? 0) + profile.timeDeltas[i]!);
  });
}

const BUILD_DIR = resolve('bench/.build/csi-burst');
mkdirSync(BUILD_DIR, { recursive: true });
const driver = await startGoFaultDriver({ expand: driverError ? 'unavailable' : 'grow' });
const dir = mkdtempSync(join(tmpdir(), 'rz-csi-burst-'));
try {
  const arms = [
    { name: `other (${otherRoot})`, file: program('other', ourProgram(otherRoot)) },
    { name: 'working tree', file: program('working', ourProgram('.')) },
    { name: 'plain grpc-js', file: program('plain', PLAIN_PROGRAM) },
  ];
  const results = new Map<string, Run[]>(arms.map((arm) => [arm.name, []]));
  const profiles = new Map<string, Map<string, number>>(arms.map((arm) => [arm.name, new Map()]));
  for (let r = 0; r < runs; r++) {
    for (const [i, arm] of (r % 2 === 0 ? arms : [...arms].reverse()).entries()) {
      const profileDir = join(dir, `profile-${r}-${i}`);
      const nodeArgs = [...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '--cpu-prof-interval=100'] : []), '--import', 'tsx'];
      const run = JSON.parse(
        execFileSync(process.execPath, [...nodeArgs, arm.file, driver.address, String(n), String(bursts)], { encoding: 'utf8', timeout: 120_000 }),
      ) as Run;
      results.get(arm.name)!.push(run);
      if (profile) {
        const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'))!;
        const [fromUs, toUs] = run.windowsUs[0]!;
        addWindow(profiles.get(arm.name)!, JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as CpuProfile, fromUs, toUs);
      }
    }
  }
  for (const [name, rs] of results) {
    // Up to 5 bursts each on its own; more: the first, and the median of the rest (warm).
    const perBurst = (pick: (r: Run) => number[]) =>
      bursts <= 5
        ? Array.from({ length: bursts }, (_, b) => median(rs.map((r) => pick(r)[b]!)).toFixed(1)).join(' / ')
        : `${median(rs.map((r) => pick(r)[0]!)).toFixed(1)} / ${median(rs.flatMap((r) => pick(r).slice(1))).toFixed(1)}`;
    const which = bursts <= 5 ? `bursts 1..${bursts}` : `first burst / median of bursts 2..${bursts}`;
    process.stdout.write(
      `${name}: ${n} concurrent ${driverError ? 'expands failed by the driver' : 'calls'}, ${which}: wall ${perBurst((r) => r.wallMs)} ms, CPU ${perBurst((r) => r.cpuMs)} ms (median of ${rs.length} runs)\n`,
    );
  }
  if (profile) {
    for (const [name, byPackage] of profiles) {
      const top = [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 16);
      process.stdout.write(`\n${name}, first burst, profile ms per run by package:\n`);
      for (const [pkg, us] of top) process.stdout.write(`  ${(us / 1000 / runs).toFixed(1).padStart(6)}  ${pkg}\n`);
    }
  }
} finally {
  await driver.stop();
  rmSync(dir, { recursive: true, force: true });
}
