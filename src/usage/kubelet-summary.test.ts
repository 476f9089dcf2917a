// Reading a summary's volume usage: what is kept (the wanted claims, the newest entry), and that the
// reader gives the same answer however the text is cut into pieces, with strings that look like
// structure, as a reference that parses the whole document does; and every way a text is not a
// summary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SummaryFormatError, SummaryReader, usageFromSummary } from './kubelet-summary.js';
import type { VolumeUsage } from './volume-usage.js';

const volume = (namespace: string, name: string, o: Record<string, unknown> = {}) => ({
  time: '2026-08-30T12:00:00Z',
  availableBytes: 1000,
  capacityBytes: 10000,
  usedBytes: 9000,
  inodesFree: 50,
  inodes: 100,
  inodesUsed: 50,
  name: 'data',
  pvcRef: { name, namespace },
  ...o,
});
const pod = (volumes: unknown[], o: Record<string, unknown> = {}) => ({
  podRef: { name: 'p', namespace: 'ns', uid: 'u' },
  startTime: '2026-08-30T00:00:00Z',
  containers: [],
  volume: volumes,
  ...o,
});
const wanted = new Set(['ns/a', 'ns/b', 'ns/c']);
const read = (summary: unknown, claims: ReadonlySet<string> = wanted) => usageFromSummary(JSON.stringify(summary), claims);

/** What a reader that parses the whole document finds: the specification the scanner must meet. */
function reference(text: string, claims: ReadonlySet<string>): Map<string, VolumeUsage> {
  const found = new Map<string, VolumeUsage>();
  const summary = JSON.parse(text) as { pods?: Array<{ volume?: unknown }> | null };
  for (const p of summary.pods ?? []) {
    if (!Array.isArray(p.volume)) continue;
    for (const v of p.volume as Array<Record<string, any>>) {
      const key = `${v['pvcRef']?.namespace}/${v['pvcRef']?.name}`;
      if (!claims.has(key) || typeof v['capacityBytes'] !== 'number' || typeof v['availableBytes'] !== 'number') continue;
      const usage: VolumeUsage = {
        capacityBytes: BigInt(v['capacityBytes']),
        availableBytes: BigInt(v['availableBytes']),
        ...(typeof v['inodes'] === 'number' ? { inodes: BigInt(v['inodes']), inodesFree: BigInt(v['inodesFree']) } : {}),
        sampledAtMs: Date.parse(v['time']),
      };
      const known = found.get(key);
      if (!known || usage.sampledAtMs > known.sampledAtMs) found.set(key, usage);
    }
  }
  return found;
}

/** Reads `text`'s UTF-8 bytes in pieces cut at `cuts` (sorted byte offsets, which may fall inside a character). */
function readInPieces(text: string, cuts: readonly number[], claims: ReadonlySet<string>): Map<string, VolumeUsage> {
  const bytes = Buffer.from(text, 'utf8');
  const reader = new SummaryReader(claims);
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    reader.write(bytes.subarray(from, cut));
    from = cut;
  }
  return reader.end();
}

/** A deterministic pseudo-random sequence (the cuts must be the same on every run). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1_664_525 + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

test('the wanted claims with their sizes and time; others, and volumes without a claim, are left out', () => {
  const found = read({
    node: { nodeName: 'n1' },
    pods: [
      pod([volume('ns', 'a'), { name: 'config', time: '2026-08-30T12:00:00Z', capacityBytes: 1, availableBytes: 1 }]),
      pod([volume('ns', 'other')]),
      pod([volume('ns', 'b', { inodes: undefined, inodesFree: undefined })]),
    ],
  });
  assert.deepEqual([...found.keys()].sort(), ['ns/a', 'ns/b']);
  assert.deepEqual(found.get('ns/a'), {
    capacityBytes: 10000n,
    availableBytes: 1000n,
    inodes: 100n,
    inodesFree: 50n,
    sampledAtMs: Date.parse('2026-08-30T12:00:00Z'),
  });
  assert.deepEqual(found.get('ns/b'), { capacityBytes: 10000n, availableBytes: 1000n, sampledAtMs: Date.parse('2026-08-30T12:00:00Z') });
});

test('a claim two pods mount: the newer measurement', () => {
  const found = read({
    pods: [pod([volume('ns', 'a', { availableBytes: 5 })]), pod([volume('ns', 'a', { time: '2026-08-30T12:00:30Z', availableBytes: 7 })])],
  });
  assert.equal(found.get('ns/a')?.availableBytes, 7n);
});

test('an entry not yet measured (no capacity, no available, no time) is no sample', () => {
  const found = read({
    pods: [pod([volume('ns', 'a', { capacityBytes: undefined }), volume('ns', 'b', { availableBytes: -1 }), volume('ns', 'c', { time: 'soon' })])],
  });
  assert.equal(found.size, 0);
});

test('a node without pods, or pods without volumes', () => {
  assert.equal(read({ node: {} }).size, 0);
  assert.equal(read({ pods: null }).size, 0);
  assert.equal(read({ pods: [{ podRef: {} }] }).size, 0);
  assert.equal(read({ pods: [pod([]), { volume: null }, { volume: {} }] }).size, 0);
});

test('only pods[].volume counts: a "volume" or "pods" key elsewhere, or a string that looks like one, does not', () => {
  const decoy = [volume('ns', 'a', { availableBytes: 1 })];
  const found = read({
    node: { nodeName: 'n1', volume: decoy, pods: [pod(decoy)] },
    pods: [
      pod([volume('ns', 'a', { availableBytes: 42 })], {
        containers: [{ name: 'app', volume: decoy }],
        podRef: { name: '"volume":[', namespace: 'ns\\", "volume": [', uid: '\\' },
        note: '{"pods": [{"volume": [',
      }),
    ],
    extra: { pods: [pod(decoy)] },
  });
  assert.deepEqual([...found.keys()], ['ns/a']);
  assert.equal(found.get('ns/a')?.availableBytes, 42n);
});

test('keys with escapes are read as JSON reads them', () => {
  const text = '{"pod\\u0073":[{"vol\\u0075me":' + JSON.stringify([volume('ns', 'a')]) + '}]}';
  assert.equal(usageFromSummary(text, wanted).get('ns/a')?.availableBytes, 1000n);
});

test('the same answer however the bytes are cut (inside a character too): at every offset, and at random cuts of a node with 45 pods', () => {
  const claimsHere = new Set([...wanted, 'nš/ü€']);
  const tricky = JSON.stringify({
    node: { nodeName: 'n"1\\', fs: { availableBytes: 1 } },
    pods: [
      pod([volume('ns', 'a', { name: 'a\\"]}' }), volume('ns', 'b')], { podRef: { name: '\\\\"x', namespace: '€ ü', uid: '"' }, 'é€': { volume: [] } }),
      pod([volume('ns', 'c', { name: '\\u005b' }), volume('nš', 'ü€', { name: 'data-€' })]),
    ],
  });
  const want = reference(tricky, claimsHere);
  assert.equal(want.size, 4);
  const bytes = Buffer.byteLength(tricky, 'utf8');
  for (let cut = 0; cut <= bytes; cut++) assert.deepEqual(readInPieces(tricky, [cut], claimsHere), want, `cut at ${cut}`);
  for (let a = 0; a < bytes; a += 7) {
    for (let b = a; b <= bytes; b += 5) assert.deepEqual(readInPieces(tricky, [a, b], claimsHere), want, `cuts at ${a}, ${b}`);
  }

  const claims = new Set(Array.from({ length: 30 }, (_, i) => `bench/claim-${i}`));
  const pods = Array.from({ length: 45 }, (_, i) =>
    pod(i < 30 ? [volume('bench', `claim-${i}`, { availableBytes: i * 1000, time: `2026-08-30T12:00:${String(i).padStart(2, '0')}Z` })] : [], {
      podRef: { name: `pod-${i}`, namespace: i < 30 ? 'bench' : 'workloads', uid: `uid-${i}` },
      containers: [{ name: 'app', cpu: { usageNanoCores: i }, rootfs: { availableBytes: 5 } }],
    }),
  );
  const big = JSON.stringify({ node: { nodeName: 'n' }, pods });
  const bigWant = reference(big, claims);
  assert.equal(bigWant.size, 30);
  const next = random(37);
  for (let round = 0; round < 50; round++) {
    const cuts = Array.from({ length: 1 + Math.floor(next() * 40) }, () => Math.floor(next() * big.length)).sort((x, y) => x - y);
    assert.deepEqual(readInPieces(big, cuts, claims), bigWant, `cuts ${cuts.join(',')}`);
  }
});

test('not a summary: each is a SummaryFormatError that says why', () => {
  const cases: Array<[string, RegExp]> = [
    ['', /not a JSON object/],
    ['[]', /not a JSON object/],
    ['"pods"', /not a JSON object/],
    ['<html>', /not a JSON object/],
    ['{"pods": {}}', /"pods" is not a list/],
    ['{"pods": "many"}', /"pods" is not a list/],
    ['{"pods": [{"volume": [{"pvcRef": }]}]}', /"volume" list is not JSON/],
    ['{"pods": [', /ends before the document does/],
    ['{"node": {"nodeName": "n', /ends before the document does/],
    ['{"pods": [}', /not balanced/],
    ['{"pods": []} {}', /goes on after the document/],
  ];
  for (const [text, message] of cases) {
    assert.throws(
      () => usageFromSummary(text, wanted),
      (err: unknown) => err instanceof SummaryFormatError && message.test(err.message),
      JSON.stringify(text),
    );
  }
});
