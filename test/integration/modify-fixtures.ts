// Shared by the modify integration tests: VolumeAttributesClasses, the PVC's class, and a PVC
// reached a modify state. Everything goes through the real API server as the administrator.
import { uniqueName } from '../cluster/fixtures.js';
import { patchAs, statusOf, type KubeClients } from '../cluster/kube.js';
import type { Pvc } from '../../src/model/objects.js';
import { readPvc } from '../support/api-reads.js';
import { asApiBody, volumeAttributesClass } from '../support/builders.js';
import { eventually } from '../support/in-process-resizer.js';

export async function createVac(admin: KubeClients, driverName: string, parameters: Record<string, string>, name = uniqueName('rz-vac')): Promise<string> {
  await admin.storage.createVolumeAttributesClass({ body: asApiBody(volumeAttributesClass({ name, driverName, parameters })) });
  return name;
}

export async function deleteVac(admin: KubeClients, name: string): Promise<void> {
  try {
    await admin.storage.deleteVolumeAttributesClass({ name });
  } catch (err) {
    if (statusOf(err) !== 404) throw err;
  }
}

/** Sets (or with null, clears) spec.volumeAttributesClassName, as a user would with kubectl patch. */
export async function setClass(admin: KubeClients, namespace: string, name: string, vac: string | null): Promise<void> {
  await admin.core.patchNamespacedPersistentVolumeClaim({ namespace, name, body: { spec: { volumeAttributesClassName: vac } } }, patchAs());
}

/** Waits until the PVC satisfies `ok`, returning it. */
export function pvcWhen(admin: KubeClients, namespace: string, name: string, what: string, ok: (pvc: Pvc) => boolean, timeoutMs = 20_000): Promise<Pvc> {
  return eventually(
    what,
    async () => {
      const pvc = await readPvc(admin, namespace, name);
      return ok(pvc) ? pvc : undefined;
    },
    timeoutMs,
  );
}

/** The modify is complete: current class = vac, no modify status, no modify conditions. */
export function modifiedTo(vac: string): (pvc: Pvc) => boolean {
  return (pvc) =>
    pvc.status?.currentVolumeAttributesClassName === vac &&
    !pvc.status?.modifyVolumeStatus &&
    !(pvc.status?.conditions ?? []).some((c) => c.type === 'ModifyingVolume' || c.type === 'ModifyVolumeError');
}

export function conditionOf(pvc: Pvc, type: string) {
  return pvc.status?.conditions?.find((c) => c.type === type);
}

/** Log lines of a failed sync, a 409, or a Conflict: none is expected when resize and modify share a PVC. */
export function conflictLines(logs: readonly string[]): string[] {
  // Only the message and fields: the klog header's time and pid are digits that may contain 409.
  return logs.filter((l) => /Error syncing PVC|Conflict|\b409\b|the object has been modified/.test(l.slice(l.indexOf('] ') + 1)));
}
