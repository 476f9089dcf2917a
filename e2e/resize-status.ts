// When a claim's resize is over, as the node smoke tests judge it: the requested capacity
// reported, no resize condition and no resize status left. Only the resize conditions count:
// Kubernetes 1.37's controller-manager also keeps an "Unused" condition on claims, which says
// nothing about a resize.
import type * as k8s from '@kubernetes/client-node';

const RESIZE_CONDITIONS = new Set(['Resizing', 'FileSystemResizePending', 'ControllerResizeError', 'NodeResizeError']);

export function resizeFinished(pvc: k8s.V1PersistentVolumeClaim, size: string): boolean {
  const resizing = (pvc.status?.conditions ?? []).filter((c) => RESIZE_CONDITIONS.has(c.type));
  return pvc.status?.capacity?.['storage'] === size && resizing.length === 0 && Object.keys(pvc.status?.allocatedResourceStatuses ?? {}).length === 0;
}
