// Where a --node-deployment replica's memory goes (a diagnostic beside bench/node-local.ts): one
// local control plane, R Node objects, the first node's replica started in the empty cluster, then
// N claims spread over the nodes (and P pods on their claims' nodes) and the replica started again,
// each given entry point (e.g. the build before a change and after it) alternating per round. Each
// sample is taken as bench/node-local.ts takes its RSS (the node's canary grown, 3 s to settle),
// then: RSS by mapping (/proc/PID/smaps), V8's heap before and after one full GC (read through a
// preloaded module on SIGUSR2; it needs --expose-gc, so these processes' flags differ from what
// ships by that flag). --mode central starts the replicas without --node-deployment (no empty
// samples then).
//
//   node --import tsx bench/probes/node-local-heap-probe.ts --entries dist/main.js,bench/.build/snap/dist/main.js --n 2000 --rounds 2
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startCluster } from '../../test/cluster/cluster.js';
import { repoRoot } from '../../test/cluster/components.js';
import { clientsFromKubeconfig } from '../../test/cluster/kube.js';
import { applyRbac } from '../../test/cluster/rbac.js';
import { spawnLogged } from '../../test/cluster/process.js';
import { NODE_FLAGS } from '../../scripts/node-flags.js';
import { Api, pool, sleep } from '../lib/api.js';
import { readProc, sidecarEnv } from '../lib/resizer.js';
import { createNamespace, createPods, ensureStorageClass, GI, growAll, provisionBulk, teardown, Tracker } from '../lib/workload.js';
import { rssByMapping } from './rss-by-mapping.js';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: join(repoRoot, 'dist', 'main.js') },
    mode: { type: 'string', default: 'node' },
    n: { type: 'string', default: '2000' },
    pods: { type: 'string', default: '0' },
    replicas: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '2' },
    out: { type: 'string' },
  },
});
const entries = values.entries!.split(',').map((e) => resolve(e));
const central = values.mode === 'central';
const [n, pods, replicas, rounds] = [values.n, values.pods, values.replicas, values.rounds].map(Number) as [number, number, number, number];
for (const e of entries) if (!existsSync(e)) throw new Error(`${e} does not exist`);
const log = (l: string) => process.stderr.write(`[heap-probe] ${l}\n`);
const diagDir = mkdtempSync('/tmp/node-local-heap-');
const preload = join(diagDir, 'heap-on-signal.mjs');
writeFileSync(
  preload,
  `import v8 from 'node:v8'; import { writeFileSync } from 'node:fs';
const reading = () => ({ heap: v8.getHeapStatistics(), spaces: v8.getHeapSpaceStatistics(), mem: process.memoryUsage() });
process.on('SIGUSR2', () => { const before = reading(); globalThis.gc(); writeFileSync('${diagDir}/heap-' + process.pid + '.json', JSON.stringify({ before, after: reading() })); });\n`,
);

const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

async function sample(pid: number): Promise<Record<string, unknown>> {
  const rssMiB = readProc(pid).rssKiB / 1024;
  const mappings = rssByMapping(pid);
  const file = join(diagDir, `heap-${pid}.json`);
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 50 && !existsSync(file); i++) await sleep(100);
  const { before, after } = JSON.parse(readFileSync(file, 'utf8'));
  const spaces = (s: Array<{ space_name: string; space_used_size: number; space_size: number }>) =>
    Object.fromEntries(s.filter((x) => x.space_size > 0).map((x) => [x.space_name, `${mib(x.space_used_size)}/${mib(x.space_size)}`]));
  return {
    rssMiB: Math.round(rssMiB * 10) / 10,
    mappings,
    v8: {
      heapTotalMiB: mib(before.heap.total_heap_size),
      usedMiB: mib(before.heap.used_heap_size),
      externalMiB: mib(before.mem.external),
      spaces: spaces(before.spaces),
    },
    afterFullGc: { usedMiB: mib(after.heap.used_heap_size), rssMiB: Math.round((readProc(pid).rssKiB / 1024) * 10) / 10 },
  };
}

const cluster = await startCluster({ progress: (l) => log(l) });
const api = new Api(cluster.adminKubeconfigPath, { maxSockets: 16 });
const ns = 'bench-node-local-heap';
const samples: Array<Record<string, unknown>> = [];
let tracker: Tracker | undefined;
try {
  await applyRbac(clientsFromKubeconfig(cluster.adminKubeconfigPath), join(repoRoot, 'deploy', 'kubernetes', 'node-local', 'rbac-node.yaml'));
  await ensureStorageClass(api, 'bench-expandable', cluster.driverName);
  const nodes = Array.from({ length: replicas }, (_, i) => `bench-node-${i}`);
  await pool(nodes, 16, async (name) => {
    await api.callRetry('POST', '/api/v1/nodes', { metadata: { name, labels: { 'kubernetes.io/hostname': name } } });
  });
  await createNamespace(api, ns);
  const common = {
    ns,
    sizeGi: 1,
    storageClass: 'bench-expandable',
    driverName: cluster.driverName,
    concurrency: 16,
    deadlineMs: 30 * 60_000,
    csi: { protoPath: cluster.driver.protoPath, address: cluster.csiAddress },
    nodeOf: (i: number) => nodes[i % nodes.length]!,
  };
  tracker = await Tracker.start(api, ns);
  await sleep(1500); // the resize admission plugin's StorageClass informer
  const [canary] = await provisionBulk(api, { ...common, count: 1, prefix: 'canary', nodeOf: () => nodes[0]! });
  let canaryGi = 1;
  const args = [
    `--kubeconfig=${cluster.resizerKubeconfigPath}`,
    `--csi-address=${cluster.csiAddress}`,
    '--leader-election=false',
    '--kube-api-qps=200',
    '--kube-api-burst=400',
    '--v=1',
    ...(central ? [] : ['--node-deployment']),
  ];
  const measure = async (cluster: 'empty' | 'full', round: number, entry: string) => {
    const proc = spawnLogged({
      name: `csi-resizer ${cluster}`,
      command: process.execPath,
      args: [...NODE_FLAGS, '--expose-gc', '--import', preload, entry, ...args],
      env: sidecarEnv('ours', { NODE_NAME: nodes[0] }),
      logPath: join(diagDir, `${cluster}-${round}-${samples.length}.log`),
    });
    try {
      canaryGi += 1;
      await growAll(api, ns, [canary!.pvc], canaryGi, 1);
      await tracker!.waitAll([canary!.pvc], BigInt(canaryGi) * GI, 5 * 60_000);
      await sleep(3000); // as bench/node-local.ts
      const s: Record<string, unknown> = { cluster, round, entry, ...(await sample(proc.pid)) };
      log(`${cluster} ${entry}: rss ${String(s.rssMiB)} MiB`);
      samples.push(s);
    } finally {
      await proc.stop(15_000);
    }
  };
  if (!central) for (const [i, entry] of entries.entries()) await measure('empty', i, entry);
  const volumes = await provisionBulk(api, { ...common, count: n, prefix: 'vol', progress: (d) => log(`${d}/${n} volumes`) });
  if (pods > 0) {
    await createPods(api, {
      ns,
      count: pods,
      prefix: 'pod',
      claims: volumes.map((v) => v.pvc),
      concurrency: 16,
      deadlineMs: 30 * 60_000,
      nodeOf: (i) => common.nodeOf(i % n),
    });
  }
  for (let round = 0; round < rounds; round++) {
    for (const entry of round % 2 === 0 ? entries : [...entries].reverse()) await measure('full', round, entry);
  }
} finally {
  tracker?.stop();
  await teardown(api, ns, { concurrency: 16, deadlineMs: 10 * 60_000 }).catch(() => {});
  api.close();
  await cluster.stop({ keepLogs: false });
}
const result = `${JSON.stringify(
  {
    command: `tsx bench/probes/node-local-heap-probe.ts ${process.argv.slice(2).join(' ')}`.trim(),
    date: new Date().toISOString(),
    settings: { entries, mode: values.mode, n, pods, replicas, rounds },
    samples,
  },
  null,
  2,
)}\n`;
if (values.out) writeFileSync(values.out, result);
else process.stdout.write(result);
