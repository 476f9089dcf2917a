// `npm run demo`: the resizer end to end on a local control plane, in about a minute once the
// components are built. It starts etcd, kube-apiserver and two CSI mock drivers (one that needs
// node expansion), creates bound PVCs, runs our `csi-resizer` command against each driver with
// the RBAC manifest's identity, grows the PVCs, and prints one line per state change:
//
//   grow       grows in the controller and is done;
//   node       grows in the controller, then waits for kubelet (there is no node here);
//   backfill   is refused: its backend volume was grown to 5Gi out of band, so asking for 2Gi is a
//              shrink for the driver (InvalidArgument → ControllerResizeInfeasible); the demo
//              then asks for 6Gi, which the reference allows after an infeasible attempt, and it
//              finishes.
//
// Everything it started is stopped at the end (and on Ctrl-C).
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { startCluster, freePort, type Cluster } from '../test/cluster/cluster.js';
import { csiTestClient } from '../test/cluster/csi-proto.js';
import { createStorageClass, provisionVolume, quantityBytes, requestPvcSize, type Provisioned } from '../test/cluster/fixtures.js';
import { clientsFromKubeconfig, retryWhileStarting } from '../test/cluster/kube.js';
import { startMockDriver, type MockDriver } from '../test/cluster/mock-driver.js';
import { CliProcess } from '../test/integration/cli-harness.js';
import { resizeProgress } from '../src/model/claim-state.js';
import type { Pvc } from '../src/model/objects.js';

const t0 = Date.now();
const elapsed = (from = t0) => `${((Date.now() - from) / 1000).toFixed(1)}s`;
const say = (line: string) => process.stdout.write(`${line}\n`);
const step = (line: string) => say(`\n[${elapsed().padStart(6)}] ${line}`);

const NAMESPACE = 'demo';
const NODE_DRIVER = 'node.mock.csi.k8s.io';

const cleanups: Array<() => Promise<void>> = [];
let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    while (cleanups.length > 0) await cleanups.pop()!().catch((err: unknown) => say(`  cleanup: ${String(err)}`));
  })();
  return cleaning;
}
process.once('SIGINT', () => {
  say('\ninterrupted; stopping everything the demo started');
  void cleanup().then(() => process.exit(130));
});

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The state the resizer's own gauge would report for this PVC, plus what the API shows. */
function describe(pvc: Pvc): { state: string; requested: string; allocated: string; capacity: string; detail: string } {
  // No unfinished resize: 'done' after one, 'idle' before any.
  const state = resizeProgress(pvc)?.state ?? (pvc.status?.allocatedResources?.['storage'] ? 'done' : 'idle');
  const status = pvc.status?.allocatedResourceStatuses?.['storage'];
  const conditions = (pvc.status?.conditions ?? []).filter((c) => c.status === 'True').map((c) => c.type);
  return {
    state,
    requested: pvc.spec.resources?.requests?.['storage'] ?? '-',
    allocated: pvc.status?.allocatedResources?.['storage'] ?? '-',
    capacity: pvc.status?.capacity?.['storage'] ?? '-',
    detail: [status, conditions.length ? `conditions: ${conditions.join(',')}` : ''].filter(Boolean).join('; '),
  };
}

async function main(): Promise<void> {
  step('starting the local control plane (etcd, kube-apiserver) and the CSI mock driver');
  const cluster: Cluster = await startCluster({ progress: (line) => say(`           ${line}`) });
  cleanups.push(() => cluster.stop());
  say(`           ready in ${(cluster.startupMs / 1000).toFixed(1)}s — API ${cluster.apiUrl}`);

  step(`starting a second CSI mock driver, ${NODE_DRIVER}, that requires node expansion`);
  const nodeDriver: MockDriver = await startMockDriver({ name: NODE_DRIVER, nodeExpansionRequired: true });
  cleanups.push(() => nodeDriver.stop());

  const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);
  step(`creating namespace "${NAMESPACE}", two StorageClasses and three bound 1Gi PVCs`);
  await retryWhileStarting('creating the namespace', () => admin.core.createNamespace({ body: { metadata: { name: NAMESPACE } } }));
  const [scMain, scNode] = await Promise.all([
    createStorageClass(admin, { name: 'demo-controller', provisioner: cluster.driverName, allowVolumeExpansion: true }),
    createStorageClass(admin, { name: 'demo-node', provisioner: NODE_DRIVER, allowVolumeExpansion: true }),
  ]);
  const provision = (driver: string, address: string, sc: k8s.V1StorageClass) =>
    provisionVolume(admin, address, {
      namespace: NAMESPACE,
      size: '1Gi',
      storageClassName: sc.metadata!.name!,
      driverName: driver,
      csiProtoPath: cluster.driver.protoPath,
    });
  const [grow, node, backfill] = await Promise.all([
    provision(cluster.driverName, cluster.csiAddress, scMain),
    provision(NODE_DRIVER, nodeDriver.address, scNode),
    provision(cluster.driverName, cluster.csiAddress, scMain),
  ]);
  const names = new Map<string, string>([
    [grow.pvc.metadata!.name!, 'grow'],
    [node.pvc.metadata!.name!, 'node'],
    [backfill.pvc.metadata!.name!, 'backfill'],
  ]);
  for (const [real, label] of names) say(`           ${label.padEnd(9)} = PVC ${NAMESPACE}/${real}`);
  const csi = csiTestClient(cluster.driver.protoPath, cluster.csiAddress);
  await csi.call('Controller', 'ControllerExpandVolume', { volume_id: backfill.volumeId, capacity_range: { required_bytes: quantityBytes('5Gi').toString() } });
  csi.close();
  say("           backfill: its backend volume was grown to 5Gi behind Kubernetes' back");

  step('starting our csi-resizer, one per driver (the real command, RBAC identity from deploy/kubernetes/rbac.yaml)');
  const logDir = mkdtempSync('/tmp/rz-demo-');
  const resizers: Array<{ name: string; proc: CliProcess; port: number }> = [];
  for (const [driver, address] of [
    [cluster.driverName, cluster.csiAddress],
    [NODE_DRIVER, nodeDriver.address],
  ] as const) {
    const port = await freePort();
    const logPath = join(logDir, `csi-resizer-${driver}.log`);
    const proc = new CliProcess(
      [
        `--kubeconfig=${cluster.resizerKubeconfigPath}`,
        `--csi-address=${address}`,
        `--http-endpoint=127.0.0.1:${port}`,
        '--leader-election',
        '--leader-election-namespace=default',
        '--v=2',
        '--retry-interval-start=500ms',
      ],
      { logPath, env: { CSI_RESIZER_LEADER_ELECTION_IDENTITY: `demo-${driver}` } },
    );
    cleanups.push(async () => {
      proc.kill('SIGTERM');
      const exit = await proc.exited;
      say(`           csi-resizer for ${driver} stopped on SIGTERM: ${exit.code === null ? `signal ${exit.signal}` : `exit ${exit.code}`}`);
    });
    resizers.push({ name: driver, proc, port });
    say(`           ${driver}: pid ${proc.pid}, metrics http://127.0.0.1:${port}/metrics, log ${logPath}`);
  }
  await Promise.all(resizers.map((r) => r.proc.waitForLog(/"Starting external resizer"/, 120_000)));
  say(`           both resizers lead their Lease and watch PVCs (${elapsed()})`);

  // One line per change of any PVC in the namespace.
  const last = new Map<string, string>();
  const changes = new Map<string, number>();
  const watchStart = Date.now();
  const poll = async () => {
    const list = await admin.core.listNamespacedPersistentVolumeClaim({ namespace: NAMESPACE });
    for (const pvc of list.items as unknown as Pvc[]) {
      const label = names.get(pvc.metadata.name) ?? pvc.metadata.name;
      const d = describe(pvc);
      const line = `${d.state.padEnd(12)} requested ${d.requested.padEnd(5)} allocated ${d.allocated.padEnd(5)} capacity ${d.capacity.padEnd(5)} ${d.detail}`;
      if (last.get(label) !== line) {
        last.set(label, line);
        changes.set(label, Date.now());
        say(`  +${elapsed(watchStart).padStart(5)}  ${label.padEnd(9)} ${line}`);
      }
    }
    return list.items as unknown as Pvc[];
  };
  let polling = true;
  const poller = (async () => {
    while (polling) {
      await poll().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
  cleanups.push(async () => {
    polling = false;
    await poller;
  });
  const stateOf = async (p: Provisioned) =>
    describe((await admin.core.readNamespacedPersistentVolumeClaim({ namespace: NAMESPACE, name: p.pvc.metadata!.name! })) as unknown as Pvc).state;

  step('asking for more: grow 1Gi→2Gi, node 1Gi→3Gi, backfill 1Gi→2Gi');
  await Promise.all([
    requestPvcSize(admin, NAMESPACE, grow.pvc.metadata!.name!, '2Gi', { retryUntilAdmittedMs: 10_000 }),
    requestPvcSize(admin, NAMESPACE, node.pvc.metadata!.name!, '3Gi', { retryUntilAdmittedMs: 10_000 }),
    requestPvcSize(admin, NAMESPACE, backfill.pvc.metadata!.name!, '2Gi', { retryUntilAdmittedMs: 10_000 }),
  ]);
  const resizeAsked = Date.now();
  await until('grow to finish', async () => ((await stateOf(grow)) === 'done' ? true : undefined));
  const growMs = Date.now() - resizeAsked;
  await until('node to wait for kubelet', async () => ((await stateOf(node)) === 'node_pending' ? true : undefined));
  await until('backfill to be refused', async () => ((await stateOf(backfill)) === 'infeasible' ? true : undefined));
  say('           grow is done; node waits for kubelet to grow the filesystem (no node runs here);');
  say('           backfill was refused by the driver (InvalidArgument) and is marked ControllerResizeInfeasible');

  step('recovering backfill: 6Gi is feasible (above what the backend holds), so ask for that');
  await requestPvcSize(admin, NAMESPACE, backfill.pvc.metadata!.name!, '6Gi');
  const recoverAsked = Date.now();
  await until('backfill to finish', async () => ((await stateOf(backfill)) === 'done' ? true : undefined));
  const recoverMs = Date.now() - recoverAsked;
  await new Promise((r) => setTimeout(r, 500));
  polling = false;
  await poller;

  step('final state');
  const final = await poll();
  const pvs = new Map((await admin.core.listPersistentVolume()).items.map((pv) => [pv.metadata!.name!, pv]));
  const rows = final.map((pvc) => {
    const d = describe(pvc);
    const pv = pvs.get(pvc.spec.volumeName ?? '');
    return [
      names.get(pvc.metadata.name) ?? pvc.metadata.name,
      pv?.spec?.csi?.driver ?? '-',
      d.requested,
      d.allocated,
      d.capacity,
      pv?.spec?.capacity?.['storage'] ?? '-',
      d.state,
      pvc.status?.allocatedResourceStatuses?.['storage'] ?? '-',
    ];
  });
  const header = ['PVC', 'DRIVER', 'REQUESTED', 'ALLOCATED', 'CAPACITY', 'PV SIZE', 'STATE', 'RESIZE STATUS'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  for (const row of [header, ...rows]) say(`  ${row.map((c, i) => String(c).padEnd(widths[i]!)).join('  ')}`);

  say("\n  from the resizers' /metrics (csi_resizer_pvcs is ours; csi_sidecar_operations_seconds is upstream's):");
  for (const r of resizers) {
    const text = await (await fetch(`http://127.0.0.1:${r.port}/metrics`)).text();
    const pick = text
      .split('\n')
      .filter((l) => (/^csi_resizer_pvcs\{/.test(l) && !/ 0$/.test(l)) || /^csi_sidecar_operations_seconds_count\{.*ControllerExpandVolume/.test(l));
    say(`  ${r.name}:`);
    for (const l of pick) say(`    ${l}`);
  }

  step('stopping everything the demo started');
  await cleanup();
  say(`           resizer logs kept in ${logDir}`);
  say(
    `\ntimings: control plane ${(cluster.startupMs / 1000).toFixed(1)}s, grow finished ${(growMs / 1000).toFixed(1)}s after the request, ` +
      `backfill recovered ${(recoverMs / 1000).toFixed(1)}s after the new request, whole demo ${elapsed()}`,
  );
}

main().catch(async (err: unknown) => {
  say(`\ndemo failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  await cleanup();
  process.exit(1);
});
