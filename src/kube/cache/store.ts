// The informer's cache: objects by key. Reconcilers get the read-only view; the informer is the
// only writer, except writeBack, which controllers call with the object a PATCH returned so the
// next reconcile doesn't act on a copy older than its own write (upstream does the same).
// Objects are shared, never copied on read: callers must not mutate them (structuredClone first).
import type { KubeObject } from '../../model/objects.js';
import { objectKey } from './keys.js';

export interface ReadonlyStore<T extends KubeObject = KubeObject> {
  get(key: string): T | undefined;
  list(): T[];
  keys(): string[];
  readonly size: number;
}

export interface WritableStore<T extends KubeObject = KubeObject> extends ReadonlyStore<T> {
  /** Caches obj if it is newer than the cached copy (or nothing is cached); returns whether it did. */
  writeBack(obj: KubeObject): boolean;
}

/**
 * -1, 0 or 1. resourceVersions are opaque strings; when both are decimal integers (etcd revisions,
 * always so on kube-apiserver) they are compared as numbers, otherwise only equality is known and
 * the candidate is treated as newer.
 */
export function compareResourceVersions(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined || a === '') return -1;
  if (b === undefined || b === '') return 1;
  if (isDecimal(a) && isDecimal(b)) {
    // As integers, without a BigInt each: fewer significant digits is smaller, else digit by digit.
    const x = withoutLeadingZeros(a);
    const y = withoutLeadingZeros(b);
    if (x.length !== y.length) return x.length < y.length ? -1 : 1;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return 1;
}

/** The resourceVersion of an object that may be malformed; undefined when it has none of type string. */
export function resourceVersionOf(obj: KubeObject): string | undefined {
  try {
    const rv = obj.metadata?.resourceVersion;
    return typeof rv === 'string' ? rv : undefined;
  } catch {
    return undefined;
  }
}

function isDecimal(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return s.length > 0;
}

function withoutLeadingZeros(digits: string): string {
  let i = 0;
  while (i < digits.length - 1 && digits.charCodeAt(i) === 48) i++;
  return i === 0 ? digits : digits.slice(i);
}

export class Store<T extends KubeObject = KubeObject> implements WritableStore<T> {
  private readonly items = new Map<string, T>();

  /** transform is applied to written-back objects, as the informer applies it to watched ones. */
  constructor(private readonly transform: (obj: KubeObject, key: string) => T | undefined = (o) => o as T) {}

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  get size(): number {
    return this.items.size;
  }

  writeBack(obj: KubeObject): boolean {
    const key = objectKey(obj);
    const cached = this.items.get(key);
    if (cached && compareResourceVersions(obj.metadata?.resourceVersion, cached.metadata?.resourceVersion) <= 0) return false;
    const stored = this.transform(obj, key);
    if (!stored) return false;
    this.items.set(key, stored);
    return true;
  }

  /** Informer side: unconditional writes. */
  set(key: string, obj: T): void {
    this.items.set(key, obj);
  }

  delete(key: string): void {
    this.items.delete(key);
  }

  entries(): IterableIterator<[string, T]> {
    return this.items.entries();
  }
}
