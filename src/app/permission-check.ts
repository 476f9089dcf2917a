// A startup check for the most common support question upstream has no answer to: a resizer
// without the RBAC it needs (no pods list, no pvc/status patch, no lease access...) never resizes
// anything and says nothing. We ask the API server (SelfSubjectAccessReview) for each permission
// this configuration uses and log every missing one as an error naming the rule to add.
// The check never stops startup: a server that refuses the review itself is logged and ignored.
import type { AccessAttributes, KubeClient } from '../kube/client.js';
import { ClientPurpose, type ApiClientFactory } from '../kube/client-factory.js';
import { describePermission, requiredPermissions, type PermissionNeeds } from '../kube/required-permissions.js';
import type { Logger } from '../observability/logger.js';

/** Returns the missing permissions (also logged); [] when all are granted or the check could not run. */
export async function checkPermissions(
  client: Pick<KubeClient, 'canI'>,
  needs: PermissionNeeds,
  log: Logger,
  signal: AbortSignal,
): Promise<AccessAttributes[]> {
  const missing: AccessAttributes[] = [];
  try {
    for (const attributes of requiredPermissions(needs)) {
      if (!(await client.canI(attributes, signal)).allowed) missing.push(attributes);
    }
  } catch (err) {
    log.warn('Could not check RBAC permissions', { err });
    return [];
  }
  // What only --auto-grow asks for comes from its own opt-in manifest.
  const withoutAutoGrow = new Set(requiredPermissions({ ...needs, autoGrow: undefined }).map(describePermission));
  for (const attributes of missing) {
    const permission = describePermission(attributes);
    if (withoutAutoGrow.has(permission)) {
      log.error('Missing RBAC permission: resizes will not happen until it is granted (see deploy/kubernetes/rbac.yaml)', { permission });
    } else {
      log.error('Missing RBAC permission: auto-grow will not grow claims until it is granted (see deploy/kubernetes/auto-grow)', { permission });
    }
  }
  if (missing.length === 0) log.v(2).info('RBAC permissions checked', { granted: requiredPermissions(needs).length });
  return missing;
}

/**
 * The check as the sidecar runs it, with a client of its own (and so a rate limiter of its own),
 * so its dozen reviews never take the tokens the first resizes need.
 */
export async function runPermissionCheck(clients: ApiClientFactory, needs: PermissionNeeds, log: Logger, signal: AbortSignal): Promise<void> {
  const client = clients.create(ClientPurpose.PermissionCheck);
  try {
    await checkPermissions(client, needs, log, signal);
  } finally {
    client.close();
  }
}
