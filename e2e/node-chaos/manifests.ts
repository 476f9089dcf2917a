// What the node chaos runs deploy (docs/e2e.md, "Faults on the node"): the loopfs test driver as
// a real CSI driver is deployed, in two parts, and the pods that use its claims.
//
//   nodePluginPod         the node plugin (a DaemonSet's pod on a one-node cluster): the driver's
//                         node service and the registrar, privileged, with kubelet's directories
//                         shared both ways, as in e2e/smoke-manifests.ts;
//   controllerDeployment  the controller: two replicas of (the driver's controller service, the
//                         resizer under test) with leader election, as a Deployment runs a CSI
//                         controller. Each replica's driver has its own socket (an emptyDir) and
//                         shares the volumes' directory with the node plugin; the driver's
//                         per-volume file lock keeps them from growing one volume at once;
//   writerPod/readerPod   a claim's user: an init container writes files and their checksums
//                         once (a restarted pod finds them and writes nothing), then the app
//                         container idles (online claims, readers) or the pod ends (offline writers).
import type * as k8s from '@kubernetes/client-node';

export const NAMESPACE = 'default';
export const CONTROLLER_NAME = 'loopfs-controller';
export const NODE_PLUGIN_NAME = 'loopfs-node';

/** The same flags for both resizers: those of `npm run chaos`, plus leader election at its defaults. */
export const RESIZER_ARGS = [
  '--csi-address=/csi/csi.sock',
  '--v=2',
  '--leader-election',
  `--leader-election-namespace=${NAMESPACE}`,
  '--workers=10',
  '--kube-api-qps=200',
  '--kube-api-burst=400',
  '--timeout=10s',
];

// No fsync of the driver's log lines and grown files: no fault here loses the page cache (even the
// node's restart leaves the machine up), and with the pods' writes in flight an fsync can take
// seconds, which would time calls out for reasons neither resizer has anything to do with.
const NO_FSYNC = '--fsync=false';

const hostPath = (name: string, path: string, type: string): k8s.V1Volume => ({ name, hostPath: { path, type } });

export interface NodePluginOptions {
  driverName: string;
  nodeName: string;
  kubeletRootDir: string;
  dataDir: string;
  maxVolumes: number;
  images: { loopfs: string; registrar: string };
}

export function nodePluginPod(o: NodePluginOptions): k8s.V1Pod {
  const pods = `${o.kubeletRootDir}/pods`;
  const plugins = `${o.kubeletRootDir}/plugins`;
  const pluginDir = `${plugins}/${o.driverName}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: NODE_PLUGIN_NAME, namespace: NAMESPACE, labels: { app: NODE_PLUGIN_NAME } },
    spec: {
      nodeName: o.nodeName,
      terminationGracePeriodSeconds: 5,
      containers: [
        {
          name: 'loopfs',
          image: o.images.loopfs,
          args: [
            `--drivername=${o.driverName}`,
            `--nodeid=${o.nodeName}`,
            '--endpoint=/csi/csi.sock',
            `--root=${o.dataDir}`,
            `--target-root=${o.kubeletRootDir}`,
            `--max-volumes=${o.maxVolumes}`,
            NO_FSYNC,
            '-v=2',
          ],
          securityContext: { privileged: true },
          volumeMounts: [
            { name: 'socket-dir', mountPath: '/csi' },
            { name: 'kubelet-pods', mountPath: pods, mountPropagation: 'Bidirectional' },
            { name: 'kubelet-plugins', mountPath: plugins, mountPropagation: 'Bidirectional' },
            { name: 'dev', mountPath: '/dev' },
            { name: 'data', mountPath: o.dataDir },
          ],
        },
        {
          name: 'node-driver-registrar',
          image: o.images.registrar,
          args: ['--v=2', '--csi-address=/csi/csi.sock', `--kubelet-registration-path=${pluginDir}/csi.sock`],
          volumeMounts: [
            { name: 'socket-dir', mountPath: '/csi' },
            { name: 'registration-dir', mountPath: '/registration' },
          ],
        },
      ],
      volumes: [
        hostPath('socket-dir', pluginDir, 'DirectoryOrCreate'),
        hostPath('registration-dir', `${o.kubeletRootDir}/plugins_registry`, 'Directory'),
        hostPath('kubelet-pods', pods, 'Directory'),
        hostPath('kubelet-plugins', plugins, 'Directory'),
        hostPath('dev', '/dev', 'Directory'),
        hostPath('data', o.dataDir, 'Directory'),
      ],
    },
  };
}

export interface ControllerOptions {
  driverName: string;
  nodeName: string;
  dataDir: string;
  maxVolumes: number;
  /** The driver's working time per ControllerExpandVolume (--controller-expand-delay). */
  expandDelayMs: number;
  images: { loopfs: string; resizer: string };
}

export function controllerDeployment(o: ControllerOptions): k8s.V1Deployment {
  const labels = { app: CONTROLLER_NAME };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: CONTROLLER_NAME, namespace: NAMESPACE, labels },
    spec: {
      replicas: 2,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          // Pinned to the one node: a pod must not wait for the scheduler when the fault is the control plane.
          nodeName: o.nodeName,
          serviceAccountName: 'csi-resizer',
          containers: [
            {
              name: 'loopfs',
              image: o.images.loopfs,
              args: [
                `--drivername=${o.driverName}`,
                `--nodeid=${o.nodeName}`,
                '--endpoint=/csi/csi.sock',
                `--root=${o.dataDir}`,
                // The controller service stages nothing; the flag wants an existing directory.
                '--target-root=/tmp',
                `--max-volumes=${o.maxVolumes}`,
                `--controller-expand-delay=${o.expandDelayMs}ms`,
                NO_FSYNC,
                '-v=2',
              ],
              volumeMounts: [
                { name: 'socket-dir', mountPath: '/csi' },
                { name: 'data', mountPath: o.dataDir },
              ],
            },
            {
              name: 'csi-resizer',
              image: o.images.resizer,
              args: RESIZER_ARGS,
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              volumeMounts: [{ name: 'socket-dir', mountPath: '/csi' }],
            },
          ],
          volumes: [{ name: 'socket-dir', emptyDir: {} }, hostPath('data', o.dataDir, 'Directory')],
        },
      },
    },
  };
}

export interface DataShape {
  files: number;
  fileMiB: number;
}

// Writes the files once: into temporary names, then renamed, and the checksums last, so a pod
// killed mid-write starts over and a restarted pod that finds SHA256SUMS writes nothing.
function writeOnce(d: DataShape): string {
  return `set -e
cd /data
if [ ! -f SHA256SUMS ]; then
  i=0
  while [ $i -lt ${d.files} ]; do dd if=/dev/urandom of=.file-$i bs=1M count=${d.fileMiB} 2>/dev/null; mv .file-$i file-$i; i=$((i + 1)); done
  sha256sum file-* > .SHA256SUMS
  sync
  mv .SHA256SUMS SHA256SUMS
  sync
fi`;
}

const IDLE = "trap 'exit 0' TERM; while true; do sleep 3600 & wait; done";

interface ClaimPodOptions {
  name: string;
  claimName: string;
  nodeName: string;
  image: string;
  labels: Record<string, string>;
}

function claimPod(o: ClaimPodOptions, spec: Pick<k8s.V1PodSpec, 'initContainers' | 'containers' | 'restartPolicy'>): k8s.V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: o.name, namespace: NAMESPACE, labels: o.labels },
    spec: {
      nodeName: o.nodeName,
      // A shell as PID 1 ignores SIGTERM unless it traps it: keep the wait short.
      terminationGracePeriodSeconds: 1,
      ...spec,
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: o.claimName } }],
    },
  };
}

const mount = [{ name: 'data', mountPath: '/data' }];

/** Online claims: writes once, then keeps the claim mounted while it grows. */
export function onlineWriterPod(o: ClaimPodOptions, d: DataShape): k8s.V1Pod {
  return claimPod(o, {
    restartPolicy: 'Always',
    initContainers: [{ name: 'write', image: o.image, command: ['/bin/sh', '-c', writeOnce(d)], volumeMounts: mount }],
    containers: [{ name: 'app', image: o.image, command: ['/bin/sh', '-c', IDLE], volumeMounts: mount }],
  });
}

/** Offline claims: writes once and ends, so kubelet unmounts and unstages the claim before it grows. */
export function offlineWriterPod(o: ClaimPodOptions, d: DataShape): k8s.V1Pod {
  return claimPod(o, {
    restartPolicy: 'Never',
    containers: [{ name: 'write', image: o.image, command: ['/bin/sh', '-c', writeOnce(d)], volumeMounts: mount }],
  });
}

/** The pod that mounts an offline claim once it has grown in the controller (and so grows it on the node). */
export function readerPod(o: ClaimPodOptions): k8s.V1Pod {
  return claimPod(o, {
    restartPolicy: 'Always',
    containers: [{ name: 'app', image: o.image, command: ['/bin/sh', '-c', IDLE], volumeMounts: mount }],
  });
}
