// The narrow Kubernetes API port the controllers, the informers, the event recorder and the leader
// elector use, and its implementation over KubeHttp. Only the calls the resizer makes exist here;
// every object is plain JSON as the server sent it, every failure a KubeApiError, every patch has an
// explicit content type, and every call takes the caller's signal.
import type { KubeObject } from '../../model/objects.js';
import { ContentType } from './content-type.js';
import { KubeHttp, type KubeHttpOptions } from '../wire/http.js';
import { isNotFound } from './errors.js';
import { patchContentType, PatchType, withResourceVersion } from './patch.js';
import { groupVersionPath, resourcePath, Resources, type ResourceRef } from './resources.js';
import { decodeWatchStream, type WatchEvent } from './watch.js';

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

export interface HttpKubeClientOptions extends KubeHttpOptions {}

export class HttpKubeClient implements KubeClient, DiagnosticReads {
  private readonly http: KubeHttp;

  constructor(options: HttpKubeClientOptions | { http: KubeHttp }) {
    this.http = 'http' in options ? options.http : new KubeHttp(options);
  }

  get endpoint(): { server: string; proxy: string | undefined } {
    return { server: this.http.server.origin, proxy: this.http.proxy };
  }

  /** The client-side rate limit of this client's requests (see KubeHttp.rateLimit). */
  get rateLimit(): { qps: number; burst: number } {
    return this.http.rateLimit;
  }

  close(): void {
    this.http.close();
  }

  getSecret(namespace: string, name: string, signal: AbortSignal): Promise<KubeObject> {
    return this.get(Resources.secrets, namespace, name, signal);
  }

  getVolumeAttributesClass(name: string, signal: AbortSignal): Promise<KubeObject> {
    return this.get(Resources.volumeAttributesClasses, undefined, name, signal);
  }

  getPv(name: string, signal: AbortSignal): Promise<KubeObject> {
    return this.get(Resources.persistentVolumes, undefined, name, signal);
  }

  getPvc(namespace: string, name: string, signal: AbortSignal): Promise<KubeObject> {
    return this.get(Resources.persistentVolumeClaims, namespace, name, signal);
  }

  patchPv(name: string, patch: object, options: PatchOptions, signal: AbortSignal): Promise<KubeObject> {
    return this.patch(resourcePath(Resources.persistentVolumes, { name }), patch, options, signal);
  }

  patchPvc(namespace: string, name: string, patch: object, options: PatchOptions, signal: AbortSignal): Promise<KubeObject> {
    return this.patch(resourcePath(Resources.persistentVolumeClaims, { namespace, name }), patch, options, signal);
  }

  patchPvcStatus(namespace: string, name: string, patch: object, options: PatchOptions, signal: AbortSignal): Promise<KubeObject> {
    const path = resourcePath(Resources.persistentVolumeClaims, { namespace, name, subresource: 'status' });
    return this.patch(path, patch, options, signal);
  }

  async canI(attributes: AccessAttributes, signal: AbortSignal): Promise<AccessDecision> {
    const review = await this.http.request<{ status?: { allowed?: boolean; reason?: string } }>(
      {
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        contentType: ContentType.Json,
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { ...attributes } },
        },
      },
      signal,
    );
    const decision: AccessDecision = { allowed: review?.status?.allowed === true };
    if (review?.status?.reason) decision.reason = review.status.reason;
    return decision;
  }

  async createEvent(namespace: string, event: KubeObject, signal: AbortSignal): Promise<void> {
    await this.http.request<undefined>(
      {
        method: 'POST',
        path: resourcePath(Resources.events, { namespace }),
        body: event,
        contentType: ContentType.Json,
        ignoreResponseBody: true,
      },
      signal,
    );
  }

  async patchEvent(namespace: string, name: string, patch: object, options: PatchOptions, signal: AbortSignal): Promise<void> {
    const type = options.type ?? PatchType.StrategicMerge;
    await this.http.request<undefined>(
      {
        method: 'PATCH',
        path: resourcePath(Resources.events, { namespace, name }),
        body: withResourceVersion(patch, options.resourceVersion),
        contentType: patchContentType(type),
        ignoreResponseBody: true,
      },
      signal,
    );
  }

  async hasResource(groupVersion: string, kind: string, signal: AbortSignal): Promise<boolean> {
    try {
      const list = await this.http.request<{ resources?: Array<{ kind?: string; name?: string }> }>(
        { method: 'GET', path: groupVersionPath(groupVersion) },
        signal,
      );
      // Subresources (name "x/status") share the kind; the resource itself has no slash.
      return (list?.resources ?? []).some((r) => r.kind === kind && !r.name?.includes('/'));
    } catch (err) {
      if (isNotFound(err)) return false; // the group/version isn't served at all
      throw err;
    }
  }

  getLease(namespace: string, name: string, signal: AbortSignal): Promise<KubeObject> {
    return this.get(Resources.leases, namespace, name, signal);
  }

  getNode(name: string, signal: AbortSignal): Promise<KubeObject> {
    return this.get(Resources.nodes, undefined, name, signal);
  }

  getStorageClass(name: string, signal: AbortSignal): Promise<KubeObject> {
    return this.get(Resources.storageClasses, undefined, name, signal);
  }

  async listStorageClasses(signal: AbortSignal): Promise<KubeObject[]> {
    return (await this.listWatcher(Resources.storageClasses).list({}, signal)).items;
  }

  async serverVersion(signal: AbortSignal): Promise<string | undefined> {
    const version = await this.http.request<{ gitVersion?: string } | undefined>({ method: 'GET', path: '/version' }, signal);
    return version?.gitVersion;
  }

  createLease(namespace: string, lease: KubeObject, signal: AbortSignal): Promise<KubeObject> {
    return this.create(Resources.leases, namespace, lease, signal);
  }

  updateLease(namespace: string, lease: KubeObject, signal: AbortSignal): Promise<KubeObject> {
    const name = lease.metadata?.name;
    if (!name) throw new Error('lease has no name');
    return this.http.request<KubeObject>(
      {
        method: 'PUT',
        path: resourcePath(Resources.leases, { namespace, name }),
        body: lease,
        contentType: ContentType.Json,
      },
      signal,
    );
  }

  listWatcher(resource: ResourceRef): ListWatcher {
    const http = this.http;
    return {
      resource,
      list: (options, signal) =>
        http.request<KubeList>(
          {
            method: 'GET',
            path: resourcePath(resource, { namespace: options.namespace }),
            query: {
              labelSelector: options.labelSelector,
              fieldSelector: options.fieldSelector,
              limit: options.limit,
              continue: options.continue,
              resourceVersion: options.resourceVersion,
            },
          },
          signal,
        ),
      watch: async (options, signal) =>
        decodeWatchStream(
          await http.stream(
            {
              path: resourcePath(resource, { namespace: options.namespace }),
              query: {
                watch: true,
                labelSelector: options.labelSelector,
                fieldSelector: options.fieldSelector,
                resourceVersion: options.resourceVersion,
                timeoutSeconds: options.timeoutSeconds,
                allowWatchBookmarks: options.allowWatchBookmarks,
                sendInitialEvents: options.sendInitialEvents,
                resourceVersionMatch: options.resourceVersionMatch,
              },
            },
            signal,
          ),
        ),
    };
  }

  private get(ref: ResourceRef, namespace: string | undefined, name: string, signal: AbortSignal): Promise<KubeObject> {
    return this.http.request<KubeObject>({ method: 'GET', path: resourcePath(ref, { namespace, name }) }, signal);
  }

  private create(ref: ResourceRef, namespace: string, body: KubeObject, signal: AbortSignal): Promise<KubeObject> {
    return this.http.request<KubeObject>(
      {
        method: 'POST',
        path: resourcePath(ref, { namespace }),
        body,
        contentType: ContentType.Json,
      },
      signal,
    );
  }

  private patch(path: string, patch: object, options: PatchOptions, signal: AbortSignal): Promise<KubeObject> {
    const type = options.type ?? PatchType.StrategicMerge;
    return this.http.request<KubeObject>(
      {
        method: 'PATCH',
        path,
        body: withResourceVersion(patch, options.resourceVersion),
        contentType: patchContentType(type),
      },
      signal,
    );
  }
}
