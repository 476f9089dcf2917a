// @kubernetes/client-node access for the harness and the tests: clients from a kubeconfig, status
// codes out of its exceptions, and a retry for the apiserver's first seconds.
import * as k8s from '@kubernetes/client-node';

export interface KubeClients {
  readonly kc: k8s.KubeConfig;
  readonly core: k8s.CoreV1Api;
  readonly storage: k8s.StorageV1Api;
  readonly rbac: k8s.RbacAuthorizationV1Api;
  readonly coordination: k8s.CoordinationV1Api;
  readonly authz: k8s.AuthorizationV1Api;
}

export function clientsFromKubeconfig(path: string): KubeClients {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  return {
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    storage: kc.makeApiClient(k8s.StorageV1Api),
    rbac: kc.makeApiClient(k8s.RbacAuthorizationV1Api),
    coordination: kc.makeApiClient(k8s.CoordinationV1Api),
    authz: kc.makeApiClient(k8s.AuthorizationV1Api),
  };
}

/** Options for a PATCH: client-node 1.x does not pick a patch content type on its own. */
export function patchAs(strategy: k8s.PatchStrategy = k8s.PatchStrategy.MergePatch) {
  return k8s.setHeaderOptions('Content-Type', strategy);
}

/** The HTTP status of a failed client-node call, or undefined for non-HTTP failures. */
export function statusOf(err: unknown): number | undefined {
  if (err instanceof k8s.ApiException) return err.code;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** The Status message of a failed call (body.message), falling back to the error text. */
export function messageOf(err: unknown): string {
  if (err instanceof k8s.ApiException) {
    const body: unknown = typeof err.body === 'string' ? safeJson(err.body) : err.body;
    const message = (body as { message?: unknown } | null)?.message;
    if (typeof message === 'string') return message;
  }
  return err instanceof Error ? err.message : String(err);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Right after start the apiserver can refuse writes for a moment: NamespaceLifecycle answers
 * "not yet ready to handle request", the default namespace may not exist yet, and a connection
 * can be reset. Retries those (and 5xx / 429) until deadlineMs; anything else is thrown at once.
 */
export async function retryWhileStarting<T>(what: string, fn: () => Promise<T>, deadlineMs = 30_000): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const status = statusOf(err);
      const message = messageOf(err);
      const transient =
        status === undefined ||
        status === 429 ||
        status >= 500 ||
        /not yet ready to handle request/.test(message) ||
        (status === 404 && /namespaces? "?default"? not found/.test(message));
      if (!transient || Date.now() > until) throw new Error(`${what}: ${message}`, { cause: err });
      await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, 500)));
    }
  }
}
