// Which claims live pods use (§3.10). Upstream caches every Pod object in the cluster for this.
// The pod informer here caches only the pods that count, a non-terminated pod that mounts a
// claim, each as a two-field record: the pod's cache key (the same string the store's map is
// keyed by, so it is held once) and the keys of its claims. Claim keys are interned against the
// usage index, so every pod of one claim shares one string. That keeps idle memory with tens of
// thousands of pods small (see bench/ and docs/differences/pod-cache.md).
import type { KubeObject, ObjectMeta } from '../model/objects.js';

/** What the pod informer caches for a pod that uses claims. */
export class PodClaimUsage implements KubeObject {
  [field: string]: unknown;

  constructor(
    /** "namespace/name": the informer's cache key for the pod. */
    readonly key: string,
    /** The "namespace/claimName" keys of its persistentVolumeClaim volumes: a string when there is one. */
    readonly claims: string | readonly string[],
  ) {}

  /** Made from the key on demand (the informer checks that a record keeps its object's key). */
  get metadata(): ObjectMeta {
    const slash = this.key.indexOf('/');
    return slash < 0 ? { name: this.key } : { namespace: this.key.slice(0, slash), name: this.key.slice(slash + 1) };
  }
}

/**
 * The record with the node the pod runs on, for auto-grow (which kubelet to ask for a claim's
 * usage). A subclass, so the pod cache pays for the field only when auto-grow is on.
 */
export class PodClaimUsageOnNode extends PodClaimUsage {
  constructor(
    key: string,
    claims: string | readonly string[],
    /** spec.nodeName; '' while the pod is not scheduled. */
    readonly nodeName: string,
  ) {
    super(key, claims);
  }
}

interface RawPod {
  metadata?: { namespace?: string };
  spec?: { nodeName?: string; volumes?: { persistentVolumeClaim?: { claimName?: string } }[] };
  status?: { phase?: string };
}

/**
 * Informer transform: a full Pod in, its claim usage out. A pod that has ended (Failed or
 * Succeeded) or mounts no claim uses nothing: it is not cached at all (undefined), so the informer
 * treats it as absent and a pod that ends is a delete to the handlers. `intern` returns the claim
 * key instance already held for an equal key; with `internNode` the record keeps the pod's node
 * name too (one shared instance per node).
 */
export function toPodClaimUsage(
  obj: KubeObject,
  key: string,
  intern: (claimKey: string) => string = (k) => k,
  internNode?: (nodeName: string) => string,
): PodClaimUsage | undefined {
  const pod = obj as RawPod;
  const phase = pod.status?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') return undefined;
  const namespace = pod.metadata?.namespace ?? '';
  let claims: string | string[] | undefined;
  for (const volume of pod.spec?.volumes ?? []) {
    const claimName = volume.persistentVolumeClaim?.claimName;
    if (!claimName) continue;
    const claim = intern(`${namespace}/${claimName}`);
    if (claims === undefined) claims = claim;
    else if (typeof claims === 'string') claims = [claims, claim];
    else claims.push(claim);
  }
  if (claims === undefined) return undefined;
  return internNode ? new PodClaimUsageOnNode(key, claims, internNode(pod.spec?.nodeName ?? '')) : new PodClaimUsage(key, claims);
}

/** The pods using one claim: the claim key instance records share, and one pod key or a set of them. */
interface ClaimUsers {
  readonly claim: string;
  pods: string | Set<string>;
}

/** claim key → the pods using it; fed add/remove by the pod informer's handlers. */
export class ClaimUsage {
  private readonly usersByClaim = new Map<string, ClaimUsers>();

  add(pod: PodClaimUsage): void {
    for (const claim of claimsOf(pod)) {
      const users = this.usersByClaim.get(claim);
      if (!users) this.usersByClaim.set(claim, { claim, pods: pod.key });
      else if (typeof users.pods !== 'string') users.pods.add(pod.key);
      else if (users.pods !== pod.key) users.pods = new Set([users.pods, pod.key]);
    }
  }

  /** Idempotent: removing a pod that is not recorded changes nothing. */
  remove(pod: PodClaimUsage): void {
    for (const claim of claimsOf(pod)) {
      const users = this.usersByClaim.get(claim);
      if (!users) continue;
      if (typeof users.pods === 'string') {
        if (users.pods === pod.key) this.usersByClaim.delete(claim);
        continue;
      }
      users.pods.delete(pod.key);
      if (users.pods.size === 1) users.pods = users.pods.values().next().value!;
      else if (users.pods.size === 0) this.usersByClaim.delete(claim);
    }
  }

  isInUse(claimKey: string): boolean {
    return this.usersByClaim.has(claimKey);
  }

  /** The instance of this claim key that the index already holds, else the key itself. */
  intern(claimKey: string): string {
    return this.usersByClaim.get(claimKey)?.claim ?? claimKey;
  }
}

function claimsOf(pod: PodClaimUsage): readonly string[] {
  return typeof pod.claims === 'string' ? [pod.claims] : pod.claims;
}
