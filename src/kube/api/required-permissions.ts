// The RBAC rules a configuration of the resizer uses: one per resource the controllers, the
// informers, the event recorder and the elector call through client.ts, with its verbs and what
// stops while it is missing (a rule only modify needs must not be said to stop resizes). The
// startup RBAC check, the informers' refusal notices, `doctor` and the manifest tests all read this
// one list. Pure.
import type { AccessAttributes } from './client.js';
import type { ResourceRef } from './resources.js';

export interface PermissionNeeds {
  /** The resize controller runs (default true). */
  resizes?: boolean;
  /** Pods are watched for --handle-volume-inuse-error. */
  pods: boolean;
  /** The modify controller runs. */
  volumeAttributesClasses: boolean;
  /** The namespace of the Lease, with --leader-election. */
  leaseNamespace: string | undefined;
  /** --node-deployment: the replica reads its own Node's labels once at startup. */
  node?: boolean;
  /**
   * --auto-grow (deploy/kubernetes/auto-grow): the PVC patch and the StorageClass cache; with the
   * kubelet usage source also the Nodes of the claims' pods and kubelet's nodes/stats.
   */
  autoGrow?: { readonly kubelets: boolean };
}

/** What stops while a rule is missing; RULE_EFFECTS words each. */
export const Stops = {
  Resizes: 'resizes',
  Modify: 'modify',
  ResizesAndModify: 'resizesAndModify',
  Events: 'events',
  Leading: 'leading',
  NodeStart: 'nodeStart',
  AutoGrow: 'autoGrow',
} as const;
export type Stops = (typeof Stops)[keyof typeof Stops];

export interface RequiredRule {
  /** '' for the core group. */
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  /** Unset: cluster-wide. */
  readonly namespace?: string;
  readonly verbs: readonly string[];
  readonly stops: Stops;
}

export interface RuleEffect {
  /** The log line's message while the rule is missing. */
  readonly missing: string;
  /** The log line's message when an informer refused for want of the rule is allowed again. */
  readonly granted: string;
  /** What its absence disables, as `doctor` says it. */
  readonly disables: string;
  /** error: the replica does nothing it is for; warn: the rest goes on. */
  readonly severity: 'error' | 'warn';
}

export const RULE_EFFECTS: Readonly<Record<Stops, RuleEffect>> = {
  resizes: {
    missing: 'Missing RBAC permission: resizes will not happen until it is granted',
    granted: 'RBAC permission granted, resizes starting',
    disables: 'resizes',
    severity: 'error',
  },
  modify: {
    missing: 'Missing RBAC permission: modify is off until it is granted (resizes are not affected)',
    granted: 'RBAC permission granted, modify starting',
    disables: 'modify (VolumeAttributesClass changes are not applied; resizes are not affected)',
    severity: 'warn',
  },
  resizesAndModify: {
    missing: 'Missing RBAC permission: neither resizes nor modifications will happen until it is granted',
    granted: 'RBAC permission granted, resizes and modifications starting',
    disables: 'resizes and modifications',
    severity: 'error',
  },
  events: {
    missing: 'Missing RBAC permission: no events are recorded until it is granted (resizes and modifications are not affected)',
    granted: 'RBAC permission granted, events recorded again',
    disables: 'events on claims (resizes and modifications are not affected)',
    severity: 'warn',
  },
  leading: {
    missing: 'Missing RBAC permission: this replica cannot lead, so it neither resizes nor modifies until it is granted',
    granted: 'RBAC permission granted, this replica may lead',
    disables: 'leader election (no replica resizes or modifies)',
    severity: 'error',
  },
  nodeStart: {
    missing: 'Missing RBAC permission: --node-deployment cannot start until it is granted',
    granted: 'RBAC permission granted, --node-deployment may start',
    disables: 'the start of a --node-deployment replica',
    severity: 'error',
  },
  // Auto-grow's rules come from its own opt-in component (deploy/kubernetes/auto-grow).
  autoGrow: {
    missing: 'Missing RBAC permission: auto-grow will not grow claims until it is granted (see deploy/kubernetes/auto-grow)',
    granted: 'RBAC permission granted, auto-grow starting',
    disables: 'auto-grow (resizes and modifications are not affected)',
    severity: 'warn',
  },
};

export function requiredRules(needs: PermissionNeeds): RequiredRule[] {
  const resizes = needs.resizes ?? true;
  const modifies = needs.volumeAttributesClasses;
  // What every controller reads and writes: without it, whichever controllers run stop.
  const shared = resizes && modifies ? Stops.ResizesAndModify : modifies ? Stops.Modify : Stops.Resizes;
  const listWatch = ['list', 'watch'];
  const rules: RequiredRule[] = [
    { group: '', resource: 'persistentvolumeclaims', verbs: listWatch, stops: shared },
    { group: '', resource: 'persistentvolumes', verbs: listWatch, stops: shared },
  ];
  // The resize controller waits for the Pod informer's first list, as upstream's does.
  if (needs.pods) rules.push({ group: '', resource: 'pods', verbs: listWatch, stops: Stops.Resizes });
  if (modifies) rules.push({ group: 'storage.k8s.io', resource: 'volumeattributesclasses', verbs: listWatch, stops: Stops.Modify });
  rules.push(
    { group: '', resource: 'persistentvolumeclaims', subresource: 'status', verbs: ['patch'], stops: shared },
    { group: '', resource: 'persistentvolumes', verbs: ['patch'], stops: shared },
    { group: '', resource: 'events', verbs: ['create', 'patch'], stops: Stops.Events },
  );
  if (needs.autoGrow) {
    rules.push(
      { group: 'storage.k8s.io', resource: 'storageclasses', verbs: listWatch, stops: Stops.AutoGrow },
      { group: '', resource: 'persistentvolumeclaims', verbs: ['patch'], stops: Stops.AutoGrow },
    );
  }
  // One rule for Nodes: --node-deployment's start needs it most.
  if (needs.node) rules.push({ group: '', resource: 'nodes', verbs: ['get'], stops: Stops.NodeStart });
  else if (needs.autoGrow?.kubelets) rules.push({ group: '', resource: 'nodes', verbs: ['get'], stops: Stops.AutoGrow });
  if (needs.autoGrow?.kubelets) rules.push({ group: '', resource: 'nodes', subresource: 'stats', verbs: ['get'], stops: Stops.AutoGrow });
  if (needs.leaseNamespace !== undefined) {
    rules.push({ group: 'coordination.k8s.io', resource: 'leases', namespace: needs.leaseNamespace, verbs: ['get', 'create', 'update'], stops: Stops.Leading });
  }
  return rules;
}

/** Every verb of every rule, as the API server reviews them one by one. */
export function requiredPermissions(needs: PermissionNeeds): AccessAttributes[] {
  return requiredRules(needs).flatMap(permissionsOf);
}

export function permissionsOf(rule: RequiredRule): AccessAttributes[] {
  const { group, resource, subresource, namespace } = rule;
  return rule.verbs.map((verb) => ({
    verb,
    group,
    resource,
    ...(subresource === undefined ? {} : { subresource }),
    ...(namespace === undefined ? {} : { namespace }),
  }));
}

/** The list/watch rule of an informer's resource, if this configuration uses one. */
export function listWatchRule(rules: readonly RequiredRule[], resource: Pick<ResourceRef, 'group' | 'resource'>): RequiredRule | undefined {
  return rules.find((r) => r.group === resource.group && r.resource === resource.resource && r.subresource === undefined && r.verbs.includes('list'));
}

/**
 * The rule as an operator adds it: `resource.group/subresource verbs`, as kubectl names resources,
 * e.g. `volumeattributesclasses.storage.k8s.io list,watch`, `persistentvolumeclaims/status patch`,
 * `leases.coordination.k8s.io get,create,update in namespace kube-system`. `verbs` narrows it to
 * the verbs found missing.
 */
export function describeRule(rule: RequiredRule, verbs: readonly string[] = rule.verbs): string {
  const group = rule.group === '' ? '' : `.${rule.group}`;
  const sub = rule.subresource === undefined ? '' : `/${rule.subresource}`;
  const scope = rule.namespace === undefined ? '' : ` in namespace ${rule.namespace}`;
  return `${rule.resource}${group}${sub} ${verbs.join(',')}${scope}`;
}

/** One key per rule (PVs have two: list,watch and patch), whichever of its verbs were found missing. */
export function ruleKey(rule: RequiredRule): string {
  return `${rule.resource}.${rule.group}/${rule.subresource ?? ''}@${rule.namespace ?? '*'} ${rule.verbs.join(',')}`;
}
