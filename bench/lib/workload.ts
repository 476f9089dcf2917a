// The objects a benchmark works on, made the way fixtures.ts makes them (a volume on the CSI
// driver, a PVC and a PV bound to each other by hand, both marked Bound), but in bulk with
// bounded concurrency; pods that mount claims (they stay Pending: there is no kubelet); the
// completion tracker that watches PVCs and PVs; and the teardown. Nothing here is timed.
import { csiTestClient, type CsiTestClient } from '../../test/cluster/csi-proto.js';
import { quantityBytes } from '../../test/cluster/fixtures.js';
import { Api, pool, sleep, type WatchHandle } from './api.js';

export const GI = 1n << 30n;
export const LABEL = 'csi-resizer-bench';

export interface Volume {
  pvc: string;
  pv: string;
}

export interface Workspace {
  readonly ns: string;
  readonly storageClass: string;
  readonly volumes: Volume[];
}

export async function ensureStorageClass(api: Api, name: string, provisioner: string): Promise<void> {
  try {
    await api.callRetry('POST', '/apis/storage.k8s.io/v1/storageclasses', {
      metadata: { name },
      provisioner,
      allowVolumeExpansion: true,
      reclaimPolicy: 'Retain',
      volumeBindingMode: 'Immediate',
    });
  } catch (err) {
    if ((err as { status?: number }).status !== 409) throw err;
  }
}

export async function createNamespace(api: Api, ns: string): Promise<void> {
  await api.callRetry('POST', '/api/v1/namespaces', { metadata: { name: ns, labels: { [LABEL]: 'true' } } });
}

export interface ProvisionOptions {
  ns: string;
  count: number;
  /** Name prefix, unique within the namespace. */
  prefix: string;
  sizeGi: number;
  storageClass: string;
  driverName: string;
  /** When set, each volume is created on the driver first (needed for volumes that get resized). */
  csi?: { protoPath: string; address: string };
  concurrency: number;
  deadlineMs: number;
  progress?: (done: number) => void;
  /** The node whose hostname label the i-th PV's required node affinity selects (node-local volumes). */
  nodeOf?: (index: number) => string;
  /** Annotations of every PVC (auto-grow's opt-in). */
  pvcAnnotations?: Record<string, string>;
}

/** Bound PVC/PV pairs; returns their names. */
export async function provisionBulk(api: Api, o: ProvisionOptions): Promise<Volume[]> {
  const until = Date.now() + o.deadlineMs;
  const csi: CsiTestClient | undefined = o.csi ? csiTestClient(o.csi.protoPath, o.csi.address) : undefined;
  const size = `${o.sizeGi}Gi`;
  const volumes: Volume[] = Array.from({ length: o.count }, (_, i) => ({ pvc: `${o.prefix}-${i}`, pv: `${o.ns}-${o.prefix}-${i}` }));
  let done = 0;
  try {
    await pool(volumes, o.concurrency, async (v, index) => {
      if (Date.now() > until) throw new Error(`provisioning ${o.count} volumes took longer than ${o.deadlineMs}ms`);
      let handle = `bench-${v.pv}`;
      if (csi) {
        const res = await csi.call<{ volume: { volume_id: string } }>('Controller', 'CreateVolume', {
          name: v.pv,
          capacity_range: { required_bytes: quantityBytes(size).toString() },
          volume_capabilities: [{ mount: { fs_type: '', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
          parameters: {},
        });
        handle = res.volume.volume_id;
      }
      const pvc = await api.callRetry<{ metadata: { uid: string } }>('POST', `/api/v1/namespaces/${o.ns}/persistentvolumeclaims`, {
        metadata: { name: v.pvc, namespace: o.ns, labels: { [LABEL]: o.ns }, ...(o.pvcAnnotations ? { annotations: o.pvcAnnotations } : {}) },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: size } },
          storageClassName: o.storageClass,
          volumeName: v.pv,
          volumeMode: 'Filesystem',
        },
      });
      await api.callRetry('POST', '/api/v1/persistentvolumes', {
        metadata: { name: v.pv, labels: { [LABEL]: o.ns }, annotations: { 'pv.kubernetes.io/provisioned-by': o.driverName } },
        spec: {
          capacity: { storage: size },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
          storageClassName: o.storageClass,
          volumeMode: 'Filesystem',
          csi: { driver: o.driverName, volumeHandle: handle },
          ...(o.nodeOf
            ? {
                nodeAffinity: {
                  required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [o.nodeOf(index)] }] }] },
                },
              }
            : {}),
          claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: o.ns, name: v.pvc, uid: pvc.metadata.uid },
        },
      });
      await api.mergePatch(`/api/v1/persistentvolumes/${v.pv}/status`, { status: { phase: 'Bound' } });
      await api.mergePatch(`/api/v1/namespaces/${o.ns}/persistentvolumeclaims/${v.pvc}/status`, {
        status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: size } },
      });
      done++;
      if (o.progress && done % 1000 === 0) o.progress(done);
    });
  } finally {
    csi?.close();
  }
  return volumes;
}

/**
 * Pending pods (no kubelet), each mounting one of the given claims round-robin; on no node, or on
 * the node `nodeOf(i)` names (spec.nodeName, as if scheduled there).
 */
export async function createPods(
  api: Api,
  o: {
    ns: string;
    count: number;
    prefix: string;
    claims: readonly string[];
    concurrency: number;
    deadlineMs: number;
    progress?: (n: number) => void;
    nodeOf?: (i: number) => string;
  },
): Promise<number> {
  const until = Date.now() + o.deadlineMs;
  let made = 0;
  const idx = Array.from({ length: o.count }, (_, i) => i);
  await pool(idx, o.concurrency, async (i) => {
    if (Date.now() > until) return; // bounded: what was made by the deadline is what is measured
    const claim = o.claims[i % o.claims.length]!;
    await api.callRetry('POST', `/api/v1/namespaces/${o.ns}/pods`, {
      metadata: { name: `${o.prefix}-${i}`, labels: { [LABEL]: o.ns, app: `bench-${i % 50}` } },
      spec: {
        containers: [
          {
            name: 'app',
            image: 'registry.invalid/bench/app:1',
            command: ['/bin/app', '--serve'],
            resources: { requests: { cpu: '10m', memory: '16Mi' } },
            volumeMounts: [{ name: 'data', mountPath: '/data' }],
          },
        ],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
        terminationGracePeriodSeconds: 0,
        ...(o.nodeOf ? { nodeName: o.nodeOf(i) } : {}),
      },
    });
    made++;
    if (o.progress && made % 5000 === 0) o.progress(made);
  });
  return made;
}

/** Sets spec.resources.requests.storage of the claims, with bounded concurrency; returns when all edits were answered. */
export async function growAll(api: Api, ns: string, pvcs: readonly string[], sizeGi: number, concurrency: number): Promise<void> {
  await pool(pvcs, concurrency, async (name) => {
    await api.mergePatch(`/api/v1/namespaces/${ns}/persistentvolumeclaims/${name}`, { spec: { resources: { requests: { storage: `${sizeGi}Gi` } } } });
  });
}

interface Seen {
  pvcFinalBytes?: bigint;
  pvBytes?: bigint;
}

/**
 * Watches the PVCs of one namespace and their PVs (by label) and tells when a claim reached a
 * given size: PV spec.capacity (the driver's expansion recorded) and PVC status.capacity with no
 * resize condition left (the final state).
 */
export class Tracker {
  private readonly pvcs = new Map<string, Seen & { at?: number }>();
  private readonly pvs = new Map<string, { bytes: bigint; at: number }>();
  private readonly pvcFinal = new Map<string, { bytes: bigint; at: number }>();
  private readonly watches = new Set<WatchHandle>();
  private readonly loops: Array<Promise<void>> = [];
  private stopped = false;
  private waiters: Array<() => void> = [];

  private constructor(
    private readonly api: Api,
    readonly ns: string,
  ) {}

  /**
   * Lists, then watches from the list's resourceVersion. A watch that ends (the apiserver went
   * away, a 410) is followed by a fresh list and watch, so the tracker outlives faults; what
   * changed while nobody watched gets the time of that list.
   */
  static async start(api: Api, ns: string): Promise<Tracker> {
    const t = new Tracker(api, ns);
    const sel = `labelSelector=${encodeURIComponent(`${LABEL}=${ns}`)}`;
    const pvcs = await t.follow(`/api/v1/namespaces/${ns}/persistentvolumeclaims?${sel}`, (o, at) => t.onPvc(o, at));
    const pvs = await t.follow(`/api/v1/persistentvolumes?${sel}`, (o, at) => t.onPv(o, at));
    t.loops.push(pvcs.loop, pvs.loop);
    return t;
  }

  /** Resolves once the first list is in; `loop` keeps following until stop(). */
  private async follow(path: string, onObject: (o: any, at: number) => void): Promise<{ loop: Promise<void> }> {
    const listOnce = async () => {
      const list = await this.api.callRetry<{ metadata: { resourceVersion: string }; items: any[] }>('GET', path);
      const now = performance.now();
      for (const o of list.items) onObject(o, now);
      return list.metadata.resourceVersion;
    };
    let rv = await listOnce();
    const loop = (async () => {
      while (!this.stopped) {
        const w = this.api.watch(path, rv, (ev, at) => {
          if (ev.type === 'ADDED' || ev.type === 'MODIFIED') onObject(ev.object, at);
        });
        this.watches.add(w);
        await w.ended;
        this.watches.delete(w);
        while (!this.stopped) {
          await sleep(500);
          try {
            rv = await listOnce();
            break;
          } catch {
            // the apiserver is still away: try again
          }
        }
      }
    })();
    return { loop };
  }

  private onPvc(o: any, at: number): void {
    const name: string = o.metadata.name;
    const cap: string | undefined = o.status?.capacity?.storage;
    const conditions: Array<{ type: string }> = o.status?.conditions ?? [];
    const resizing = conditions.some((c) => c.type === 'Resizing' || c.type === 'FileSystemResizePending' || c.type === 'ControllerResizeError');
    if (cap === undefined || resizing || o.status?.allocatedResourceStatuses?.storage !== undefined) return;
    const bytes = parseQuantity(cap);
    const prev = this.pvcFinal.get(name);
    if (prev?.bytes !== bytes) this.pvcFinal.set(name, { bytes, at });
    this.wake();
  }

  private onPv(o: any, at: number): void {
    const cap: string | undefined = o.spec?.capacity?.storage;
    if (cap === undefined) return;
    const claim: string | undefined = o.spec?.claimRef?.name;
    if (!claim) return;
    const bytes = parseQuantity(cap);
    const prev = this.pvs.get(claim);
    if (prev?.bytes !== bytes) this.pvs.set(claim, { bytes, at });
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** performance.now() when claim `pvc` was last seen final at `bytes` (PVC) and its PV at `bytes`; undefined while not yet. */
  state(pvc: string, bytes: bigint): { pvAt?: number; pvcAt?: number } {
    const pv = this.pvs.get(pvc);
    const fin = this.pvcFinal.get(pvc);
    return { pvAt: pv?.bytes === bytes ? pv.at : undefined, pvcAt: fin?.bytes === bytes ? fin.at : undefined };
  }

  /**
   * Resolves when every claim in `pvcs` has PV and PVC at `bytes`, with the times; rejects at the
   * deadline with how many were done.
   */
  async waitAll(pvcs: readonly string[], bytes: bigint, timeoutMs: number): Promise<Array<{ pvAt: number; pvcAt: number }>> {
    const until = performance.now() + timeoutMs;
    for (;;) {
      const states = pvcs.map((p) => this.state(p, bytes));
      const done = states.filter((s) => s.pvAt !== undefined && s.pvcAt !== undefined).length;
      if (done === pvcs.length) return states as Array<{ pvAt: number; pvcAt: number }>;
      const left = until - performance.now();
      if (left <= 0) throw new Error(`${done}/${pvcs.length} claims reached ${bytes / GI}Gi within ${timeoutMs}ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 1000));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.watches) w.stop();
  }
}

function parseQuantity(q: string): bigint {
  try {
    return quantityBytes(q);
  } catch {
    return -1n;
  }
}

/** Deletes everything a workspace made: pods, claims and volumes (finalizers cleared first), then the namespace. */
export async function teardown(api: Api, ns: string, opts: { concurrency: number; deadlineMs: number }): Promise<void> {
  const until = Date.now() + opts.deadlineMs;
  const sel = `labelSelector=${encodeURIComponent(`${LABEL}=${ns}`)}`;
  await api.callRetry('DELETE', `/api/v1/namespaces/${ns}/pods?${sel}&gracePeriodSeconds=0`).catch(() => {});
  const unprotect = async (listPath: string, itemPath: (name: string) => string) => {
    const list = await api.callRetry<{ items: Array<{ metadata: { name: string; finalizers?: string[] } }> }>('GET', `${listPath}?${sel}`);
    const names = list.items.filter((o) => (o.metadata.finalizers ?? []).length > 0).map((o) => o.metadata.name);
    await pool(names, opts.concurrency, async (n) => {
      if (Date.now() > until) return;
      await api.mergePatch(itemPath(n), { metadata: { finalizers: null } }).catch(() => {});
    });
  };
  await unprotect(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, (n) => `/api/v1/namespaces/${ns}/persistentvolumeclaims/${n}`);
  await api.callRetry('DELETE', `/api/v1/namespaces/${ns}/persistentvolumeclaims?${sel}`).catch(() => {});
  await unprotect('/api/v1/persistentvolumes', (n) => `/api/v1/persistentvolumes/${n}`);
  await api.callRetry('DELETE', `/api/v1/persistentvolumes?${sel}`).catch(() => {});
  await api.callRetry('DELETE', `/api/v1/namespaces/${ns}/events`).catch(() => {});
  await api.callRetry('DELETE', `/api/v1/namespaces/${ns}`).catch(() => {});
}
