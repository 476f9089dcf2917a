// The narrow Kubernetes API port the controllers, the informers, the event recorder and the leader
// elector use: only the calls the resizer makes exist here; every object is plain JSON as the
// server sent it, every failure a KubeApiError, every patch has an explicit content type, and every
// call takes the caller's signal. Its implementation over HTTP is wire/http-client.ts.
import type { KubeObject } from '../../model/objects.js';
import type { PatchType } from './patch.js';
import type { ResourceRef } from './resources.js';
import type { WatchEvent } from './watch.js';

export interface PatchOptions {
  /** Precondition: injected as metadata.resourceVersion, so a stale write fails with 409. */
  resourceVersion?: string;
  /** Default strategic merge (what upstream sends); 'merge' for application/merge-patch+json. */
  type?: PatchType;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  timeoutSeconds?: number;
  allowWatchBookmarks?: boolean;
  /**
   * Watch-list (streamed initial state): the server first sends every current object as ADDED,
   * then a BOOKMARK annotated `k8s.io/initial-events-end: "true"`, then changes as usual.
   */
  sendInitialEvents?: boolean;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** What an informer needs: list pages and watch streams of one resource. */
export interface ListWatcher {
  readonly resource: ResourceRef;
  list(options: ListOptions, signal: AbortSignal): Promise<KubeList>;
  watch(options: WatchOptions, signal: AbortSignal): Promise<AsyncIterable<WatchEvent>>;
}

export interface KubeClient {
  getSecret(namespace: string, name: string, signal: AbortSignal): Promise<KubeObject>;
  getVolumeAttributesClass(name: string, signal: AbortSignal): Promise<KubeObject>;
  getPv(name: string, signal: AbortSignal): Promise<KubeObject>;
  getPvc(namespace: string, name: string, signal: AbortSignal): Promise<KubeObject>;
  /** Patches the PV main resource; returns the object the server stored. */
  patchPv(name: string, patch: object, options: PatchOptions, signal: AbortSignal): Promise<KubeObject>;
  /** Patches the PVC itself (auto-grow's request and annotations); returns the object the server stored. */
  patchPvc(namespace: string, name: string, patch: object, options: PatchOptions, signal: AbortSignal): Promise<KubeObject>;
  /** Patches the PVC status subresource; returns the object the server stored. */
  patchPvcStatus(namespace: string, name: string, patch: object, options: PatchOptions, signal: AbortSignal): Promise<KubeObject>;
  /** Writes an Event; the stored Event is not read back (nobody uses it). */
  createEvent(namespace: string, event: KubeObject, signal: AbortSignal): Promise<void>;
  patchEvent(namespace: string, name: string, patch: object, options: PatchOptions, signal: AbortSignal): Promise<void>;
  /** Discovery: does the server serve `kind` in groupVersion (e.g. 'storage.k8s.io/v1')? */
  hasResource(groupVersion: string, kind: string, signal: AbortSignal): Promise<boolean>;
  getLease(namespace: string, name: string, signal: AbortSignal): Promise<KubeObject>;
  /** --node-deployment: the replica's own Node, read once at startup for its labels. */
  getNode(name: string, signal: AbortSignal): Promise<KubeObject>;
  createLease(namespace: string, lease: KubeObject, signal: AbortSignal): Promise<KubeObject>;
  /** PUT with the lease's metadata.resourceVersion: 409 if someone else wrote it first. */
  updateLease(namespace: string, lease: KubeObject, signal: AbortSignal): Promise<KubeObject>;
  listWatcher(resource: ResourceRef): ListWatcher;
  /** SelfSubjectAccessReview: may this client's identity do that? */
  canI(attributes: AccessAttributes, signal: AbortSignal): Promise<AccessDecision>;
}

/**
 * What `doctor` and `explain` read besides the sidecar's own calls: where the API server is
 * reached, its version, and StorageClasses (which the sidecar never reads).
 */
export interface DiagnosticReads {
  /** The server's origin and the proxy requests go through (password masked), if any. */
  readonly endpoint: { readonly server: string; readonly proxy: string | undefined };
  /** The server's gitVersion from /version, undefined when it does not say. */
  serverVersion(signal: AbortSignal): Promise<string | undefined>;
  getStorageClass(name: string, signal: AbortSignal): Promise<KubeObject>;
  listStorageClasses(signal: AbortSignal): Promise<KubeObject[]>;
}

export interface AccessAttributes {
  verb: string;
  /** '' for the core group. */
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
}

export interface AccessDecision {
  allowed: boolean;
  reason?: string;
}
