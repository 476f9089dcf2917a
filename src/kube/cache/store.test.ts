import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../model/objects.js';
import { objectKey } from './keys.js';
import { compareResourceVersions, Store } from './store.js';

const obj = (name: string, rv: string, ns?: string) => ({ metadata: { name, namespace: ns, resourceVersion: rv } });

test('keys: ns/name for namespaced, name for cluster-scoped', () => {
  assert.equal(objectKey(obj('a', '1', 'ns')), 'ns/a');
  assert.equal(objectKey(obj('pv-1', '1')), 'pv-1');
  // The API server never sends an object without a name; a key is never made up for one.
  assert.throws(() => objectKey({ metadata: {} } as KubeObject));
});

test('resourceVersions compare as integers when numeric', () => {
  assert.equal(compareResourceVersions('9', '10'), -1);
  assert.equal(compareResourceVersions('10', '9'), 1);
  assert.equal(compareResourceVersions('10', '10'), 0);
  assert.equal(compareResourceVersions('99999999999999999999', '100000000000000000000'), -1);
  assert.equal(compareResourceVersions('abc', 'abd'), 1, 'opaque: a different RV is taken as newer');
  assert.equal(compareResourceVersions('0010', '9'), 1, 'leading zeros do not count');
  assert.equal(compareResourceVersions('009', '10'), -1);
  assert.equal(compareResourceVersions('010', '10'), 0, 'the same integer');
  assert.equal(compareResourceVersions('12a', '13'), 1, 'not decimal: opaque');
  assert.equal(compareResourceVersions(undefined, '1'), -1);
  assert.equal(compareResourceVersions('1', ''), 1);
});

test('writeBack caches only newer objects', () => {
  const s = new Store();
  assert.equal(s.writeBack(obj('a', '10', 'ns')), true);
  assert.equal(s.writeBack(obj('a', '9', 'ns')), false);
  assert.equal(s.writeBack(obj('a', '10', 'ns')), false);
  assert.equal(s.get('ns/a')?.metadata?.resourceVersion, '10');
  assert.equal(s.writeBack(obj('a', '11', 'ns')), true);
  assert.equal(s.get('ns/a')?.metadata?.resourceVersion, '11');
  assert.deepEqual(s.keys(), ['ns/a']);
  assert.equal(s.list().length, 1);
});
