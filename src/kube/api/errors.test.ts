// A failed API call reads as client-go's error does: the server's Status message, nothing of our
// request layer; the request is kept on the error for logs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isConflict, isNotFound, KubeApiError } from './errors.js';

const patchStatus = { method: 'PATCH', path: '/api/v1/namespaces/ns/persistentvolumeclaims/data/status' };

const cases: {
  name: string;
  status: number;
  body: unknown;
  text?: string;
  request?: { method: string; path: string } | string;
  message: string;
  reason: string;
}[] = [
  {
    name: 'a Status body: its message, verbatim',
    status: 404,
    body: { kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404, message: 'persistentvolumeclaims "data" not found' },
    message: 'persistentvolumeclaims "data" not found',
    reason: 'NotFound',
  },
  {
    name: 'a conflict',
    status: 409,
    body: {
      kind: 'Status',
      reason: 'Conflict',
      code: 409,
      message:
        'Operation cannot be fulfilled on persistentvolumeclaims "data": the object has been modified; please apply your changes to the latest version and try again',
    },
    message:
      'Operation cannot be fulfilled on persistentvolumeclaims "data": the object has been modified; please apply your changes to the latest version and try again',
    reason: 'Conflict',
  },
  {
    name: "no body: client-go's generic text with verb, resource and name",
    status: 404,
    body: undefined,
    message: 'the server could not find the requested resource (patch persistentvolumeclaims data)',
    reason: 'NotFound',
  },
  {
    name: 'a text page from a proxy on a 5xx: quoted inside the generic text',
    status: 502,
    body: undefined,
    text: 'bad gateway\n',
    request: { method: 'GET', path: '/api/v1/persistentvolumes/pv-1' },
    message: 'an error on the server ("bad gateway") has prevented the request from succeeding (get persistentvolumes pv-1)',
    reason: 'InternalError',
  },
  {
    name: 'a list of a group resource: resource without a name',
    status: 503,
    body: undefined,
    request: { method: 'GET', path: '/apis/storage.k8s.io/v1/volumeattributesclasses?limit=500' },
    message: 'the server is currently unable to handle the request (get volumeattributesclasses)',
    reason: 'ServiceUnavailable',
  },
  {
    name: 'an unknown 4xx',
    status: 418,
    body: {},
    request: 'watch persistentvolumeclaims',
    message: 'the server responded with the status code 418 but did not return more information',
    reason: 'Unknown',
  },
];

for (const c of cases) {
  test(`KubeApiError.fromStatus: ${c.name}`, () => {
    const err = KubeApiError.fromStatus(c.status, c.body, c.request ?? patchStatus, c.text);
    assert.equal(err.message, c.message);
    assert.equal(err.reason, c.reason);
    assert.equal(err.status, c.status);
    const request = c.request ?? patchStatus;
    assert.equal(err.request, typeof request === 'string' ? request : `${request.method} ${request.path}`);
  });
}

test('classification reads status and reason, never the message', () => {
  assert.ok(isNotFound(KubeApiError.fromStatus(404, undefined, patchStatus)));
  assert.ok(isConflict(KubeApiError.fromStatus(409, { reason: 'Conflict', message: 'x' }, patchStatus)));
});
