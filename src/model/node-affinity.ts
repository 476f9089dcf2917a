// Does a PV's required node affinity select a node? The scheduler's NodeSelector semantics
// (component-helpers' nodeaffinity): terms are ORed; within a term every matchExpression (on
// labels) and matchField (only metadata.name) must hold; a term with neither matches nothing.
// Used by --node-deployment (docs/differences/node-deployment.md): a replica acts only on the
// volumes of its own node.
import type { Pv } from './objects.js';

export interface NodeIdentity {
  name: string;
  labels: Readonly<Record<string, string>>;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

/** The PV's spec.nodeAffinity.required terms, or undefined when it has no node affinity. */
export function requiredNodeTerms(pv: Pv): NodeSelectorTerm[] | undefined {
  const affinity = pv.spec['nodeAffinity'] as { required?: { nodeSelectorTerms?: NodeSelectorTerm[] } } | undefined;
  return affinity?.required?.nodeSelectorTerms;
}

function parseIntStrict(s: string): number | undefined {
  return /^-?\d+$/.test(s) ? Number(s) : undefined;
}

function requirementHolds(r: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      const have = value === undefined ? undefined : parseIntStrict(value);
      const want = values.length === 1 ? parseIntStrict(values[0]!) : undefined;
      if (have === undefined || want === undefined) return false;
      return r.operator === 'Gt' ? have > want : have < want;
    }
    default:
      // An operator the API server would have refused: never a match.
      return false;
  }
}

function termSelects(term: NodeSelectorTerm, node: NodeIdentity): boolean {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  const labelsHold = expressions.every((r) => requirementHolds(r, Object.hasOwn(node.labels, r.key) ? node.labels[r.key] : undefined));
  // Only metadata.name is a supported field; any other field key matches nothing.
  const fieldsHold = fields.every((r) => r.key === 'metadata.name' && (r.operator === 'In' || r.operator === 'NotIn') && requirementHolds(r, node.name));
  return labelsHold && fieldsHold;
}

/** 'none' when the PV has no required node affinity; otherwise whether it selects the node. */
export function nodeAffinitySelects(pv: Pv, node: NodeIdentity): boolean | 'none' {
  const terms = requiredNodeTerms(pv);
  if (terms === undefined) return 'none';
  return terms.some((term) => termSelects(term, node));
}
