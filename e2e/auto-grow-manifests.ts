// Auto-grow on the e2e node (docs/e2e.md, "Auto-grow on the node"): the loopfs test driver with
// our csi-resizer and `--auto-grow`, deployed the two ways an operator deploys it, with the
// resizer container and the RBAC taken from deploy/kubernetes as shipped:
//
//   central     a Deployment: the csi-resizer container of deploy/kubernetes/deployment.yaml
//               (leader election) in the driver's pod;
//   node-local  a DaemonSet: the csi-resizer container of deploy/kubernetes/node-local/daemonset.yaml
//               (--node-deployment, NODE_NAME) in the driver's pod; its claims' volumes carry node
//               affinity, which is how a replica knows they are its node's.
//
// Both get deploy/kubernetes/rbac.yaml and the auto-grow component's RBAC; node-local also its
// rbac-node.yaml. The shipped containers are changed only where this node differs: the image,
// the driver's socket, user 0 (the loopfs driver's socket opens to root only, docs/e2e.md "The
// loopfs test driver"), and the auto-grow flags below.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { repoRoot } from '../test/cluster/components.js';
import type { KubeClients } from '../test/cluster/kube.js';
import { applyRbac } from '../test/cluster/rbac.js';
import { eventually } from '../test/support/eventually.js';
import { kubectl } from './kubectl.js';
import type { NodeEnv } from './node-session.js';
import { csiDriverObject, loopfsDriverPod } from './smoke-manifests.js';

export type AutoGrowMode = 'central' | 'node-local';

/**
 * The flags an operator adds for auto-grow on this node (docs/e2e.md, "Auto-grow on the node").
 * No CA flag: the kubelet's serving certificate is signed by the cluster CA, which the service
 * account's ca.crt already holds (the default). InternalIP first, as metrics-server's manifests
 * have it: the node's Hostname address does not resolve in a pod here. A short interval, because
 * the tests wait on it (the default is 1m).
 */
export const AUTO_GROW_FLAGS: readonly string[] = ['--auto-grow', '--auto-grow-interval=2s', '--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname'];

const SOCKET_DIR = '/var/lib/csi/sockets/pluginproxy/';
const RBAC_AUTO_GROW = join(repoRoot, 'deploy', 'kubernetes', 'auto-grow', 'rbac-auto-grow.yaml');
const RBAC_NODE = join(repoRoot, 'deploy', 'kubernetes', 'node-local', 'rbac-node.yaml');
const MANIFEST: Record<AutoGrowMode, string> = {
  central: join(repoRoot, 'deploy', 'kubernetes', 'deployment.yaml'),
  'node-local': join(repoRoot, 'deploy', 'kubernetes', 'node-local', 'daemonset.yaml'),
};

/** The csi-resizer container of a shipped manifest, set to run beside the loopfs driver with auto-grow. */
export function shippedResizer(mode: AutoGrowMode, image: string, extraArgs: readonly string[] = AUTO_GROW_FLAGS): k8s.V1Container {
  const docs = k8s.loadAllYaml(readFileSync(MANIFEST[mode], 'utf8')) as (k8s.V1Deployment | k8s.V1DaemonSet)[];
  const container = docs.flatMap((d) => d.spec?.template.spec?.containers ?? []).find((c) => c.name === 'csi-resizer');
  if (container === undefined) throw new Error(`${MANIFEST[mode]} has no csi-resizer container`);
  const mount = container.volumeMounts?.find((m) => m.name === 'socket-dir');
  if (mount?.mountPath !== SOCKET_DIR) throw new Error(`${MANIFEST[mode]}: the csi-resizer container no longer mounts socket-dir at ${SOCKET_DIR}`);
  return {
    ...container,
    image,
    args: [...(container.args ?? []), ...extraArgs],
    env: (container.env ?? []).map((e) => (e.name === 'ADDRESS' ? { name: 'ADDRESS', value: `${SOCKET_DIR}csi.sock` } : e)),
    securityContext: { ...container.securityContext, runAsUser: 0, runAsNonRoot: false },
  };
}

export interface AutoGrowDriverOptions {
  mode: AutoGrowMode;
  driverName: string;
  env: NodeEnv;
  /** Extra flags for the resizer (AUTO_GROW_FLAGS by default). */
  resizerArgs?: readonly string[];
}

export interface AutoGrowDriver {
  readonly mode: AutoGrowMode;
  readonly driverName: string;
  /** The driver's data directory on the host (its volumes and operations.jsonl). */
  readonly dataDir: string;
  /** The driver's socket, reachable from the host (the test runs as root there). */
  readonly socket: string;
  /** The labels of the driver's pod. */
  readonly selector: string;
}

/** The driver pod's spec with the shipped resizer container, its data in a directory of its own under E2E_LOOPFS_DIR. */
function driverTemplate(o: AutoGrowDriverOptions, dataDir: string): k8s.V1PodTemplateSpec {
  const { env } = o;
  const { RESIZER_OURS_IMAGE: ours, REGISTRAR_IMAGE: registrar, LOOPFS_DRIVER_IMAGE: loopfs } = env.images;
  if (!ours || !registrar || !loopfs) throw new Error(`images.env lacks an image: ${JSON.stringify(env.images)}`);
  const pod = loopfsDriverPod({
    driverName: o.driverName,
    kubeletRootDir: env.kubeletRootDir,
    nodeName: env.nodeName,
    dataDir,
    images: { ours, registrar, loopfs },
    resizer: shippedResizer(o.mode, ours, o.resizerArgs),
  });
  // The workload names its pods; a DaemonSet places them itself.
  const spec = { ...pod.spec!, terminationGracePeriodSeconds: 5 };
  if (o.mode === 'node-local') delete spec.nodeName;
  return { metadata: { labels: pod.metadata!.labels! }, spec };
}

/** Deploys the loopfs driver with our resizer running auto-grow, and waits until kubelet has registered it. */
export async function deployAutoGrowDriver(admin: KubeClients, o: AutoGrowDriverOptions): Promise<AutoGrowDriver> {
  const dataDir = join(o.env.loopfsDir, o.mode);
  mkdirSync(dataDir, { recursive: true });
  await applyRbac(admin);
  await applyRbac(admin, RBAC_AUTO_GROW);
  if (o.mode === 'node-local') await applyRbac(admin, RBAC_NODE);
  await admin.storage.createCSIDriver({ body: csiDriverObject(o.driverName) });
  const template = driverTemplate(o, dataDir);
  const labels = template.metadata!.labels!;
  const name = `${o.driverName.split('.')[0]}-driver`;
  const apps = admin.kc.makeApiClient(k8s.AppsV1Api);
  if (o.mode === 'central') {
    await apps.createNamespacedDeployment({ namespace: 'default', body: { metadata: { name }, spec: { replicas: 1, selector: { matchLabels: labels }, template } } });
  } else {
    await apps.createNamespacedDaemonSet({ namespace: 'default', body: { metadata: { name }, spec: { selector: { matchLabels: labels }, template } } });
  }
  await eventually(`CSINode ${o.env.nodeName} to list ${o.driverName}`, async () => {
    const csiNode = await admin.storage.readCSINode({ name: o.env.nodeName });
    return csiNode.spec.drivers.some((d) => d.name === o.driverName);
  }, 180_000, 250);
  return {
    mode: o.mode,
    driverName: o.driverName,
    dataDir,
    socket: `unix://${o.env.kubeletRootDir}/plugins/${o.driverName}/csi.sock`,
    selector: Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(','),
  };
}

/** The name of the driver's one running pod (the Deployment's replica, or the DaemonSet's pod on the node). */
export async function driverPodName(admin: KubeClients, driver: AutoGrowDriver): Promise<string> {
  const pods = await admin.core.listNamespacedPod({ namespace: 'default', labelSelector: driver.selector });
  const running = pods.items.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
  if (running.length !== 1) throw new Error(`${driver.driverName}: ${running.length} running driver pods`);
  return running[0]!.metadata!.name!;
}

/** A StorageClass of the driver that opts its claims in (resize.topolvm.io/enabled). */
export async function createAutoGrowClass(admin: KubeClients, driver: AutoGrowDriver): Promise<string> {
  const name = `${driver.mode}-auto-grow`;
  await admin.storage.createStorageClass({
    body: {
      metadata: { name, annotations: { 'resize.topolvm.io/enabled': 'true' } },
      provisioner: driver.driverName,
      allowVolumeExpansion: true,
      reclaimPolicy: 'Retain',
    },
  });
  return name;
}

/** The volume of a node-local driver lives on the node: node affinity is how its replica knows. */
export function nodeAffinity(nodeName: string): k8s.V1VolumeNodeAffinity {
  return { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [nodeName] }] }] } };
}

/** csi_resizer_auto_grow_total by result, read from the resizer's /metrics (--http-endpoint=:8080) through the API server's pod proxy. */
export async function autoGrowCounts(env: NodeEnv, pod: string): Promise<Record<string, number>> {
  const text = await kubectl(env, 'get', '--raw', `/api/v1/namespaces/default/pods/${pod}:8080/proxy/metrics`);
  const counts: Record<string, number> = {};
  for (const m of text.matchAll(/^csi_resizer_auto_grow_total\{result="([a-z_]+)"\} (\S+)$/gm)) counts[m[1]!] = Number(m[2]);
  return counts;
}
