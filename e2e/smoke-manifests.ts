// Pods the smoke tests and `npm run demo -- --node` run on the e2e node: one CSI driver pod (the
// driver, kubelet's registrar and our csi-resizer, sharing the driver's socket) and pods that
// mount a claim. Two drivers:
//
//   csiDriverPod     the mock CSI service (the hostpathplugin stand-in): volumes in memory, no data;
//   loopfsDriverPod  our loopfs test driver: real filesystems on loop devices, which it mounts
//                    into kubelet's directories itself, so it runs privileged with kubelet's pods
//                    and plugins directories shared both ways (mount propagation), the host's
//                    /dev (loop devices appear there as they are attached) and its data directory
//                    at the same path as on the host (docs/e2e.md, "The loopfs test driver").
//
// Either driver serves controller and node calls from one process, so it runs on the node as
// root beside kubelet's directories, and the socket it creates opens to root only. The resizer
// container sets no user: our image runs as root by default, as upstream's does
// (docs/deployment.md, "The image user").
import type * as k8s from '@kubernetes/client-node';

export interface DriverPodOptions {
  driverName: string;
  kubeletRootDir: string;
  nodeName: string;
  images: { ours: string; registrar: string; mock: string };
  /** Extra flags for our csi-resizer. */
  resizerArgs?: string[];
  /**
   * The whole resizer container instead of the default one (e2e/auto-grow-manifests.ts takes it
   * from deploy/kubernetes); it reaches the driver through the socket-dir volume. resizerArgs
   * does not apply then.
   */
  resizer?: k8s.V1Container;
  serviceAccountName?: string;
}

const hostPath = (name: string, path: string, type: string): k8s.V1Volume => ({ name, hostPath: { path, type } });

/** A driver pod around its driver container: the registrar and our resizer beside it. */
type SidecarOptions = Omit<DriverPodOptions, 'images'> & { images: { ours: string; registrar: string } };

function driverPod(o: SidecarOptions, driver: k8s.V1Container, driverVolumes: k8s.V1Volume[]): k8s.V1Pod {
  const pluginDir = `${o.kubeletRootDir}/plugins/${o.driverName}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${o.driverName.split('.')[0]}-csi-driver`, labels: { app: 'csi-driver', driver: o.driverName } },
    spec: {
      nodeName: o.nodeName,
      serviceAccountName: o.serviceAccountName ?? 'csi-resizer',
      containers: [
        driver,
        {
          name: 'node-driver-registrar',
          image: o.images.registrar,
          args: ['--v=5', '--csi-address=/csi/csi.sock', `--kubelet-registration-path=${pluginDir}/csi.sock`],
          volumeMounts: [
            { name: 'socket-dir', mountPath: '/csi' },
            { name: 'registration-dir', mountPath: '/registration' },
          ],
        },
        o.resizer ?? {
          name: 'csi-resizer',
          image: o.images.ours,
          args: ['--v=5', '--csi-address=/csi/csi.sock', ...(o.resizerArgs ?? [])],
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
          volumeMounts: [{ name: 'socket-dir', mountPath: '/csi' }],
        },
      ],
      volumes: [
        hostPath('socket-dir', pluginDir, 'DirectoryOrCreate'),
        hostPath('registration-dir', `${o.kubeletRootDir}/plugins_registry`, 'Directory'),
        ...driverVolumes,
      ],
    },
  };
}

export function csiDriverPod(o: DriverPodOptions): k8s.V1Pod {
  const mock: k8s.V1Container = {
    name: 'mock',
    image: o.images.mock,
    args: [`--drivername=${o.driverName}`, '--endpoint=/csi/csi.sock', '--node-expand-required=true', '-v=5'],
    securityContext: { privileged: true },
    volumeMounts: [
      { name: 'socket-dir', mountPath: '/csi' },
      { name: 'kubelet-pods', mountPath: `${o.kubeletRootDir}/pods` },
      { name: 'kubelet-csi', mountPath: `${o.kubeletRootDir}/plugins/kubernetes.io/csi` },
    ],
  };
  return driverPod(o, mock, [
    hostPath('kubelet-pods', `${o.kubeletRootDir}/pods`, 'Directory'),
    hostPath('kubelet-csi', `${o.kubeletRootDir}/plugins/kubernetes.io/csi`, 'DirectoryOrCreate'),
  ]);
}

export interface LoopfsDriverPodOptions extends Omit<DriverPodOptions, 'images'> {
  images: { ours: string; registrar: string; loopfs: string };
  /** The driver's data directory on the host (volumes, operation log): E2E_LOOPFS_DIR. */
  dataDir: string;
  /** Extra flags for the driver. */
  driverArgs?: string[];
}

export function loopfsDriverPod(o: LoopfsDriverPodOptions): k8s.V1Pod {
  const pods = `${o.kubeletRootDir}/pods`;
  const plugins = `${o.kubeletRootDir}/plugins`;
  const driver: k8s.V1Container = {
    name: 'loopfs',
    image: o.images.loopfs,
    args: [
      `--drivername=${o.driverName}`,
      `--nodeid=${o.nodeName}`,
      '--endpoint=/csi/csi.sock',
      `--root=${o.dataDir}`,
      `--target-root=${o.kubeletRootDir}`,
      '-v=3',
      ...(o.driverArgs ?? []),
    ],
    securityContext: { privileged: true },
    volumeMounts: [
      { name: 'socket-dir', mountPath: '/csi' },
      // Its mounts must reach kubelet and the pods: both ways.
      { name: 'kubelet-pods', mountPath: pods, mountPropagation: 'Bidirectional' },
      { name: 'kubelet-plugins', mountPath: plugins, mountPropagation: 'Bidirectional' },
      { name: 'dev', mountPath: '/dev' },
      { name: 'data', mountPath: o.dataDir },
    ],
  };
  return driverPod(o, driver, [
    hostPath('kubelet-pods', pods, 'Directory'),
    hostPath('kubelet-plugins', plugins, 'Directory'),
    hostPath('dev', '/dev', 'Directory'),
    hostPath('data', o.dataDir, 'Directory'),
  ]);
}

/**
 * The driver's CSIDriver object: without one kubelet assumes attach is required and waits for a
 * VolumeAttachment that no attacher (there is none here) would ever mark attached.
 */
export function csiDriverObject(driverName: string): k8s.V1CSIDriver {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIDriver',
    metadata: { name: driverName },
    spec: { attachRequired: false, podInfoOnMount: false, volumeLifecycleModes: ['Persistent'] },
  };
}

export function consumerPod(o: { claimName: string; nodeName: string; image: string; name?: string }): k8s.V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: o.name ?? `uses-${o.claimName}` },
    spec: {
      nodeName: o.nodeName,
      containers: [{ name: 'app', image: o.image, volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: o.claimName } }],
    },
  };
}

/**
 * A pod whose one container runs a shell script with the claim at /data (busybox). Its
 * termination grace is short: a shell as PID 1 ignores SIGTERM unless the script traps it.
 */
export function shellPod(o: { name: string; claimName: string; nodeName: string; image: string; script: string; restartPolicy?: 'Always' | 'Never' }): k8s.V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: o.name },
    spec: {
      nodeName: o.nodeName,
      restartPolicy: o.restartPolicy ?? 'Always',
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'app', image: o.image, command: ['/bin/sh', '-c', o.script], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: o.claimName } }],
    },
  };
}
