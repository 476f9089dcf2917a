// Secrets for driver calls, read with a direct GET (no Secret informer, so the resizer never
// caches or lists secrets; RBAC grants only get). Values are decoded to strings and never logged.

export interface SecretReader {
  getSecret(namespace: string, name: string, signal: AbortSignal): Promise<{ data?: Record<string, string> }>;
}

export async function readSecret(reader: SecretReader, namespace: string, name: string, signal: AbortSignal): Promise<Record<string, string>> {
  let secret: { data?: Record<string, string> };
  try {
    secret = await reader.getSecret(namespace, name, signal);
  } catch (err) {
    throw new Error(`error getting secret ${name} in namespace ${namespace}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {})) out[key] = Buffer.from(value, 'base64').toString('utf8');
  return out;
}
