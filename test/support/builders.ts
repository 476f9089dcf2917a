// The API objects tests start from: PVCs, PVs, pods, StorageClasses and VolumeAttributesClasses as
// the plain JSON the API server sends and takes. Each builder sets only what it is asked for, plus
// a name (and a namespace for namespaced objects); the defaults below are the ones most tests share:
// a PVC `ns/data` bound to PV `pv-1`. Pass `null` to leave a defaulted field out.
import type { NodeSelectorTerm } from '../../src/model/node-affinity.js';
import type { CsiPersistentVolumeSource, ModifyVolumeStatus, ObjectMeta, Pv, Pvc, PvcCondition, VolumeAttributesClass } from '../../src/model/objects.js';

/** Metadata fields every builder takes. */
export interface MetaOptions {
  name?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
}

export interface PvcOptions extends MetaOptions {
  /** Default `data`. */
  name?: string;
  /** Default `ns`. */
  namespace?: string;
  /** spec.volumeName; default `pv-1`, null for none. */
  volumeName?: string | null;
  storageClassName?: string;
  accessModes?: string[];
  volumeMode?: string;
  /** spec.resources.requests.storage. */
  request?: string;
  /** spec.volumeAttributesClassName (null is written as null: a cleared class). */
  attributesClass?: string | null;
  /** status.phase; default `Bound`, null for none. */
  phase?: string | null;
  /** status.capacity.storage. */
  capacity?: string;
  /** status.allocatedResources.storage. */
  allocated?: string;
  /** status.allocatedResourceStatuses.storage. */
  resizeStatus?: string;
  conditions?: PvcCondition[];
  /** status.currentVolumeAttributesClassName. */
  currentAttributesClass?: string | null;
  modifyVolumeStatus?: ModifyVolumeStatus | null;
  /** Further status fields, merged over the ones above. */
  status?: Pvc['status'];
}

export interface PvOptions extends MetaOptions {
  /** Default `pv-1`. */
  name?: string;
  /** spec.capacity.storage. */
  capacity?: string;
  /** A CSI source for this driver (with `volumeHandle`, default `vol-1`, and `csi` for further fields). */
  driver?: string;
  volumeHandle?: string;
  csi?: Partial<CsiPersistentVolumeSource>;
  /** An in-tree source instead, e.g. `{ awsElasticBlockStore: { volumeID: 'vol-1' } }`. */
  inTreeSource?: Record<string, unknown>;
  /** spec.claimRef (a PVC's namespace, name and uid). */
  claim?: Pv['spec']['claimRef'];
  storageClassName?: string;
  accessModes?: string[];
  volumeMode?: string;
  mountOptions?: string[];
  /** spec.persistentVolumeReclaimPolicy. */
  reclaimPolicy?: string;
  /** spec.volumeAttributesClassName. */
  attributesClass?: string;
  /** spec.nodeAffinity.required.nodeSelectorTerms. */
  nodeAffinity?: NodeSelectorTerm[];
  phase?: string;
}

export interface Pod {
  [field: string]: unknown;
  metadata: ObjectMeta;
  spec: { containers: { name: string; image: string }[]; volumes: Record<string, unknown>[]; nodeName?: string };
  status?: { phase?: string };
}

export interface PodOptions extends MetaOptions {
  /** Default `pod`. */
  name?: string;
  /** Default `ns`. */
  namespace?: string;
  /** The PVCs the pod mounts, one volume each. */
  claims?: string[];
  /** Volumes of other kinds, after the claims'. */
  otherVolumes?: Record<string, unknown>[];
  nodeName?: string;
  phase?: string;
}

export interface StorageClass {
  [field: string]: unknown;
  metadata: ObjectMeta;
  provisioner: string;
  allowVolumeExpansion?: boolean;
  reclaimPolicy?: string;
  volumeBindingMode?: string;
  parameters?: Record<string, string>;
}

export interface StorageClassOptions extends MetaOptions {
  /** Default `fast`. */
  name?: string;
  provisioner: string;
  allowVolumeExpansion?: boolean;
  /** Default `Retain` (no controller deletes anything in the test cluster). */
  reclaimPolicy?: string;
  /** Default `Immediate`. */
  volumeBindingMode?: string;
  parameters?: Record<string, string>;
}

export interface VolumeAttributesClassOptions extends MetaOptions {
  /** Default `gold`. */
  name?: string;
  driverName: string;
  parameters?: Record<string, string>;
}

function meta(o: MetaOptions & { name: string; namespace?: string }): ObjectMeta {
  const m: ObjectMeta = { name: o.name };
  if (o.namespace !== undefined) m.namespace = o.namespace;
  if (o.uid !== undefined) m.uid = o.uid;
  if (o.resourceVersion !== undefined) m.resourceVersion = o.resourceVersion;
  if (o.generation !== undefined) m.generation = o.generation;
  if (o.labels !== undefined) m.labels = o.labels;
  if (o.annotations !== undefined) m.annotations = o.annotations;
  if (o.finalizers !== undefined) m.finalizers = o.finalizers;
  return m;
}

/** Drops the keys whose value is undefined, so an object holds only what was asked for. */
function defined<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

const storage = (q: string | undefined) => (q === undefined ? undefined : { storage: q });

export function pvc(o: PvcOptions = {}): Pvc {
  const volumeName = o.volumeName === undefined ? 'pv-1' : (o.volumeName ?? undefined);
  const phase = o.phase === undefined ? 'Bound' : (o.phase ?? undefined);
  const status = defined({
    phase,
    capacity: storage(o.capacity),
    allocatedResources: storage(o.allocated),
    allocatedResourceStatuses: storage(o.resizeStatus),
    conditions: o.conditions,
    currentVolumeAttributesClassName: o.currentAttributesClass,
    modifyVolumeStatus: o.modifyVolumeStatus,
    ...o.status,
  });
  return {
    metadata: meta({ ...o, name: o.name ?? 'data', namespace: o.namespace ?? 'ns' }),
    spec: defined({
      volumeName,
      storageClassName: o.storageClassName,
      accessModes: o.accessModes,
      volumeMode: o.volumeMode,
      volumeAttributesClassName: o.attributesClass,
      resources: o.request === undefined ? undefined : { requests: { storage: o.request } },
    }),
    status,
  };
}

export function pv(o: PvOptions = {}): Pv {
  const csi = o.driver !== undefined || o.csi !== undefined ? { driver: o.driver ?? '', volumeHandle: o.volumeHandle ?? 'vol-1', ...o.csi } : undefined;
  return {
    metadata: meta({ ...o, name: o.name ?? 'pv-1' }),
    spec: defined({
      capacity: storage(o.capacity),
      accessModes: o.accessModes,
      volumeMode: o.volumeMode,
      mountOptions: o.mountOptions,
      persistentVolumeReclaimPolicy: o.reclaimPolicy,
      storageClassName: o.storageClassName,
      volumeAttributesClassName: o.attributesClass,
      claimRef: o.claim,
      csi,
      ...o.inTreeSource,
      nodeAffinity: o.nodeAffinity === undefined ? undefined : { required: { nodeSelectorTerms: o.nodeAffinity } },
    }),
    ...(o.phase !== undefined ? { status: { phase: o.phase } } : {}),
  };
}

export function pod(o: PodOptions = {}): Pod {
  return {
    metadata: meta({ ...o, name: o.name ?? 'pod', namespace: o.namespace ?? 'ns' }),
    spec: defined({
      containers: [{ name: 'c', image: 'registry.invalid/none' }],
      volumes: [...(o.claims ?? []).map((claimName) => ({ name: claimName, persistentVolumeClaim: { claimName } })), ...(o.otherVolumes ?? [])],
      nodeName: o.nodeName,
    }),
    ...(o.phase !== undefined ? { status: { phase: o.phase } } : {}),
  };
}

export function storageClass(o: StorageClassOptions): StorageClass {
  return defined({
    metadata: meta({ ...o, name: o.name ?? 'fast' }),
    provisioner: o.provisioner,
    allowVolumeExpansion: o.allowVolumeExpansion,
    reclaimPolicy: o.reclaimPolicy ?? 'Retain',
    volumeBindingMode: o.volumeBindingMode ?? 'Immediate',
    parameters: o.parameters,
  });
}

export function volumeAttributesClass(o: VolumeAttributesClassOptions): VolumeAttributesClass {
  return defined({ metadata: meta({ ...o, name: o.name ?? 'gold' }), driverName: o.driverName, parameters: o.parameters });
}

/**
 * A built object as the request body type of @kubernetes/client-node. Its model classes type
 * timestamps as Date where the wire has strings; builders never set timestamps, so the plain
 * object is what the client would send.
 */
export function asApiBody<T>(object: Pvc | Pv | Pod | StorageClass | VolumeAttributesClass): T {
  return object as unknown as T;
}
