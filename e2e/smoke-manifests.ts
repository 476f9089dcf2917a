// Pods the smoke test and `npm run demo -- --node` run on the e2e node: one CSI driver pod (the
// mock CSI service, kubelet's registrar and our csi-resizer, sharing the driver's socket) and a
// pod that mounts a claim.
//
// The mock keeps its volumes in memory, so one process must serve both the controller calls (from
// the resizer) and the node calls (from kubelet): it runs on the node as root beside kubelet's
// directories, like a CSI node plugin, and the socket it creates opens to root only. The resizer
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
  serviceAccountName?: string;
}

export function csiDriverPod(o: DriverPodOptions): k8s.V1Pod {
  const pluginDir = `${o.kubeletRootDir}/plugins/${o.driverName}`;
  const hostPath = (name: string, path: string, type: string): k8s.V1Volume => ({ name, hostPath: { path, type } });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${o.driverName.split('.')[0]}-csi-driver`, labels: { app: 'csi-driver', driver: o.driverName } },
    spec: {
      nodeName: o.nodeName,
      serviceAccountName: o.serviceAccountName ?? 'csi-resizer',
      containers: [
        {
          name: 'mock',
          image: o.images.mock,
          args: [`--drivername=${o.driverName}`, '--endpoint=/csi/csi.sock', '--node-expand-required=true', '-v=5'],
          securityContext: { privileged: true },
          volumeMounts: [
            { name: 'socket-dir', mountPath: '/csi' },
            { name: 'kubelet-pods', mountPath: `${o.kubeletRootDir}/pods` },
            { name: 'kubelet-csi', mountPath: `${o.kubeletRootDir}/plugins/kubernetes.io/csi` },
          ],
        },
        {
          name: 'node-driver-registrar',
          image: o.images.registrar,
          args: ['--v=5', '--csi-address=/csi/csi.sock', `--kubelet-registration-path=${pluginDir}/csi.sock`],
          volumeMounts: [
            { name: 'socket-dir', mountPath: '/csi' },
            { name: 'registration-dir', mountPath: '/registration' },
          ],
        },
        {
          name: 'csi-resizer',
          image: o.images.ours,
          args: ['--v=5', '--csi-address=/csi/csi.sock', ...(o.resizerArgs ?? [])],
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
          volumeMounts: [{ name: 'socket-dir', mountPath: '/csi' }],
        },
      ],
      volumes: [
        hostPath('socket-dir', pluginDir, 'DirectoryOrCreate'),
        hostPath('kubelet-pods', `${o.kubeletRootDir}/pods`, 'Directory'),
        hostPath('kubelet-csi', `${o.kubeletRootDir}/plugins/kubernetes.io/csi`, 'DirectoryOrCreate'),
        hostPath('registration-dir', `${o.kubeletRootDir}/plugins_registry`, 'Directory'),
      ],
    },
  };
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
