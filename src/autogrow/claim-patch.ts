// The writes auto-grow makes to a claim, as JSON merge patches of the PVC itself (not its status):
// the new spec.resources.requests.storage with the last-grow record in the same patch, and the
// limit-reached record. Each carries the resourceVersion the decision was made on, so a claim
// changed since (a user's edit, another controller's) is not overwritten: the API server answers
// 409 and the claim is decided again from its new state. Pure.
import type { Pvc } from '../model/objects.js';
import { STORAGE } from '../model/pvc.js';
import { limitReachedAnnotation } from './state.js';

/** Raises the request, with the state annotations, on the version of the claim that was decided on. */
export function growPatch(pvc: Pvc, request: string, annotations: Readonly<Record<string, string>>): Record<string, unknown> {
  return {
    metadata: { ...precondition(pvc), annotations: { ...annotations } },
    spec: { resources: { requests: { [STORAGE]: request } } },
  };
}

/** Records that the limit was reported as reached. */
export function limitReachedPatch(pvc: Pvc, limit: string): Record<string, unknown> {
  return { metadata: { ...precondition(pvc), annotations: limitReachedAnnotation(limit) } };
}

function precondition(pvc: Pvc): { resourceVersion?: string } {
  return pvc.metadata.resourceVersion ? { resourceVersion: pvc.metadata.resourceVersion } : {};
}
