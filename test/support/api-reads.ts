// Reads through the API server as the administrator, as plain JSON, for assertions.
import type { KubeClients } from '../cluster/kube.js';
import type { Pv, Pvc } from '../../src/model/objects.js';

const plain = <T>(obj: unknown): T => JSON.parse(JSON.stringify(obj)) as T;

export async function readPvc(clients: KubeClients, namespace: string, name: string): Promise<Pvc> {
  return plain<Pvc>(await clients.core.readNamespacedPersistentVolumeClaim({ namespace, name }));
}

export async function readPv(clients: KubeClients, name: string): Promise<Pv> {
  return plain<Pv>(await clients.core.readPersistentVolume({ name }));
}

export interface SeenEvent {
  type: string;
  reason: string;
  message: string;
  count: number;
  source: string;
}

export async function eventsFor(clients: KubeClients, namespace: string, name: string): Promise<SeenEvent[]> {
  const list = await clients.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` });
  return list.items
    .map((e) => ({
      type: e.type ?? '',
      reason: e.reason ?? '',
      message: e.message ?? '',
      count: e.count ?? 1,
      source: e.source?.component ?? '',
      at: e.firstTimestamp ? new Date(e.firstTimestamp).getTime() : 0,
    }))
    .sort((a, b) => a.at - b.at)
    .map(({ at: _at, ...rest }) => rest);
}

export function reasons(events: readonly SeenEvent[]): string[] {
  return events.map((e) => e.reason);
}
