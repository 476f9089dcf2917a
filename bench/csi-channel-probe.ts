// Probe (not part of `npm run bench`): the client CPU of one CSI call through GrpcCsiClient as the
// working tree has it and as another tree has it (e.g. the hand-written channel before it was
// replaced), side by side in one process against the grpc-go mock driver. Each round runs CALLS
// calls at CONCURRENCY per tree, the trees alternating; the median per tree is printed. Bounded:
// rounds x 2 x CALLS calls. Run (needs the built components):
//   git archive main src | tar -x -C bench/.build/old   # the other tree, inside the repository
//   node --import tsx bench/csi-channel-probe.ts bench/.build/old [calls] [concurrency] [rounds]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startMockDriver } from '../test/cluster/mock-driver.js';

const [otherRoot, callsArg = '2000', concurrencyArg = '10', roundsArg = '5'] = process.argv.slice(2);
if (!otherRoot) throw new Error('usage: csi-channel-probe.ts OTHER_ROOT [calls] [concurrency] [rounds]');
const [calls, concurrency, rounds] = [callsArg, concurrencyArg, roundsArg].map(Number) as [number, number, number];

interface Tree {
  name: string;
  client: { getControllerCapabilities(signal: AbortSignal): Promise<unknown>; close(): void };
}

async function load(root: string, name: string, address: string): Promise<Tree> {
  const url = (p: string) => pathToFileURL(resolve(root, p)).href;
  const { GrpcCsiClient } = await import(url('src/csi/client.ts'));
  const { createMetrics } = await import(url('src/observability/metrics.ts'));
  const { silentLogger } = await import(url('src/observability/logger.ts'));
  const client = await GrpcCsiClient.start({ address, timeoutMs: 10_000, log: silentLogger, metrics: createMetrics() }, new AbortController().signal);
  return { name, client };
}

async function round(tree: Tree): Promise<number> {
  const signal = new AbortController().signal;
  let next = 0;
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < calls) await tree.client.getControllerCapabilities(signal);
  }));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const driver = await startMockDriver();
try {
  const trees = [await load(otherRoot, `other (${otherRoot})`, driver.address), await load('.', 'working tree', driver.address)];
  for (const tree of trees) await round(tree); // warm-up
  const perCall = new Map<string, number[]>(trees.map((t) => [t.name, []]));
  for (let r = 0; r < rounds; r++) for (const tree of r % 2 === 0 ? trees : [...trees].reverse()) perCall.get(tree.name)!.push(await round(tree));
  for (const [name, xs] of perCall) process.stdout.write(`${name}: median ${median(xs).toFixed(1)} µs client CPU per call (rounds: ${xs.map((x) => x.toFixed(1)).join(' ')})\n`);
  for (const tree of trees) tree.client.close();
} finally {
  await driver.stop();
}
