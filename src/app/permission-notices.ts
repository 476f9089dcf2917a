// What the sidecar says about a missing RBAC rule, said once per rule: whichever finds it first, an
// informer whose list or watch the server refused or the startup check's review, logs it with
// what stops while it is missing (kube/api/required-permissions.ts); the other stays silent. When an
// informer refused for want of a rule is accepted again, the rule is said granted and what starts
// again. Keyed by the rule, not the verb: the rule is what an operator adds (docs/behavior.md §6.3).
import type { AccessListener } from '../kube/api/refusals.js';
import { describeRule, RULE_EFFECTS, ruleKey, type RequiredRule } from '../kube/api/required-permissions.js';
import type { Logger } from '../observability/log/logger.js';

export class PermissionNotices {
  /** The keys of the rules said missing and not said granted since. */
  private readonly missingRules = new Set<string>();

  constructor(private readonly log: Logger) {}

  /** The startup check found the rule missing: said unless it was already; `verbs` are the verbs found missing. */
  missing(rule: RequiredRule, verbs: readonly string[]): void {
    if (!this.firstTime(rule)) return;
    const effect = RULE_EFFECTS[rule.stops];
    const permission = describeRule(rule, verbs);
    if (effect.severity === 'error') this.log.error(effect.missing, { permission });
    else this.log.warn(effect.missing, { permission });
  }

  /** An informer's list or watch was refused (403) for want of the rule: said unless it was already. */
  refused(rule: RequiredRule, err: unknown): void {
    if (!this.firstTime(rule)) return;
    const effect = RULE_EFFECTS[rule.stops];
    // The server's refusal names the identity the sidecar runs as: the subject to bind the rule to.
    const permission = describeRule(rule);
    if (effect.severity === 'error') this.log.error(effect.missing, { permission, err });
    else this.log.warn(effect.missing, { permission, err });
  }

  /** For a component whose requests need the rule (an event recorder, the elector): its refusals and grants said here. */
  listenerFor(rule: RequiredRule): AccessListener {
    return { refused: (err) => this.refused(rule, err), allowed: () => this.granted(rule) };
  }

  /** Says the rule is granted, if it was said missing. */
  granted(rule: RequiredRule): void {
    if (!this.missingRules.delete(ruleKey(rule))) return;
    const effect = RULE_EFFECTS[rule.stops];
    this.log.info(effect.granted, { permission: describeRule(rule) });
  }

  /** Marks the rule missing; false when it was already. */
  private firstTime(rule: RequiredRule): boolean {
    const key = ruleKey(rule);
    if (this.missingRules.has(key)) return false;
    this.missingRules.add(key);
    return true;
  }
}
