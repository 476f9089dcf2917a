// What upstream's maintainers feared of a node-local resizer: N replicas, each watching every PVC
// and PV. One local control plane, R Node objects, N bound claims whose PVs select one node each
// (round-robin), and our resizer run twice over the same claims: once as one central replica,
// once as R replicas with --node-deployment (one per node, as a DaemonSet would run them). For
// each: memory per replica after the caches synced, the watches the API server holds for the
// resizer, the requests it sent (start-up and per resize, from the audit log), the time to grow
// all N at once, CPU over that burst, and single-resize latency. All replicas use the one CSI
// mock driver socket (node scoping is by node affinity, not by socket).
//
// Before any claim exists, one node replica (the first node's) runs alone in the otherwise empty
// cluster and is measured the same way (its node's canary grown, then RSS after the same settling
// time): what a node replica costs when it holds nothing, against which the node replicas' RSS with
// N claims in the cluster is compared. --pods P adds P pods mounting the claims round-robin, each
// placed on its claim's node (spec.nodeName; no kubelet runs them).
//
//   npm run bench:node-local                        # R 20, N 2000
//   npx tsx bench/node-local.ts --replicas 5 --n 200
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startCluster } from '../test/cluster/cluster.js';
import { repoRoot } from '../test/cluster/components.js';
import { clientsFromKubeconfig } from '../test/cluster/kube.js';
import { applyRbac } from '../test/cluster/rbac.js';
import { spawnLogged, type Managed } from '../test/cluster/process.js';
import { Api, pool, sleep } from './lib/api.js';
import { AUDIT_POLICY, AuditReader } from './lib/audit.js';
import { median } from './lib/figures.js';
import { readProc, sidecarEnv } from './lib/resizer.js';
import { NODE_FLAGS } from '../scripts/node-flags.js';
import { createNamespace, createPods, ensureStorageClass, growAll, GI, provisionBulk, teardown, Tracker, type Volume } from './lib/workload.js';

interface Options {
  replicas: number;
  n: number;
  qps: number;
  burst: number;
  latencySamples: number;
  concurrency: number;
  pods: number;
  oursEntry: string;
  out: string;
}

function intFlag(v: string | undefined, def: number, min: number, max: number, name: string): number {
  if (v === undefined) return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer in [${min}, ${max}]`);
  return n;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      replicas: { type: 'string' },
      n: { type: 'string' },
      qps: { type: 'string' },
      burst: { type: 'string' },
      'latency-samples': { type: 'string' },
      concurrency: { type: 'string' },
      pods: { type: 'string' },
      'ours-entry': { type: 'string' },
      out: { type: 'string' },
    },
  });
  return {
    replicas: intFlag(values.replicas, 20, 1, 50, 'replicas'),
    n: intFlag(values.n, 2000, 1, 10_000, 'n'),
    qps: intFlag(values.qps, 200, 1, 1000, 'qps'),
    burst: intFlag(values.burst, 400, 1, 2000, 'burst'),
    latencySamples: intFlag(values['latency-samples'], 5, 1, 50, 'latency-samples'),
    concurrency: intFlag(values.concurrency, 16, 1, 64, 'concurrency'),
    pods: intFlag(values.pods, 0, 0, 100_000, 'pods'),
    oursEntry: values['ours-entry'] ?? join(repoRoot, 'dist', 'main.js'),
    out: values.out ?? join(repoRoot, 'bench', 'results', `node-local-${new Date().toISOString().slice(0, 10)}.json`),
  };
}

const log = (line: string) => process.stderr.write(`[node-local] ${line}\n`);

/** Sum of the API server's open WATCH requests (all clients; the harness's own are subtracted by the caller). */
async function openWatches(api: Api): Promise<number> {
  const text = await api.callText('/metrics');
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_longrunning_requests{') || !line.includes('verb="WATCH"')) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

interface Mode {
  name: string;
  procs: Managed[];
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  if (!existsSync(o.oursEntry)) throw new Error(`${o.oursEntry} does not exist: run npm run build first`);
  const started = Date.now();
  const cluster = await startCluster({ auditPolicy: AUDIT_POLICY, progress: (l) => log(`cluster: ${l}`) });
  const logDir = mkdtempSync(join(cluster.dir, 'resizers-'));
  const api = new Api(cluster.adminKubeconfigPath, { maxSockets: o.concurrency });
  const audit = new AuditReader(cluster.auditLogPath!);
  const ns = 'bench-node-local';
  /** Central and node columns; null where a figure has no central counterpart. */
  const rows: Array<{ figure: string; unit: string; central: number | null; node: number }> = [];
  const add = (figure: string, unit: string, central: number | null, node: number) => rows.push({ figure, unit, central, node });
  let emptyRssMiB = NaN;
  let failed: unknown;
  try {
    await applyRbac(clientsFromKubeconfig(cluster.adminKubeconfigPath), join(repoRoot, 'deploy', 'kubernetes', 'node-local', 'rbac-node.yaml'));
    await ensureStorageClass(api, 'bench-expandable', cluster.driverName);
    const nodes = Array.from({ length: o.replicas }, (_, i) => `bench-node-${i}`);
    await pool(nodes, o.concurrency, async (name) => {
      await api.callRetry('POST', '/api/v1/nodes', { metadata: { name, labels: { 'kubernetes.io/hostname': name } } });
    });
    await createNamespace(api, ns);
    const common = {
      ns,
      sizeGi: 1,
      storageClass: 'bench-expandable',
      driverName: cluster.driverName,
      csi: { protoPath: cluster.driver.protoPath, address: cluster.csiAddress },
      concurrency: o.concurrency,
      deadlineMs: 30 * 60_000,
      nodeOf: (i: number) => nodes[i % nodes.length]!,
    };
    const args = [
      `--kubeconfig=${cluster.resizerKubeconfigPath}`,
      `--csi-address=${cluster.csiAddress}`,
      '--leader-election=false',
      `--kube-api-qps=${o.qps}`,
      `--kube-api-burst=${o.burst}`,
      '--v=1',
    ];
    // Started as the image starts it: its node flags and environment.
    const nodeArgv = (entryArgs: string[]) => [...NODE_FLAGS, ...(o.oursEntry.endsWith('.ts') ? ['--import', 'tsx'] : []), o.oursEntry, ...entryArgs];
    const nodeReplica = (name: string, logName = name) =>
      spawnLogged({
        name: `csi-resizer ${logName}`,
        command: process.execPath,
        args: nodeArgv([...args, '--node-deployment']),
        env: sidecarEnv('ours', { NODE_NAME: name }),
        logPath: join(logDir, `${logName}.log`),
      });
    const tracker = await Tracker.start(api, ns);
    await sleep(1500); // the resize admission plugin's StorageClass informer

    // The first node's replica alone in the empty cluster: started before any claim exists; its
    // node's canary, made after the start, is grown to show that it has synced and works.
    const firstCanary = await (async () => {
      const proc = nodeReplica(nodes[0]!, `${nodes[0]}-empty`);
      try {
        const [canary] = await provisionBulk(api, { ...common, count: 1, prefix: 'canary-first', nodeOf: () => nodes[0]! });
        await growAll(api, ns, [canary!.pvc], 2, o.concurrency);
        await tracker.waitAll([canary!.pvc], 2n * GI, 10 * 60_000);
        await sleep(3000); // the same settling time as below
        emptyRssMiB = readProc(proc.pid).rssKiB / 1024;
        log(`${nodes[0]} alone in the empty cluster: rss ${emptyRssMiB.toFixed(1)} MiB`);
        return canary!;
      } finally {
        await proc.stop(15_000);
      }
    })();

    const t0 = Date.now();
    // One canary per node: all of them final means every replica has synced and works.
    const canaries = [firstCanary, ...(await provisionBulk(api, { ...common, count: o.replicas - 1, prefix: 'canary', nodeOf: (i) => nodes[i + 1]! }))];
    const volumes: Volume[] = await provisionBulk(api, { ...common, count: o.n, prefix: 'vol', progress: (d) => log(`${d}/${o.n} volumes`) });
    if (o.pods > 0) {
      // Pod i mounts claim i mod N, which is on node (i mod N) mod R.
      await createPods(api, {
        ns,
        count: o.pods,
        prefix: 'pod',
        claims: volumes.map((v) => v.pvc),
        concurrency: o.concurrency,
        deadlineMs: 30 * 60_000,
        nodeOf: (i) => common.nodeOf(i % o.n),
      });
    }
    log(
      `${o.n} volumes, ${o.pods} pods and ${o.replicas} canaries on ${o.replicas} nodes provisioned in ${((Date.now() - t0) / 1000).toFixed(0)}s (not timed)`,
    );
    const baseWatches = await openWatches(api);
    let sizeGi = 1;
    let canaryGi = 2; // the first canary is at 2Gi already, the others at 1Gi

    const measure = async (mode: 'central' | 'node') => {
      audit.skipToEnd();
      const spawnAt = Date.now();
      const procs: Managed[] =
        mode === 'central'
          ? [
              spawnLogged({
                name: 'csi-resizer central',
                command: process.execPath,
                args: nodeArgv(args),
                env: sidecarEnv('ours'),
                logPath: join(logDir, 'central.log'),
              }),
            ]
          : nodes.map((name) => nodeReplica(name));
      const m: Mode = { name: mode, procs };
      try {
        canaryGi += 1;
        await growAll(
          api,
          ns,
          canaries.map((c) => c.pvc),
          canaryGi,
          o.concurrency,
        );
        await tracker.waitAll(
          canaries.map((c) => c.pvc),
          BigInt(canaryGi) * GI,
          10 * 60_000,
        );
        const syncedS = (Date.now() - spawnAt) / 1000;
        await sleep(3000); // let RSS settle after the initial lists
        audit.poll();
        const startupRequests = audit.countBetween(spawnAt, Date.now()).total;
        const rss = m.procs.map((p) => readProc(p.pid).rssKiB / 1024);
        const watches = (await openWatches(api)) - baseWatches;
        const cpuBefore = m.procs.reduce((s, p) => s + readProc(p.pid).cpuSeconds, 0);

        sizeGi += 1;
        const burstStart = Date.now();
        const t = performance.now();
        await growAll(
          api,
          ns,
          volumes.map((v) => v.pvc),
          sizeGi,
          o.concurrency,
        );
        const states = await tracker.waitAll(
          volumes.map((v) => v.pvc),
          BigInt(sizeGi) * GI,
          30 * 60_000,
        );
        const allFinalS = (Math.max(...states.map((s) => Math.max(s.pvAt, s.pvcAt))) - t) / 1000;
        const cpu = m.procs.reduce((s, p) => s + readProc(p.pid).cpuSeconds, 0) - cpuBefore;
        await sleep(2000);
        audit.poll();
        const burstRequests = audit.countBetween(burstStart, Date.now()).total;
        const peak = m.procs.map((p) => readProc(p.pid).hwmKiB / 1024);

        // Single resizes on the idle resizer(s): edit to PVC final.
        const latencies: number[] = [];
        for (let i = 0; i < o.latencySamples; i++) {
          const v = volumes[i % volumes.length]!;
          const target = sizeGi + 1;
          const l0 = performance.now();
          await api.mergePatch(`/api/v1/namespaces/${ns}/persistentvolumeclaims/${v.pvc}`, { spec: { resources: { requests: { storage: `${target}Gi` } } } });
          const [st] = await tracker.waitAll([v.pvc], BigInt(target) * GI, 60_000);
          latencies.push(Math.max(st!.pvAt, st!.pvcAt) - l0);
          await sleep(500);
        }
        sizeGi += 1; // the sampled claims are one size ahead; the next burst passes them
        log(
          `${mode}: synced in ${syncedS.toFixed(1)}s, ${o.n} resizes in ${allFinalS.toFixed(1)}s, cpu ${cpu.toFixed(1)}s, watches ${watches}, rss median ${median(rss).toFixed(0)} MiB`,
        );
        return { syncedS, startupRequests, rss, watches, cpu, allFinalS, burstRequests, peak, latencies };
      } finally {
        await Promise.all(m.procs.map((p) => p.stop(15_000)));
      }
    };

    const central = await measure('central');
    const node = await measure('node');
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    add('replicas', '', 1, o.replicas);
    add('start to every replica synced', 's', central.syncedS, node.syncedS);
    add('RSS per replica after sync, median', 'MiB', median(central.rss), median(node.rss));
    add('RSS per replica after sync, max', 'MiB', Math.max(...central.rss), Math.max(...node.rss));
    add(`RSS of the ${nodes[0]} replica after sync, alone in the empty cluster`, 'MiB', null, emptyRssMiB);
    add(`RSS of the ${nodes[0]} replica after sync, with the ${o.n} claims`, 'MiB', null, node.rss[0]!);
    add('RSS per node replica after sync / the empty-cluster replica, median', '', null, median(node.rss) / emptyRssMiB);
    add('RSS per node replica after sync / the empty-cluster replica, max', '', null, Math.max(...node.rss) / emptyRssMiB);
    add('RSS, all replicas', 'MiB', sum(central.rss), sum(node.rss));
    add('peak RSS, all replicas', 'MiB', sum(central.peak), sum(node.peak));
    add('API server watches held for the resizer(s)', '', central.watches, node.watches);
    add('requests at start-up (lists, watches, ...)', 'req', central.startupRequests, node.startupRequests);
    add(`time to all ${o.n} final`, 's', central.allFinalS, node.allFinalS);
    add('requests per resize', 'req', central.burstRequests / o.n, node.burstRequests / o.n);
    add('CPU over the burst, all replicas', 'cpu-s', central.cpu, node.cpu);
    add('single resize, edit to final, median', 'ms', median(central.latencies), median(node.latencies));
    add('single resize, edit to final, max', 'ms', Math.max(...central.latencies), Math.max(...node.latencies));
    tracker.stop();
  } catch (err) {
    failed = err;
    log(`FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    log(`resizer logs kept in ${logDir}`);
  } finally {
    await teardown(api, ns, { concurrency: o.concurrency, deadlineMs: 10 * 60_000 }).catch(() => {});
    api.close();
    await cluster.stop({ keepLogs: failed !== undefined });
  }

  const fmt = (v: number | null) => (v === null ? '-' : Number.isInteger(v) ? String(v) : v.toFixed(v < 10 ? 2 : 1));
  const lines = [
    `| figure | one central resizer | ${o.replicas} node replicas |`,
    '|---|---|---|',
    ...rows.map((r) => `| ${r.figure}${r.unit ? ` (${r.unit})` : ''} | ${fmt(r.central)} | ${fmt(r.node)} |`),
  ];
  process.stdout.write(`machine: ${cpus()[0]?.model ?? '?'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB; node ${process.version}\n`);
  process.stdout.write(`settings: N ${o.n}, ${o.pods} pods, ${o.replicas} nodes, QPS ${o.qps}/${o.burst} per replica\n\n${lines.join('\n')}\n`);
  mkdirSync(join(repoRoot, 'bench', 'results'), { recursive: true });
  writeFileSync(
    o.out,
    `${JSON.stringify(
      {
        command: `tsx bench/node-local.ts ${process.argv.slice(2).join(' ')}`.trim(),
        date: new Date().toISOString(),
        durationS: Math.round((Date.now() - started) / 1000),
        settings: o,
        complete: failed === undefined,
        rows,
      },
      null,
      2,
    )}\n`,
  );
  process.stdout.write(`\nwritten to ${o.out}\n`);
  if (failed !== undefined) process.exitCode = 1;
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));
main().catch((err: unknown) => {
  process.stderr.write(`[node-local] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
