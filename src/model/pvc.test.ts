// The size readers remember the bytes of quantity strings they parsed; a malformed quantity is
// never remembered, so every read of it fails, naming the object it came from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pvc } from './objects.js';
import { capacityBytes, ObjectFieldError, requestedBytes } from './pvc.js';

function pvc(name: string, request: string | undefined, capacity?: string): Pvc {
  return {
    metadata: { name, namespace: 'ns' },
    spec: request === undefined ? {} : { resources: { requests: { storage: request } } },
    status: capacity === undefined ? {} : { capacity: { storage: capacity } },
  } as Pvc;
}

test('sizes read twice read the same; absent ones are 0', () => {
  for (let i = 0; i < 2; i++) {
    assert.equal(requestedBytes(pvc('a', '2Gi')), 2n * 1024n ** 3n);
    assert.equal(requestedBytes(pvc('b', '1500M')), 1_500_000_000n);
    assert.equal(capacityBytes(pvc('c', undefined, '2Gi')), 2n * 1024n ** 3n);
    assert.equal(requestedBytes(pvc('d', undefined)), 0n);
  }
});

test('a malformed quantity fails on every read, naming each object', () => {
  for (const name of ['x', 'y', 'x']) {
    assert.throws(
      () => requestedBytes(pvc(name, '2 Gi')),
      (err: unknown) => err instanceof ObjectFieldError && err.message === `ns/${name}: spec.resources.requests.storage: invalid quantity "2 Gi"`,
    );
  }
});

test('many distinct quantities: each still reads right once the memory has started over', () => {
  for (let i = 1; i <= 3000; i++) assert.equal(requestedBytes(pvc('p', `${i}Mi`)), BigInt(i) * 1024n * 1024n);
  assert.equal(requestedBytes(pvc('p', '1Mi')), 1024n * 1024n);
});
