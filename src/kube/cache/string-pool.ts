// One instance for equal strings across cached objects. JSON.parse makes a new string for every
// value, so 20,000 cached PVs hold 20,000 copies of their driver name, access mode, storage class,
// namespace, finalizer and so on. Interning them shares one copy; nothing is removed or changed, a
// string value is replaced by an equal string. Values that are unique per object (names, UIDs,
// resourceVersions, volume handles, timestamps) are left alone so they don't crowd the pool.

/** Field names whose values are (nearly always) unique per object. */
const UNIQUE_FIELDS = new Set(['name', 'uid', 'resourceVersion', 'volumeHandle', 'volumeName', 'generateName']);

export class StringPool {
  private readonly pool = new Map<string, string>();

  /** Bounded: when full, the pool starts over (strings already shared stay shared). */
  constructor(private readonly maxEntries = 4096) {}

  intern(value: string): string {
    const held = this.pool.get(value);
    if (held !== undefined) return held;
    if (this.pool.size >= this.maxEntries) this.pool.clear();
    this.pool.set(value, value);
    return value;
  }

  get size(): number {
    return this.pool.size;
  }

  /**
   * Replaces, in place, the string values of a freshly decoded JSON value by their pooled
   * instances. Only for objects nobody else reads while this runs; readers see equal strings.
   */
  internValues(value: unknown): void {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (typeof item === 'string') value[i] = this.intern(item);
        else if (typeof item === 'object' && item !== null) this.internValues(item);
      }
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const obj = value as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      const field = obj[key];
      if (typeof field === 'string') {
        if (!UNIQUE_FIELDS.has(key) && !key.endsWith('Time') && !key.endsWith('Timestamp')) obj[key] = this.intern(field);
      } else if (typeof field === 'object' && field !== null) {
        this.internValues(field);
      }
    }
  }
}
