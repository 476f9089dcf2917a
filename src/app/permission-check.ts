// A startup check for the most common support question upstream has no answer to: a resizer
// without the RBAC it needs (no pods list, no pvc/status patch, no lease access...) resizes or
// modifies nothing and says nothing clear. We ask the API server (SelfSubjectAccessReview) for each
// verb of each rule this configuration uses and say every missing rule once, with what stops
// while it is missing (permission-notices.ts: a rule an informer already found refused is not said
// again). The check never stops startup: a server that refuses the review itself is logged and
// ignored.
import type { KubeClient } from '../kube/api/client.js';
import { ClientPurpose, type ApiClientFactory } from '../kube/wire/client-factory.js';
import { permissionsOf, requiredRules, type PermissionNeeds, type RequiredRule } from '../kube/api/required-permissions.js';
import type { Logger } from '../observability/log/logger.js';
import { PermissionNotices } from './permission-notices.js';

export interface MissingRule {
  readonly rule: RequiredRule;
  /** The rule's verbs the server does not grant. */
  readonly verbs: readonly string[];
}

/** Returns the rules with a verb missing (each said through `notices`); [] when all are granted or the check could not run. */
export async function checkPermissions(
  client: Pick<KubeClient, 'canI'>,
  needs: PermissionNeeds,
  log: Logger,
  signal: AbortSignal,
  notices: PermissionNotices = new PermissionNotices(log),
): Promise<MissingRule[]> {
  const rules = requiredRules(needs);
  const missing: MissingRule[] = [];
  try {
    for (const rule of rules) {
      const verbs: string[] = [];
      for (const attributes of permissionsOf(rule)) {
        if (!(await client.canI(attributes, signal)).allowed) verbs.push(attributes.verb);
      }
      if (verbs.length > 0) missing.push({ rule, verbs });
    }
  } catch (err) {
    log.warn('Could not check RBAC permissions', { err });
    return [];
  }
  for (const { rule, verbs } of missing) notices.missing(rule, verbs);
  log.v(2).info('RBAC permissions checked', { rules: rules.length, missing: missing.length });
  return missing;
}

/**
 * The check as the sidecar runs it, with a client of its own (and so a rate limiter of its own),
 * so its dozen reviews never take the tokens the first resizes need.
 */
export async function runPermissionCheck(
  clients: ApiClientFactory,
  needs: PermissionNeeds,
  notices: PermissionNotices,
  log: Logger,
  signal: AbortSignal,
): Promise<void> {
  const client = clients.create(ClientPurpose.PermissionCheck);
  try {
    await checkPermissions(client, needs, log, signal, notices);
  } finally {
    client.close();
  }
}
