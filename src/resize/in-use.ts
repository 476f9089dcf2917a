// Which claims live pods use (§3.10), kept as claim key → pod UIDs and nothing else. Upstream
// caches every Pod object in the cluster for this; we keep a few strings per pod, which is what
// makes idle memory with tens of thousands of pods small (see bench/).

/** The only facts the resizer needs from a Pod; the pod informer's transform reduces Pods to this. */
export interface PodClaimUsage {
  [field: string]: unknown;
  metadata: { namespace: string; name: string; uid: string; resourceVersion?: string };
  /** Names of the PVCs the pod mounts through `volumes[].persistentVolumeClaim`. */
  claimNames: string[];
  /** Failed or Succeeded pods no longer use their volumes. */
  terminated: boolean;
}

interface RawPod {
  metadata?: { namespace?: string; name?: string; uid?: string; resourceVersion?: string };
  spec?: { volumes?: { persistentVolumeClaim?: { claimName?: string } }[] };
  status?: { phase?: string };
}

/** Informer transform: a full Pod in, its claim usage out. */
export function toPodClaimUsage(obj: unknown): PodClaimUsage {
  const pod = obj as RawPod;
  const claimNames: string[] = [];
  for (const volume of pod.spec?.volumes ?? []) {
    const claimName = volume.persistentVolumeClaim?.claimName;
    if (claimName) claimNames.push(claimName);
  }
  const phase = pod.status?.phase;
  const meta: PodClaimUsage['metadata'] = {
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
    uid: pod.metadata?.uid ?? '',
  };
  if (pod.metadata?.resourceVersion !== undefined) meta.resourceVersion = pod.metadata.resourceVersion;
  return { metadata: meta, claimNames, terminated: phase === 'Failed' || phase === 'Succeeded' };
}

export class ClaimUsage {
  /** "namespace/claimName" → UIDs of non-terminated pods that use it */
  private readonly podsByClaim = new Map<string, Set<string>>();
  /** pod UID → the claim keys recorded for it, to undo on update/delete */
  private readonly claimsByPod = new Map<string, string[]>();

  /** Records or refreshes a pod; a terminated pod is removed. */
  upsert(pod: PodClaimUsage): void {
    this.remove(pod);
    if (pod.terminated || pod.claimNames.length === 0) return;
    const keys = pod.claimNames.map((name) => `${pod.metadata.namespace}/${name}`);
    this.claimsByPod.set(pod.metadata.uid, keys);
    for (const key of keys) {
      let pods = this.podsByClaim.get(key);
      if (!pods) this.podsByClaim.set(key, (pods = new Set()));
      pods.add(pod.metadata.uid);
    }
  }

  remove(pod: Pick<PodClaimUsage, 'metadata'>): void {
    const keys = this.claimsByPod.get(pod.metadata.uid);
    if (!keys) return;
    this.claimsByPod.delete(pod.metadata.uid);
    for (const key of keys) {
      const pods = this.podsByClaim.get(key);
      pods?.delete(pod.metadata.uid);
      if (pods?.size === 0) this.podsByClaim.delete(key);
    }
  }

  isInUse(claimKey: string): boolean {
    return this.podsByClaim.has(claimKey);
  }
}
