// Kubernetes timestamps as the API carries them.

/** The last second metaTime formatted: the writes of a burst mostly fall in the same second. */
let lastMetaTime = { epochSecond: Number.NaN, text: '' };

/** A metav1.Time: RFC 3339 in UTC with whole seconds, as conditions and events carry it. */
export function metaTime(ms: number): string {
  const epochSecond = Math.floor(ms / 1000);
  if (epochSecond !== lastMetaTime.epochSecond) {
    lastMetaTime = { epochSecond, text: new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z') };
  }
  return lastMetaTime.text;
}

/** A metav1.MicroTime: RFC 3339 in UTC with exactly six fractional digits, as a Lease carries it. */
export function microTime(ms: number): string {
  const iso = new Date(ms).toISOString(); // ...T12:34:56.789Z
  return iso.replace(/\.(\d{3})Z$/, '.$1000Z');
}
