// A missing rule is said once whoever finds it, with what stops; granted only after it was said missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeApiError } from '../kube/api/errors.js';
import { requiredRules, type RequiredRule } from '../kube/api/required-permissions.js';
import { createLogger } from '../observability/log/logger.js';
import { PermissionNotices } from './permission-notices.js';

const rules = requiredRules({ pods: true, volumeAttributesClasses: true, leaseNamespace: undefined });
const rule = (resource: string, verb = 'list'): RequiredRule => rules.find((r) => r.resource === resource && r.verbs.includes(verb))!;
const forbidden = new KubeApiError(403, 'Forbidden', 'volumeattributesclasses.storage.k8s.io is forbidden: User "u" cannot list resource');

function setup(): { notices: PermissionNotices; lines: string[] } {
  const lines: string[] = [];
  return { notices: new PermissionNotices(createLogger({ verbosity: 0, format: 'text', write: (l) => lines.push(l) })), lines };
}
const body = (line: string) => line.slice(line.indexOf('] ') + 2);

test('an informer refused first: one warning for the modify rule with the refusal; the check finding it after says nothing', () => {
  const { notices, lines } = setup();
  const vac = rule('volumeattributesclasses');
  notices.refused(vac, forbidden);
  notices.refused(vac, forbidden);
  notices.missing(vac, ['list', 'watch']);
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /^W/);
  assert.equal(
    body(lines[0]!),
    '"Missing RBAC permission: modify is off until it is granted (resizes are not affected)" permission="volumeattributesclasses.storage.k8s.io list,watch" err="volumeattributesclasses.storage.k8s.io is forbidden: User \\"u\\" cannot list resource"',
  );
});

test('the check first: an error naming the verbs found missing, for a rule whose absence stops resizes', () => {
  const { notices, lines } = setup();
  notices.missing(rule('pods'), ['watch']);
  notices.refused(rule('pods'), forbidden);
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /^E/);
  assert.equal(body(lines[0]!), '"Missing RBAC permission: resizes will not happen until it is granted" permission="pods watch"');
});

test('granted is said only for a rule said missing, once; a rule refused again after that is said again', () => {
  const { notices, lines } = setup();
  const vac = rule('volumeattributesclasses');
  notices.granted(vac);
  assert.deepEqual(lines, [], 'never said missing: nothing to say');
  notices.refused(vac, forbidden);
  notices.granted(vac);
  notices.granted(vac);
  assert.equal(lines.length, 2);
  assert.equal(body(lines[1]!), '"RBAC permission granted, modify starting" permission="volumeattributesclasses.storage.k8s.io list,watch"');
  notices.refused(vac, forbidden);
  assert.equal(lines.length, 3);
});

test('rules are told apart: the PV list/watch rule and the PV patch rule are each said', () => {
  const { notices, lines } = setup();
  notices.missing(rule('persistentvolumes', 'list'), ['list', 'watch']);
  notices.missing(rule('persistentvolumes', 'patch'), ['patch']);
  assert.equal(lines.length, 2);
});

test('the event recorders and the elector share the notices: a refused event write after the check said the rule is silent, its grant is said', () => {
  const { notices, lines } = setup();
  const events = rule('events', 'create');
  notices.missing(events, ['create', 'patch']);
  const recorderA = notices.listenerFor(events);
  const recorderB = notices.listenerFor(events);
  recorderA.refused(forbidden);
  recorderB.refused(forbidden);
  assert.equal(lines.length, 1);
  assert.equal(
    body(lines[0]!),
    '"Missing RBAC permission: no events are recorded until it is granted (resizes and modifications are not affected)" permission="events create,patch"',
  );
  recorderA.allowed();
  recorderB.allowed();
  assert.equal(lines.length, 2);
  assert.equal(body(lines[1]!), '"RBAC permission granted, events recorded again" permission="events create,patch"');
});

test('the Lease rule refused to the elector: one error naming the namespaced rule', () => {
  const { notices, lines } = setup();
  const leases = requiredRules({ pods: false, volumeAttributesClasses: false, leaseNamespace: 'kube-system' }).find((r) => r.resource === 'leases')!;
  const elector = notices.listenerFor(leases);
  elector.refused(forbidden);
  elector.refused(forbidden);
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /^E/);
  assert.match(body(lines[0]!), /^"Missing RBAC permission: this replica cannot lead, so it neither resizes nor modifies until it is granted" err=/);
  assert.match(body(lines[0]!), / permission="leases.coordination.k8s.io get,create,update in namespace kube-system"$/);
});
