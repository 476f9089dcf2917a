// What the audit-log probes share (bench/startup-audit-probe.ts, bench/latency-audit-probe.ts): a
// local cluster whose API server audits every request at the Metadata level, one bound claim of
// the cluster's driver with a watch on it, and the audit log read back with µs timestamps.
import { readFileSync } from 'node:fs';
import { startCluster, type Cluster } from '../../test/cluster/cluster.js';
import { RESIZER_USER } from '../../test/cluster/pki.js';
import { Api, sleep } from './api.js';
import type { ResizerTargets } from './resizer.js';
import { createNamespace, ensureStorageClass, provisionBulk, Tracker } from './workload.js';

export interface AuditLine {
  verb: string;
  requestURI: string;
  user: { username: string };
  stage: string;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
}

/** An audit timestamp (RFC 3339 with µs) as ms since the epoch, the µs kept as the fraction. */
export function auditMs(t: string): number {
  return Date.parse(t) + Number(/\.\d{3}(\d{3})Z$/.exec(t)?.[1] ?? '0') / 1000;
}

/** True for a request the resizer under test made. */
export const byResizer = (a: AuditLine): boolean => a.user.username === RESIZER_USER;

export interface OneClaim {
  cluster: Cluster;
  api: Api;
  pvcPath: string;
  pvc: string;
  tracker: Tracker;
  targets: ResizerTargets;
  /** Every line of the audit log so far. */
  auditLines(): AuditLine[];
  stop(): Promise<void>;
}

/** A cluster with the audit log on and one bound 1 Gi claim in namespace `ns`, watched. */
export async function startOneClaim(ns: string, oursEntry: string, upstreamBin: string): Promise<OneClaim> {
  const cluster = await startCluster({ auditPolicy: JSON.stringify({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', rules: [{ level: 'Metadata' }] }) });
  const api = new Api(cluster.adminKubeconfigPath, { maxSockets: 4 });
  let tracker: Tracker | undefined;
  const stop = async () => {
    tracker?.stop();
    api.close();
    await cluster.stop({ keepLogs: false });
  };
  try {
    await ensureStorageClass(api, ns, cluster.driverName);
    await sleep(1500); // the resize admission plugin reads StorageClasses from an informer
    await createNamespace(api, ns);
    const [volume] = await provisionBulk(api, {
      ns,
      sizeGi: 1,
      storageClass: ns,
      driverName: cluster.driverName,
      csi: { protoPath: cluster.driver.protoPath, address: cluster.csiAddress },
      concurrency: 1,
      deadlineMs: 60_000,
      count: 1,
      prefix: 'vol',
    });
    tracker = await Tracker.start(api, ns);
    return {
      cluster,
      api,
      tracker,
      pvc: volume!.pvc,
      pvcPath: `/api/v1/namespaces/${ns}/persistentvolumeclaims/${volume!.pvc}`,
      targets: { kubeconfig: cluster.resizerKubeconfigPath, csiAddress: cluster.csiAddress, oursEntry, upstreamBin, logDir: cluster.dir },
      auditLines: () =>
        readFileSync(cluster.auditLogPath!, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as AuditLine),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Appends `v` to `key`'s samples. */
export function addSample(samples: Map<string, number[]>, key: string, v: number): void {
  const list = samples.get(key);
  if (list) list.push(v);
  else samples.set(key, [v]);
}

/** Per implementation, each key's median and count, in order of the medians. */
export function printMedians(samples: Map<string, number[]>, impls: readonly string[], digits: number): void {
  for (const impl of impls) {
    process.stdout.write(`== ${impl}\n`);
    const mine = [...samples].filter(([k]) => k.startsWith(`${impl} `)).sort((a, b) => median(a[1]) - median(b[1]));
    for (const [key, v] of mine) {
      process.stdout.write(`${median(v).toFixed(digits).padStart(8)} ms  n=${String(v.length).padStart(3)}  ${key.slice(impl.length + 1)}\n`);
    }
  }
}
