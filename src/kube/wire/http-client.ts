// The KubeClient port (api/client.ts) over KubeHttp: each call as the path, query and body the
// API server expects, watches decoded from the byte stream (api/watch.ts).
import type { KubeObject } from '../../model/objects.js';
import type { AccessAttributes, AccessDecision, DiagnosticReads, KubeClient, KubeList, ListWatcher, PatchOptions } from '../api/client.js';
import { ContentType } from '../api/content-type.js';
import { isNotFound } from '../api/errors.js';
import { patchContentType, PatchType, withResourceVersion } from '../api/patch.js';
import { groupVersionPath, resourcePath, Resources, type ResourceRef } from '../api/resources.js';
import { decodeWatchStream } from '../api/watch.js';
import { KubeHttp, type KubeHttpOptions } from './http.js';

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
