// The plain JSON shapes of the API objects the resizer reads, exactly as the API server sends them
// (timestamps are strings, quantities are strings). Only the fields we use are typed; everything
// else passes through untouched, because we patch and never replace objects.

export interface ObjectMeta {
  [field: string]: unknown;
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string;
  creationTimestamp?: string;
}

/** Any Kubernetes object as the API server sent it: plain JSON, never a typed model. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

export interface PvcCondition {
  type: string;
  status: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string | null;
  reason?: string;
  message?: string;
}

export interface ModifyVolumeStatus {
  targetVolumeAttributesClassName?: string;
  status: string;
}

export interface Pvc {
  [field: string]: unknown;
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: {
    volumeName?: string;
    storageClassName?: string;
    accessModes?: string[];
    volumeMode?: string;
    volumeAttributesClassName?: string | null;
    resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  };
  status?: {
    phase?: string;
    accessModes?: string[];
    capacity?: Record<string, string>;
    conditions?: PvcCondition[];
    allocatedResources?: Record<string, string>;
    allocatedResourceStatuses?: Record<string, string>;
    currentVolumeAttributesClassName?: string | null;
    modifyVolumeStatus?: ModifyVolumeStatus | null;
  };
}

export interface SecretReference {
  name?: string;
  namespace?: string;
}

export interface CsiPersistentVolumeSource {
  driver: string;
  volumeHandle: string;
  fsType?: string;
  readOnly?: boolean;
  volumeAttributes?: Record<string, string>;
  controllerExpandSecretRef?: SecretReference;
}

export interface Pv {
  [field: string]: unknown;
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: {
    capacity?: Record<string, string>;
    accessModes?: string[];
    volumeMode?: string;
    mountOptions?: string[];
    storageClassName?: string;
    volumeAttributesClassName?: string | null;
    persistentVolumeReclaimPolicy?: string;
    claimRef?: { namespace?: string; name?: string; uid?: string; kind?: string; apiVersion?: string };
    csi?: CsiPersistentVolumeSource;
    [inTreeSource: string]: unknown;
  };
  status?: { phase?: string };
}

export interface VolumeAttributesClass {
  [field: string]: unknown;
  metadata: ObjectMeta;
  driverName: string;
  parameters?: Record<string, string>;
}

export interface NodeAddress {
  type: string;
  address: string;
}

/** The Node fields auto-grow reads to reach its kubelet. */
export interface Node {
  [field: string]: unknown;
  metadata: ObjectMeta;
  status?: {
    addresses?: NodeAddress[];
    /** The kubelet's port; `Port` is capitalised on the wire. */
    daemonEndpoints?: { kubeletEndpoint?: { Port?: number } };
  };
}
