// Secrets for driver calls, read with a direct GET (no Secret informer, so the resizer never
// caches or lists secrets; RBAC grants only get). Values are decoded to strings and never logged.
import { messageOf } from '../../base/errors.js';

export interface SecretReader {
  getSecret(namespace: string, name: string, signal: AbortSignal): Promise<Record<string, unknown>>;
}

export async function readSecret(reader: SecretReader, namespace: string, name: string, signal: AbortSignal): Promise<Record<string, string>> {
  let secret: Record<string, unknown>;
  try {
    secret = await reader.getSecret(namespace, name, signal);
  } catch (err) {
    throw new Error(`error getting secret ${name} in namespace ${namespace}: ${messageOf(err)}`, { cause: err });
  }
  const out: Record<string, string> = {};
  const data = typeof secret['data'] === 'object' && secret['data'] !== null ? (secret['data'] as Record<string, unknown>) : {};
  for (const [key, value] of Object.entries(data)) {
    if (typeof value === 'string') out[key] = Buffer.from(value, 'base64').toString('utf8');
  }
  return out;
}
