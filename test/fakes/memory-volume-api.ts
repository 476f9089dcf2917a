// The VolumeApi and the two object caches a reconcile works with, in memory, for the resize and
// modify reconcile tests: one PVC and its PV, every patch recorded as sent, a status patch answered
// with the cached PVC one resourceVersion further (as the API server answers), and a write that
// fails on the Nth call to its object, with the error given.
import type { ObjectCache, VolumeApi } from '../../src/kube/api/volume-api.js';
import type { Pv, Pvc } from '../../src/model/objects.js';
import { pvcKey } from '../../src/model/pvc.js';

export type WriteTarget = 'pvc' | 'pv';

export interface Write {
  target: WriteTarget;
  body: Record<string, unknown>;
}

export interface WriteFailure {
  target: WriteTarget;
  /** The write to that object (1-based) that fails; every one when absent. */
  call?: number;
  error: () => Error;
}

export class MemoryVolumeApi implements VolumeApi {
  /** The cached PVCs by key and PVs by name; a test may replace an object to play the informer. */
  readonly pvcs = new Map<string, Pvc>();
  readonly pvs = new Map<string, Pv>();
  /** Every patch, in the order sent. */
  readonly writes: Write[] = [];
  readonly pvcCache: ObjectCache<Pvc> = { get: (key) => this.pvcs.get(key), writeBack: (obj) => (this.pvcs.set(pvcKey(obj), obj), true) };
  readonly pvCache: ObjectCache<Pv> = { get: (name) => this.pvs.get(name), writeBack: (obj) => (this.pvs.set(obj.metadata.name, obj), true) };
  private resourceVersion: number;

  constructor(
    pvc: Pvc,
    pv: Pv,
    private readonly failures: readonly WriteFailure[] = [],
  ) {
    this.pvcs.set(pvcKey(pvc), pvc);
    this.pvs.set(pv.metadata.name, pv);
    this.resourceVersion = Number(pvc.metadata.resourceVersion ?? '0');
  }

  async patchPvcStatus(namespace: string, name: string, body: Record<string, unknown>): Promise<Pvc> {
    this.record('pvc', body);
    const current = this.pvcs.get(`${namespace}/${name}`)!;
    this.resourceVersion += 1;
    return { ...current, metadata: { ...current.metadata, resourceVersion: String(this.resourceVersion) } };
  }

  async patchPv(name: string, body: Record<string, unknown>): Promise<Pv> {
    this.record('pv', body);
    return this.pvs.get(name)!;
  }

  /** How many patches of that object were sent. */
  count(target: WriteTarget): number {
    return this.writes.filter((w) => w.target === target).length;
  }

  private record(target: WriteTarget, body: Record<string, unknown>): void {
    this.writes.push({ target, body });
    const failure = this.failures.find((f) => f.target === target && (f.call === undefined || f.call === this.count(target)));
    if (failure) throw failure.error();
  }
}
