// Kubernetes timestamps as the API carries them.

/** A metav1.Time: RFC 3339 in UTC with whole seconds, as conditions and events carry it. */
export function metaTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
