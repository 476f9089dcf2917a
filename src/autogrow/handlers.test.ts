import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pvc } from '../../test/support/builders.js';
import { ClaimMemory } from './claim-memory.js';
import { autoGrowPvcHandlers } from './handlers.js';

const LIMIT = { 'resize.topolvm.io/storage_limit': '20Gi' };

function setup() {
  const memory = new ClaimMemory();
  const queued: string[] = [];
  const forgotten: string[] = [];
  let now = 1_000;
  const handlers = autoGrowPvcHandlers({
    memory,
    queue: { add: (key) => queued.push(key), forget: (key) => forgotten.push(`queue ${key}`) },
    forget: (key) => forgotten.push(`reconciler ${key}`),
    now: () => now,
  });
  return { memory, queued, forgotten, handlers, at: (ms: number) => (now = ms) };
}

test('the capacity clock: first seen at add, restarted only when status.capacity changes; claims without a limit are not kept', () => {
  const s = setup();
  s.handlers.add!(pvc({ capacity: '10Gi', annotations: LIMIT, resourceVersion: '1' }));
  s.handlers.add!(pvc({ name: 'other', capacity: '10Gi', resourceVersion: '1' }));
  assert.equal(s.memory.capacitySinceMs('ns/data'), 1_000);
  assert.equal(s.memory.capacitySinceMs('ns/other'), undefined);
  s.at(2_000);
  s.handlers.update!(pvc({ capacity: '10Gi', annotations: LIMIT, resourceVersion: '1' }), pvc({ capacity: '10Gi', annotations: LIMIT, resourceVersion: '2' }));
  assert.equal(s.memory.capacitySinceMs('ns/data'), 1_000, 'same capacity: same clock');
  s.at(3_000);
  s.handlers.update!(pvc({ capacity: '10Gi', annotations: LIMIT, resourceVersion: '2' }), pvc({ capacity: '11Gi', annotations: LIMIT, resourceVersion: '3' }));
  assert.equal(s.memory.capacitySinceMs('ns/data'), 3_000);
  s.handlers.update!(pvc({ capacity: '11Gi', annotations: LIMIT, resourceVersion: '3' }), pvc({ capacity: '11Gi', resourceVersion: '4' }));
  assert.equal(s.memory.capacitySinceMs('ns/data'), undefined, 'the limit removed: forgotten');
});

test("a user's edit (request or annotations) queues the claim again; status changes and resyncs do not", () => {
  const s = setup();
  const before = pvc({ request: '10Gi', capacity: '10Gi', annotations: LIMIT, resourceVersion: '1' });
  s.handlers.update!(before, before);
  s.handlers.update!(before, pvc({ request: '10Gi', capacity: '11Gi', annotations: LIMIT, resourceVersion: '2' }));
  assert.deepEqual(s.queued, []);
  s.handlers.update!(before, pvc({ request: '15Gi', capacity: '10Gi', annotations: LIMIT, resourceVersion: '2' }));
  s.handlers.update!(before, pvc({ request: '10Gi', capacity: '10Gi', annotations: { ...LIMIT, 'resize.topolvm.io/increase': '5Gi' }, resourceVersion: '3' }));
  assert.deepEqual(s.queued, ['ns/data', 'ns/data']);
  s.handlers.delete!(before);
  assert.deepEqual(s.forgotten, ['queue ns/data', 'reconciler ns/data']);
});
