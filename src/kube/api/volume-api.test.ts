import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../observability/log/logger.js';
import type { Pv, Pvc } from '../../model/objects.js';
import { pv, pvc } from '../../../test/support/builders.js';
import { readClaimAndVolume, type ObjectCache } from './volume-api.js';

function cache<T extends { metadata: { name: string; namespace?: string } }>(...items: T[]): ObjectCache<T> {
  const key = (o: T) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);
  return { get: (k) => items.find((o) => key(o) === k), writeBack: () => false };
}

function start(pvcs: ObjectCache<Pvc>, pvs: ObjectCache<Pv>, key: string) {
  const lines: string[] = [];
  const log = createLogger({ verbosity: 4, format: 'text', write: (l) => lines.push(l) });
  const read = () => readClaimAndVolume(key, { pvcs, pvs, log, pvNotFound: (name) => new Error(`no PV ${name} for ${key}`) });
  return { read, lines };
}

test('the shared start of a reconcile: the PVC, then the PV it is bound to', () => {
  const claim = pvc({ namespace: 'ns', name: 'data', volumeName: 'pv-1' });
  const volume = pv({ name: 'pv-1' });
  assert.deepEqual(start(cache(claim), cache(volume), 'ns/data').read(), { pvc: claim, pv: volume });
});

test('a PVC that is gone or bound to no volume yet: nothing to do, said as upstream says it', () => {
  const gone = start(cache<Pvc>(), cache<Pv>(), 'ns/data');
  assert.equal(gone.read(), undefined);
  assert.match(gone.lines.join('\n'), /"PVC is deleted or does not exist" PVC="ns\/data"/);
  const unbound = start(cache(pvc({ namespace: 'ns', name: 'data', volumeName: null })), cache<Pv>(), 'ns/data');
  assert.equal(unbound.read(), undefined);
  assert.match(unbound.lines.join('\n'), /"PV bound to PVC is not created yet" PVC="ns\/data"/);
});

test("a PV not in the cache yet is the controller's error (retried with backoff)", () => {
  const { read } = start(cache(pvc({ namespace: 'ns', name: 'data', volumeName: 'pv-1' })), cache<Pv>(), 'ns/data');
  assert.throws(read, /^Error: no PV pv-1 for ns\/data$/);
});
