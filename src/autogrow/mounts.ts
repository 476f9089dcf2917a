// Which node mounts each claim auto-grow wants usage of, read from the pod cache the resize
// controller already keeps (docs/auto-grow.md, "Where usage comes from"): every running pod that
// mounts a claim is one small record (its key, its claim keys and, with auto-grow on, its node).
// A poll walks those records once; nothing else is indexed, so the memory auto-grow adds does not
// grow with the number of pods. A pod not yet scheduled (no node) mounts nothing yet.

/** A pod cache record as auto-grow reads it. */
export interface PodMount {
  /** The "namespace/claimName" keys of its persistentVolumeClaim volumes: a string when there is one. */
  readonly claims: string | readonly string[];
  /** spec.nodeName ('' or absent while unscheduled). */
  readonly nodeName?: string;
}

/**
 * The wanted claims grouped by the node that mounts them, in the order nodes are met. A claim
 * that pods on several nodes mount (ReadWriteMany) is asked of each; the usage port keeps the
 * newest sample.
 */
export function claimsByNode(pods: Iterable<PodMount>, wanted: ReadonlySet<string>): Map<string, Set<string>> {
  const byNode = new Map<string, Set<string>>();
  if (wanted.size === 0) return byNode;
  for (const pod of pods) {
    const node = pod.nodeName;
    if (!node) continue;
    const claims = typeof pod.claims === 'string' ? [pod.claims] : pod.claims;
    for (const claim of claims) {
      if (!wanted.has(claim)) continue;
      let set = byNode.get(node);
      if (set === undefined) {
        set = new Set();
        byNode.set(node, set);
      }
      set.add(claim);
    }
  }
  return byNode;
}
