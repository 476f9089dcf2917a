// A small in-memory Kubernetes API server over node:http on 127.0.0.1, for unit tests of the
// informer's recovery paths, the request layer, events and leader election. It speaks just enough of
// the API: get/list (limit/continue)/watch (resourceVersion, bookmarks, timeoutSeconds)/create/
// update (resourceVersion check)/patch (merge and strategic, resourceVersion precondition, status
// subresource)/delete and group-version discovery. Faults are switched on from the test: drop
// watch connections, compact history so resumes get 410 (HTTP status or ERROR event), hang watches
// silently, fail the next requests with a status.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpKubeClient } from '../../src/kube/wire/http-client.js';
import type { ClientConfig } from '../../src/kube/wire/kubeconfig.js';

type Obj = Record<string, any>;

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  contentType: string | undefined;
  authorization: string | undefined;
  body: unknown;
}

interface Watcher {
  collection: string;
  namespace: string | undefined;
  labelSelector: string | undefined;
  fieldSelector: string | undefined;
  bookmarks: boolean;
  res: http.ServerResponse;
  hang: boolean;
}

interface HistoryEntry {
  rv: number;
  collection: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: Obj;
}

interface Parsed {
  collection: string; // "group/version/resource"
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

export interface FailRule {
  status: number;
  reason?: string;
  times?: number;
  match?: (r: RecordedRequest) => boolean;
}

export class FakeApiServer {
  readonly requests: RecordedRequest[] = [];
  /** What watch requests resuming from a compacted resourceVersion get. */
  goneMode: 'http' | 'event' = 'http';
  /** New watches are accepted and then kept silent forever (a half-open connection). */
  hangWatches = false;
  /** Discovery documents by groupVersion, e.g. 'storage.k8s.io/v1' → [{ name, kind }]. */
  readonly discovery = new Map<string, Array<{ name: string; kind: string; namespaced?: boolean }>>();
  /** Milliseconds added before answering each list page. */
  listDelayMs = 0;
  /**
   * Watch-list requests (sendInitialEvents=true): 'supported' streams the objects then the
   * initial-events-end bookmark, as kube-apiserver ≥1.32 does; 'rejected' answers 422, as a server
   * without the feature does.
   */
  watchList: 'supported' | 'rejected' = 'rejected';

  private readonly objects = new Map<string, Map<string, Obj>>();
  private readonly kinds = new Map<string, string>();
  private history: HistoryEntry[] = [];
  private compactedRv = 0;
  private rv = 100;
  private uid = 0;
  private readonly watchers = new Set<Watcher>();
  private readonly failRules: FailRule[] = [];
  private server: http.Server | undefined;
  private sockets = new Set<import('node:net').Socket>();
  private connections = 0;
  url = '';

  /** TCP connections accepted so far (keep-alive reuses one). */
  get connectionsAccepted(): number {
    return this.connections;
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.on('connection', (s) => {
      this.connections++;
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const w of this.watchers) w.res.destroy();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** A client configuration for this server with a bearer token. */
  kubeConfig(token = 'fake-token'): ClientConfig {
    return { server: this.url, insecureSkipTlsVerify: true, auth: { kind: 'token', token } };
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  get openWatches(): number {
    return this.watchers.size;
  }

  watchRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.query.get('watch') === 'true');
  }

  listRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.method === 'GET' && r.query.get('watch') !== 'true');
  }

  failNext(rule: FailRule): void {
    this.failRules.push({ times: 1, ...rule });
  }

  // ---- direct state manipulation (the "admin" side) ----

  /** Creates or replaces an object; collection like 'v1/persistentvolumeclaims' or 'coordination.k8s.io/v1/leases'. */
  put(collection: string, obj: Obj): Obj {
    const key = this.keyOf(obj.metadata?.namespace, obj.metadata?.name);
    const bucket = this.bucket(collection);
    const exists = bucket.has(key);
    const stored = this.stamp(collection, structuredClone(obj), bucket.get(key));
    bucket.set(key, stored);
    this.record(collection, exists ? 'MODIFIED' : 'ADDED', stored);
    return structuredClone(stored);
  }

  remove(collection: string, namespace: string | undefined, name: string): void {
    const bucket = this.bucket(collection);
    const key = this.keyOf(namespace, name);
    const obj = bucket.get(key);
    if (!obj) return;
    bucket.delete(key);
    this.rv++;
    const gone = { ...structuredClone(obj), metadata: { ...obj.metadata, resourceVersion: String(this.rv) } };
    this.record(collection, 'DELETED', gone, false);
  }

  get(collection: string, namespace: string | undefined, name: string): Obj | undefined {
    const obj = this.bucket(collection).get(this.keyOf(namespace, name));
    return obj && structuredClone(obj);
  }

  list(collection: string): Obj[] {
    return [...this.bucket(collection).values()].map((o) => structuredClone(o));
  }

  /** Forget history: resuming a watch from any resourceVersion seen so far now gets 410 Gone. */
  compact(): void {
    this.compactedRv = this.rv + 1;
    this.history = [];
  }

  /** Ends every open watch from the server side, abruptly (socket destroyed). */
  dropWatches(): void {
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
  }

  /** Ends every open watch cleanly, as a server-side timeout does. */
  endWatches(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }

  /** Sends an ERROR event with code 410 on every open watch, then ends it. */
  sendGoneToWatches(): void {
    for (const w of this.watchers) {
      w.res.end(JSON.stringify({ type: 'ERROR', object: goneStatus() }) + '\n');
    }
    this.watchers.clear();
  }

  /** Sends a BOOKMARK with the current resourceVersion to watches that asked for bookmarks. */
  bookmark(): void {
    for (const w of this.watchers) {
      if (!w.bookmarks || w.hang) continue;
      const kind = this.kinds.get(w.collection) ?? 'Object';
      w.res.write(
        JSON.stringify({ type: 'BOOKMARK', object: { kind, apiVersion: apiVersion(w.collection), metadata: { resourceVersion: String(this.rv) } } }) + '\n',
      );
    }
  }

  // ---- HTTP ----

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const text = Buffer.concat(chunks).toString('utf8');
      const record: RecordedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        contentType: req.headers['content-type'],
        authorization: req.headers.authorization,
        body: text === '' ? undefined : safeJson(text),
      };
      this.requests.push(record);
      try {
        this.route(record, res);
      } catch (err) {
        sendStatus(res, 500, 'InternalError', String(err));
      }
    });
  }

  private route(r: RecordedRequest, res: http.ServerResponse): void {
    const rule = this.failRules.find((f) => !f.match || f.match(r));
    if (rule) {
      rule.times = (rule.times ?? 1) - 1;
      if (rule.times <= 0) this.failRules.splice(this.failRules.indexOf(rule), 1);
      return sendStatus(res, rule.status, rule.reason ?? 'InternalError', 'injected failure');
    }
    const disc = /^\/(?:api|apis\/[^/]+)\/([^/]+)$/.exec(r.path);
    if (disc && r.method === 'GET') {
      const gv = r.path.startsWith('/apis/') ? r.path.slice('/apis/'.length) : disc[1]!;
      const resources = this.discovery.get(gv);
      if (!resources) return sendStatus(res, 404, 'NotFound', 'the server could not find the requested resource');
      return sendJson(res, 200, { kind: 'APIResourceList', groupVersion: gv, resources });
    }
    const p = parsePath(r.path);
    if (!p) return sendStatus(res, 404, 'NotFound', 'unknown path');
    switch (r.method) {
      case 'GET':
        if (p.name === undefined) return r.query.get('watch') === 'true' ? this.watch(p, r, res) : this.listHttp(p, r, res);
        return this.getHttp(p, res);
      case 'POST':
        return this.createHttp(p, r, res);
      case 'PUT':
        return this.updateHttp(p, r, res);
      case 'PATCH':
        return this.patchHttp(p, r, res);
      case 'DELETE': {
        const existing = this.bucket(p.collection).get(this.keyOf(p.namespace, p.name));
        if (!existing) return notFound(res, p);
        this.remove(p.collection, p.namespace, p.name!);
        return sendJson(res, 200, existing);
      }
      default:
        return sendStatus(res, 405, 'MethodNotAllowed', 'method not allowed');
    }
  }

  private getHttp(p: Parsed, res: http.ServerResponse): void {
    const obj = this.bucket(p.collection).get(this.keyOf(p.namespace, p.name));
    if (!obj) return notFound(res, p);
    sendJson(res, 200, obj);
  }

  private listHttp(p: Parsed, r: RecordedRequest, res: http.ServerResponse): void {
    const selector = r.query.get('labelSelector') ?? undefined;
    const fields = r.query.get('fieldSelector') ?? undefined;
    const all = [...this.bucket(p.collection).entries()]
      .filter(([, o]) => !p.namespace || o.metadata?.namespace === p.namespace)
      .filter(([, o]) => matchesLabels(o, selector) && matchesFields(o, fields))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, o]) => {
        const { kind: _k, apiVersion: _a, ...rest } = o;
        return rest;
      });
    const limit = Number(r.query.get('limit') ?? 0);
    let offset = 0;
    let listRv = this.rv;
    const cont = r.query.get('continue');
    if (cont) {
      const token = JSON.parse(Buffer.from(cont, 'base64').toString()) as { offset: number; rv: number };
      if (token.rv < this.compactedRv) return sendStatus(res, 410, 'Expired', 'The provided continue parameter is too old');
      offset = token.offset;
      listRv = token.rv;
    }
    const items = limit > 0 ? all.slice(offset, offset + limit) : all.slice(offset);
    const next = limit > 0 && offset + limit < all.length ? Buffer.from(JSON.stringify({ offset: offset + limit, rv: listRv })).toString('base64') : undefined;
    const body = {
      kind: `${this.kinds.get(p.collection) ?? 'Object'}List`,
      apiVersion: apiVersion(p.collection),
      metadata: { resourceVersion: String(listRv), ...(next ? { continue: next } : {}) },
      items,
    };
    if (this.listDelayMs > 0) setTimeout(() => sendJson(res, 200, body), this.listDelayMs);
    else sendJson(res, 200, body);
  }

  private watch(p: Parsed, r: RecordedRequest, res: http.ServerResponse): void {
    const initialEvents = r.query.get('sendInitialEvents') === 'true';
    if (initialEvents && this.watchList === 'rejected') {
      return sendStatus(
        res,
        422,
        'Invalid',
        'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
      );
    }
    const from = r.query.get('resourceVersion') ?? '';
    const fromRv = from === '' || from === '0' ? undefined : Number(from);
    if (fromRv !== undefined && fromRv < this.compactedRv - 1 && this.goneMode === 'http') {
      return sendStatus(res, 410, 'Expired', `too old resource version: ${fromRv}`);
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const w: Watcher = {
      collection: p.collection,
      namespace: p.namespace,
      labelSelector: r.query.get('labelSelector') ?? undefined,
      fieldSelector: r.query.get('fieldSelector') ?? undefined,
      bookmarks: r.query.get('allowWatchBookmarks') === 'true',
      res,
      hang: this.hangWatches,
    };
    this.watchers.add(w);
    res.once('close', () => this.watchers.delete(w));
    if (w.hang) return;
    if (fromRv !== undefined && fromRv < this.compactedRv - 1) {
      res.end(JSON.stringify({ type: 'ERROR', object: goneStatus() }) + '\n');
      this.watchers.delete(w);
      return;
    }
    if (fromRv === undefined) {
      for (const obj of this.bucket(p.collection).values()) this.send(w, 'ADDED', obj);
      if (initialEvents) {
        w.res.write(
          JSON.stringify({
            type: 'BOOKMARK',
            object: {
              kind: this.kinds.get(p.collection),
              metadata: { resourceVersion: String(this.rv), annotations: { 'k8s.io/initial-events-end': 'true' } },
            },
          }) + '\n',
        );
      }
    } else {
      for (const h of this.history) if (h.rv > fromRv && h.collection === p.collection) this.send(w, h.type, h.object);
    }
    const timeout = Number(r.query.get('timeoutSeconds') ?? 0);
    if (timeout > 0) {
      const t = setTimeout(() => {
        res.end();
        this.watchers.delete(w);
      }, timeout * 1000);
      t.unref();
      res.once('close', () => clearTimeout(t));
    }
  }

  private createHttp(p: Parsed, r: RecordedRequest, res: http.ServerResponse): void {
    const body = r.body as Obj;
    if (!body?.metadata?.name) return sendStatus(res, 422, 'Invalid', 'metadata.name: Required value');
    const ns = p.namespace ?? body.metadata.namespace;
    if (this.bucket(p.collection).has(this.keyOf(ns, body.metadata.name))) {
      return sendStatus(res, 409, 'AlreadyExists', `${p.collection} "${body.metadata.name}" already exists`);
    }
    sendJson(res, 201, this.put(p.collection, { ...body, metadata: { ...body.metadata, ...(ns ? { namespace: ns } : {}) } }));
  }

  private updateHttp(p: Parsed, r: RecordedRequest, res: http.ServerResponse): void {
    const body = r.body as Obj;
    const current = this.bucket(p.collection).get(this.keyOf(p.namespace, p.name));
    if (!current) return notFound(res, p);
    if (body?.metadata?.resourceVersion !== current.metadata.resourceVersion) {
      return sendStatus(res, 409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again');
    }
    sendJson(res, 200, this.put(p.collection, { ...body, metadata: { ...body.metadata, namespace: current.metadata.namespace, name: p.name } }));
  }

  private patchHttp(p: Parsed, r: RecordedRequest, res: http.ServerResponse): void {
    const strategic = r.contentType === 'application/strategic-merge-patch+json';
    if (!strategic && r.contentType !== 'application/merge-patch+json') {
      return sendStatus(
        res,
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/merge-patch+json, application/strategic-merge-patch+json (got ${r.contentType})`,
      );
    }
    const current = this.bucket(p.collection).get(this.keyOf(p.namespace, p.name));
    if (!current) return notFound(res, p);
    const patch = structuredClone(r.body as Obj);
    const wantRv = patch.metadata?.resourceVersion;
    if (wantRv !== undefined && wantRv !== current.metadata.resourceVersion) {
      return sendStatus(res, 409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again');
    }
    if (patch.metadata) delete patch.metadata.resourceVersion;
    // The status subresource ignores everything but status (and metadata); the main resource ignores status.
    if (p.subresource === 'status') delete patch.spec;
    else if (p.collection.endsWith('/persistentvolumeclaims') || p.collection.endsWith('/persistentvolumes')) delete patch.status;
    const merged = mergePatch(structuredClone(current), patch, strategic) as Obj;
    merged.metadata = { ...merged.metadata, resourceVersion: current.metadata.resourceVersion };
    sendJson(res, 200, this.put(p.collection, merged));
  }

  // ---- internals ----

  private send(w: Watcher, type: string, obj: Obj): void {
    if (w.hang) return;
    if (w.namespace && obj.metadata?.namespace !== w.namespace) return;
    if (!matchesLabels(obj, w.labelSelector) || !matchesFields(obj, w.fieldSelector)) return;
    w.res.write(JSON.stringify({ type, object: obj }) + '\n');
  }

  private record(collection: string, type: HistoryEntry['type'], obj: Obj, bump = false): void {
    if (bump) this.rv++;
    this.history.push({ rv: Number(obj.metadata.resourceVersion), collection, type, object: obj });
    for (const w of this.watchers) if (w.collection === collection) this.send(w, type, obj);
  }

  private stamp(collection: string, obj: Obj, previous: Obj | undefined): Obj {
    this.rv++;
    if (obj.kind) this.kinds.set(collection, obj.kind);
    obj.kind ??= this.kinds.get(collection);
    obj.apiVersion ??= apiVersion(collection);
    obj.metadata = {
      ...obj.metadata,
      uid: previous?.metadata?.uid ?? obj.metadata?.uid ?? `uid-${++this.uid}`,
      creationTimestamp: previous?.metadata?.creationTimestamp ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      resourceVersion: String(this.rv),
    };
    return obj;
  }

  private bucket(collection: string): Map<string, Obj> {
    let b = this.objects.get(collection);
    if (!b) this.objects.set(collection, (b = new Map()));
    return b;
  }

  private keyOf(ns: string | undefined, name: string | undefined): string {
    return ns ? `${ns}/${name}` : String(name);
  }
}

function parsePath(path: string): Parsed | undefined {
  const parts = path.split('/').filter(Boolean);
  let gv: string;
  if (parts[0] === 'api') {
    gv = parts[1]!;
    parts.splice(0, 2);
  } else if (parts[0] === 'apis') {
    gv = `${parts[1]}/${parts[2]}`;
    parts.splice(0, 3);
  } else return undefined;
  let namespace: string | undefined;
  if ((parts[0] as string) === 'namespaces' && parts.length >= 3) {
    namespace = decodeURIComponent(parts[1]!);
    parts.splice(0, 2);
  }
  const [resource, name, subresource] = parts;
  if (!resource) return undefined;
  return { collection: `${gv}/${resource}`, namespace, name: name && decodeURIComponent(name), subresource };
}

function apiVersion(collection: string): string {
  return collection.slice(0, collection.lastIndexOf('/'));
}

/** `path.to.field=value` terms, ANDed (the API server's equality field selectors). */
function matchesFields(obj: Obj, selector: string | undefined): boolean {
  if (!selector) return true;
  return selector.split(',').every((term) => {
    const [path, v] = term.split('=');
    let value: unknown = obj;
    for (const part of path!.split('.')) value = (value as Obj | undefined)?.[part];
    return (value ?? '') === v;
  });
}

function matchesLabels(obj: Obj, selector: string | undefined): boolean {
  if (!selector) return true;
  return selector.split(',').every((term) => {
    const [k, v] = term.split('=');
    return obj.metadata?.labels?.[k!] === v;
  });
}

const STRATEGIC_KEYS: Record<string, string> = { conditions: 'type' };

/** RFC 7386 merge, plus strategic-merge handling of keyed lists (conditions by type, $patch: delete). */
function mergePatch(target: unknown, patch: unknown, strategic: boolean, field = ''): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    const key = STRATEGIC_KEYS[field];
    if (strategic && key && Array.isArray(patch) && Array.isArray(target)) {
      const out = [...target] as Obj[];
      for (const item of patch as Obj[]) {
        const i = out.findIndex((o) => o[key] === item[key]);
        if (item.$patch === 'delete') {
          if (i >= 0) out.splice(i, 1);
          continue;
        }
        if (i >= 0) out[i] = mergePatch(out[i], item, strategic) as Obj;
        else out.push(item);
      }
      return out;
    }
    return patch;
  }
  const base: Obj = typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Obj) } : {};
  for (const [k, v] of Object.entries(patch as Obj)) {
    if (v === null) delete base[k];
    else base[k] = mergePatch(base[k], v, strategic, k);
  }
  return base;
}

function goneStatus(): Obj {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'too old resource version', reason: 'Expired', code: 410 };
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function sendStatus(res: http.ServerResponse, code: number, reason: string, message: string): void {
  sendJson(res, code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code });
}

function notFound(res: http.ServerResponse, p: Parsed): void {
  sendStatus(res, 404, 'NotFound', `${p.collection.split('/').pop()} "${p.name}" not found`);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A started FakeApiServer and a client of it without a rate limit, both ended when the test ends.
 * `before` prepares the server (objects, faults) before the client exists.
 */
export async function fakeApiWithClient(
  t: { after: (fn: () => unknown) => void },
  before?: (server: FakeApiServer) => void,
): Promise<{ server: FakeApiServer; client: HttpKubeClient }> {
  const server = await new FakeApiServer().start();
  t.after(() => server.close());
  before?.(server);
  const client = new HttpKubeClient({ kubeConfig: server.kubeConfig(), qps: 0, burst: 1 });
  t.after(() => client.close());
  return { server, client };
}
