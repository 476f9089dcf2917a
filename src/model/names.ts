// The observable vocabulary of the reference resizer: condition types, resize statuses,
// annotations, event reasons and messages. Spelled exactly as upstream external-resizer v2.2
// writes them, because tools and people watching a PVC depend on these strings.

export const ConditionType = {
  Resizing: 'Resizing',
  FileSystemResizePending: 'FileSystemResizePending',
  ControllerResizeError: 'ControllerResizeError',
  NodeResizeError: 'NodeResizeError',
  ModifyingVolume: 'ModifyingVolume',
  ModifyVolumeError: 'ModifyVolumeError',
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

/** The conditions the resize controller owns (§3.11); every other condition is left alone. */
export const RESIZE_CONDITION_TYPES: ReadonlySet<string> = new Set([
  ConditionType.Resizing,
  ConditionType.FileSystemResizePending,
  ConditionType.ControllerResizeError,
  ConditionType.NodeResizeError,
]);

/** Values of `status.allocatedResourceStatuses[storage]`. */
export const ResizeStatus = {
  ControllerResizeInProgress: 'ControllerResizeInProgress',
  ControllerResizeInfeasible: 'ControllerResizeInfeasible',
  NodeResizePending: 'NodeResizePending',
  NodeResizeInProgress: 'NodeResizeInProgress',
  NodeResizeInfeasible: 'NodeResizeInfeasible',
} as const;
export type ResizeStatus = (typeof ResizeStatus)[keyof typeof ResizeStatus];

/** Values of `status.modifyVolumeStatus.status`. */
export const ModifyStatus = {
  Pending: 'Pending',
  InProgress: 'InProgress',
  Infeasible: 'Infeasible',
} as const;
export type ModifyStatus = (typeof ModifyStatus)[keyof typeof ModifyStatus];

export const Annotation = {
  /** On the PVC: which resizer handles a migrated in-tree volume. */
  StorageResizer: 'volume.kubernetes.io/storage-resizer',
  /** On the PVC, inside status patches: kubelet may skip node expansion. */
  NodeExpansionNotRequired: 'volume.kubernetes.io/node-expansion-not-required',
  /** On the PV: the PVC capacity before a resize that still needs the node (AnnotateFsResize). */
  PreResizeCapacity: 'volume.alpha.kubernetes.io/pre-resize-capacity',
  ControllerModifySecretName: 'volume.kubernetes.io/controller-modify-secret-name',
  ControllerModifySecretNamespace: 'volume.kubernetes.io/controller-modify-secret-namespace',
} as const;

export const EventReason = {
  Resizing: 'Resizing',
  VolumeResizeFailed: 'VolumeResizeFailed',
  FileSystemResizeRequired: 'FileSystemResizeRequired',
  VolumeResizeSuccessful: 'VolumeResizeSuccessful',
  VolumeModify: 'VolumeModify',
  VolumeModifySuccessful: 'VolumeModifySuccessful',
  VolumeModifyFailed: 'VolumeModifyFailed',
  VolumeModifyCanceled: 'VolumeModifyCanceled',
} as const;
export type EventReason = (typeof EventReason)[keyof typeof EventReason];

export const Message = {
  resizing: (pvName: string) => `External resizer is resizing volume ${pvName}`,
  fileSystemResizeRequired: 'Require file system resize of volume on node',
  resizeSuccessful: 'Resize volume succeeded',
  fileSystemResizePendingCondition: 'Waiting for user to (re-)start a pod to finish file system resize of volume on node.',
  inUse: (namespace: string, name: string, driver: string) =>
    `Unable to expand ${namespace}/${name} because CSI driver ${driver} only supports offline expansion and volume is currently in-use`,
  controllerResizeError: (err: string) => `failed to expand pvc with ${err}`,
  infeasibleDelay: (key: string) => `skipping volume expansion for pvc ${key}, because expansion previously failed with infeasible error`,
  oldApiServer: 'external-resizer may be running with older version of kubernetes api-server, please upgrade to k8s version 1.32',
  modifying: (pvcName: string, vacName: string) => `external resizer is modifying volume ${pvcName} with vac ${vacName}`,
  modifySuccessful: (pvcName: string, vacName: string) => `external resizer modified volume ${pvcName} with vac ${vacName} successfully`,
  modifyCanceled: 'Cancelled modify.',
  vacMissing: (vacName: string) => `VAC "${vacName}" does not exist.`,
  modifyInProgressCondition: (vacName: string) => `Modifying volume to "${vacName}" is in progress.`,
  modifyFailedCondition: (vacName: string) => `Modifying volume to "${vacName}" failed. Waiting for retry.`,
  modifyStillInProgressCondition: (vacName: string) => `Modifying volume to "${vacName}" is still in progress.`,
  modifyInfeasibleDelay: (key: string) => `skipping volume modification for pvc ${key}, because modification previously failed with infeasible error`,
} as const;

/** Drivers that are CSI migration targets of in-tree plugins (csi-translation-lib). */
export const MIGRATION_TARGET_DRIVERS: ReadonlySet<string> = new Set([
  'ebs.csi.aws.com',
  'pd.csi.storage.gke.io',
  'cinder.csi.openstack.org',
  'disk.csi.azure.com',
  'file.csi.azure.com',
  'csi.vsphere.vmware.com',
  'pxd.portworx.com',
]);
