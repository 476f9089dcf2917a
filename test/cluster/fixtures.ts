// Objects for integration tests, made the way a provisioner and the PV controller would (there is
// no kube-controller-manager): a volume created on the CSI driver, a PV and a PVC bound to each
// other by hand. Every name is unique, so tests never collide on the shared cluster.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { loadDriverComponents } from './components.js';
import { csiTestClient } from './csi-proto.js';
import { messageOf, patchAs, retryWhileStarting, statusOf, type KubeClients } from './kube.js';
import type { NodeSelectorTerm } from '../../src/model/node-affinity.js';
import { asApiBody, pv, pvc, storageClass } from '../support/builders.js';

let counter = 0;
/** prefix-<n>-<random>: unique within and across test processes, valid as any object name. */
export function uniqueName(prefix = 'rz'): string {
  counter += 1;
  return `${prefix}-${counter}-${randomBytes(3).toString('hex')}`;
}

export async function createNamespace(clients: KubeClients, prefix = 'rz-test'): Promise<string> {
  const name = uniqueName(prefix);
  await retryWhileStarting(`creating namespace ${name}`, () => clients.core.createNamespace({ body: { metadata: { name } } }));
  return name;
}

export async function createStorageClass(
  clients: KubeClients,
  opts: { name?: string; allowVolumeExpansion: boolean; provisioner: string; parameters?: Record<string, string> },
): Promise<k8s.V1StorageClass> {
  const body = asApiBody<k8s.V1StorageClass>(storageClass({ ...opts, name: opts.name ?? uniqueName('rz-sc') }));
  return retryWhileStarting('creating StorageClass', () => clients.storage.createStorageClass({ body }));
}

/** A Node object named `name` with its kubernetes.io/hostname label (no kubelet behind it), deleted when the test ends. */
export async function createNode(clients: KubeClients, t: { after: (fn: () => unknown) => void }, name: string): Promise<void> {
  await clients.core.createNode({ body: { metadata: { name, labels: { 'kubernetes.io/hostname': name } } } });
  t.after(() =>
    clients.core.deleteNode({ name }).then(
      () => undefined,
      () => undefined,
    ),
  );
}

/**
 * A copy of the resizer's kubeconfig (`resizerKubeconfigPath`) in a new temp directory named after
 * `tempPrefix`, whose user is the new ServiceAccount `no-rules` of `namespace`, bound to no role.
 * Returns the copy's path.
 */
export async function kubeconfigWithoutRules(clients: KubeClients, resizerKubeconfigPath: string, namespace: string, tempPrefix: string): Promise<string> {
  await clients.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'no-rules' } } });
  const token = await clients.core.createNamespacedServiceAccountToken({
    namespace,
    name: 'no-rules',
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  const kubeconfig = JSON.parse(readFileSync(resizerKubeconfigPath, 'utf8')) as { users: { user: { token: string } }[] };
  kubeconfig.users[0]!.user.token = token.status!.token!;
  const path = join(mkdtempSync(join(tmpdir(), tempPrefix)), 'kubeconfig');
  writeFileSync(path, JSON.stringify(kubeconfig));
  return path;
}

export type AccessMode = 'ReadWriteOnce' | 'ReadOnlyMany' | 'ReadWriteMany' | 'ReadWriteOncePod';

export interface ProvisionOptions {
  namespace?: string;
  /** A quantity such as 1Gi. */
  size: string;
  storageClassName: string;
  driverName: string;
  volumeMode?: 'Filesystem' | 'Block';
  accessModes?: AccessMode[];
  fsType?: string;
  mountOptions?: string[];
  controllerExpandSecretRef?: { name: string; namespace: string };
  pvAnnotations?: Record<string, string>;
  pvcAnnotations?: Record<string, string>;
  /** The official csi.proto (ClusterHandle.csiProtoPath); found through components.env by default. */
  csiProtoPath?: string;
  /**
   * A volume the caller already made on its driver (e.g. test/fakes/fault-driver.ts, which has no
   * CreateVolume): no CreateVolume call, the PV points at this handle.
   */
  existingVolumeId?: string;
  /** The PV's spec.nodeAffinity (immutable after creation, so set here). */
  nodeAffinity?: k8s.V1VolumeNodeAffinity;
}

export interface Provisioned {
  pvc: k8s.V1PersistentVolumeClaim;
  pv: k8s.V1PersistentVolume;
  volumeId: string;
}

const csiAccessMode: Record<AccessMode, string> = {
  ReadWriteOnce: 'SINGLE_NODE_WRITER',
  ReadOnlyMany: 'MULTI_NODE_READER_ONLY',
  ReadWriteMany: 'MULTI_NODE_MULTI_WRITER',
  ReadWriteOncePod: 'SINGLE_NODE_SINGLE_WRITER',
};

/** Bytes of a Kubernetes quantity (test inputs only: integers with an optional binary or decimal suffix). */
export function quantityBytes(q: string): bigint {
  const m = /^(\d+)(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$/.exec(q);
  if (!m) throw new Error(`unsupported quantity ${q} in a fixture`);
  const mult: Record<string, bigint> = {
    Ki: 1n << 10n,
    Mi: 1n << 20n,
    Gi: 1n << 30n,
    Ti: 1n << 40n,
    Pi: 1n << 50n,
    k: 10n ** 3n,
    M: 10n ** 6n,
    G: 10n ** 9n,
    T: 10n ** 12n,
    P: 10n ** 15n,
  };
  return BigInt(m[1]!) * (m[2] ? mult[m[2]]! : 1n);
}

/**
 * CreateVolume on the driver, then a PVC (volumeName set) and a PV (csi source, claimRef with the
 * PVC's uid), both marked Bound with capacity = size: what the resizer sees for a freshly
 * provisioned volume.
 */
export async function provisionVolume(clients: KubeClients, csiAddress: string, opts: ProvisionOptions): Promise<Provisioned> {
  const namespace = opts.namespace ?? 'default';
  const pvcName = uniqueName('rz-pvc');
  const pvName = uniqueName('rz-pv');
  const accessModes = opts.accessModes ?? ['ReadWriteOnce'];
  const volumeMode = opts.volumeMode ?? 'Filesystem';

  let volumeId: string;
  if (opts.existingVolumeId !== undefined) {
    volumeId = opts.existingVolumeId;
  } else {
    const protoPath = opts.csiProtoPath ?? (await loadDriverComponents()).csiProtoPath;
    const csi = csiTestClient(protoPath, csiAddress);
    try {
      const res = await csi.call<{ volume: { volume_id: string } }>('Controller', 'CreateVolume', {
        name: pvName,
        capacity_range: { required_bytes: quantityBytes(opts.size).toString() },
        volume_capabilities: accessModes.map((mode) => ({
          ...(volumeMode === 'Block' ? { block: {} } : { mount: { fs_type: opts.fsType ?? '', mount_flags: opts.mountOptions ?? [] } }),
          access_mode: { mode: csiAccessMode[mode] },
        })),
        parameters: {},
      });
      volumeId = res.volume.volume_id;
    } finally {
      csi.close();
    }
  }

  const created = await retryWhileStarting('creating PVC', () =>
    clients.core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: asApiBody(
        pvc({
          name: pvcName,
          namespace,
          annotations: opts.pvcAnnotations,
          phase: null,
          accessModes,
          request: opts.size,
          storageClassName: opts.storageClassName,
          volumeName: pvName,
          volumeMode,
        }),
      ),
    }),
  );

  await clients.core.createPersistentVolume({
    body: asApiBody(
      pv({
        name: pvName,
        annotations: { 'pv.kubernetes.io/provisioned-by': opts.driverName, ...opts.pvAnnotations },
        capacity: opts.size,
        accessModes,
        reclaimPolicy: 'Retain',
        storageClassName: opts.storageClassName,
        volumeMode,
        mountOptions: opts.mountOptions,
        nodeAffinity: opts.nodeAffinity?.required?.nodeSelectorTerms as NodeSelectorTerm[] | undefined,
        driver: opts.driverName,
        volumeHandle: volumeId,
        csi: {
          ...(volumeMode === 'Block' || opts.fsType === undefined ? {} : { fsType: opts.fsType }),
          ...(opts.controllerExpandSecretRef ? { controllerExpandSecretRef: opts.controllerExpandSecretRef } : {}),
        },
        claim: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace, name: pvcName, uid: created.metadata!.uid! },
      }),
    ),
  });

  const boundPv = await clients.core.patchPersistentVolumeStatus({ name: pvName, body: { status: { phase: 'Bound' } } }, patchAs());
  const boundPvc = await clients.core.patchNamespacedPersistentVolumeClaimStatus(
    { name: pvcName, namespace, body: { status: { phase: 'Bound', accessModes, capacity: { storage: opts.size } } } },
    patchAs(),
  );
  return { pvc: boundPvc, pv: boundPv, volumeId };
}

/**
 * Sets spec.resources.requests.storage. The resize admission plugin reads StorageClasses from an
 * informer, so right after createStorageClass() a resize can be refused for a moment with "the
 * storageclass that provisions the pvc must support resize"; `retryUntilAdmittedMs` retries that
 * refusal (use it only where the resize is expected to be admitted).
 */
export async function requestPvcSize(
  clients: KubeClients,
  namespace: string,
  name: string,
  size: string,
  opts: { retryUntilAdmittedMs?: number } = {},
): Promise<k8s.V1PersistentVolumeClaim> {
  const until = Date.now() + (opts.retryUntilAdmittedMs ?? 0);
  for (;;) {
    try {
      return await clients.core.patchNamespacedPersistentVolumeClaim(
        { name, namespace, body: { spec: { resources: { requests: { storage: size } } } } },
        patchAs(),
      );
    } catch (err) {
      const lagging = statusOf(err) === 403 && /storageclass that provisions the pvc must support resize/.test(messageOf(err));
      if (!lagging || Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Deletes a PVC for good. Without kube-controller-manager nothing removes the
 * kubernetes.io/pvc-protection finalizer, so it is cleared first. Missing objects are fine.
 */
export async function deletePvc(clients: KubeClients, namespace: string, name: string): Promise<void> {
  await ignoreNotFound(clients.core.patchNamespacedPersistentVolumeClaim({ name, namespace, body: { metadata: { finalizers: null } } }, patchAs()));
  await ignoreNotFound(clients.core.deleteNamespacedPersistentVolumeClaim({ name, namespace }));
}

/** The same for a PV (kubernetes.io/pv-protection). */
export async function deletePv(clients: KubeClients, name: string): Promise<void> {
  await ignoreNotFound(clients.core.patchPersistentVolume({ name, body: { metadata: { finalizers: null } } }, patchAs()));
  await ignoreNotFound(clients.core.deletePersistentVolume({ name }));
}

/** Deletes both halves of provisionVolume()'s result (the driver's in-memory volume stays). */
export async function deleteProvisioned(clients: KubeClients, p: Provisioned): Promise<void> {
  await deletePvc(clients, p.pvc.metadata!.namespace!, p.pvc.metadata!.name!);
  await deletePv(clients, p.pv.metadata!.name!);
}

async function ignoreNotFound(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (statusOf(err) !== 404) throw err;
  }
}
