// The media types of the API server's request bodies: JSON, and the patch formats a PATCH names in
// its Content-Type. Shared by the patch builders (which pick one per patch type) and the transport
// (which sends it), so neither depends on the other.
export const ContentType = {
  Json: 'application/json',
  StrategicMergePatch: 'application/strategic-merge-patch+json',
  MergePatch: 'application/merge-patch+json',
  JsonPatch: 'application/json-patch+json',
} as const;
export type ContentType = (typeof ContentType)[keyof typeof ContentType];
