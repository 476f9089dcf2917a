// The node flags of scripts/node-flags.ts are the ones every way of running the resizer uses: the
// Dockerfile's ENTRYPOINT (the OCI image's entry point is built from the same constant and checked in
// test/integration/image.test.ts; the bench imports it) and the image build's description in
// docs/development.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../cluster/components.js';
import { NODE_FLAGS } from '../../scripts/node-flags.js';

test('the Dockerfile ENTRYPOINT runs dist/main.js with NODE_FLAGS', () => {
  const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
  const entrypoints = [...dockerfile.matchAll(/^ENTRYPOINT (.+)$/gm)].map((m) => JSON.parse(m[1]!) as string[]);
  assert.deepEqual(entrypoints, [['node', ...NODE_FLAGS, 'dist/main.js']]);
});

test('docs/development.md names the entry points with NODE_FLAGS', () => {
  const doc = readFileSync(join(repoRoot, 'docs', 'development.md'), 'utf8');
  const flags = NODE_FLAGS.map((f) => `"${f}", `).join('');
  assert.ok(doc.includes(`ENTRYPOINT ["node", ${flags}"dist/main.js"]`), 'Dockerfile entry point in docs/development.md');
  assert.ok(doc.includes(`["/usr/local/bin/node", ${flags}"/app/dist/main.js"]`), 'OCI entry point in docs/development.md');
});

test('this runtime accepts the flags and they cap the young generation', () => {
  // Three million short-lived objects with 100,000 alive at a time: without a cap Node 26 grows the
  // young generation to 64 MiB here; with it, new_space stays at two semi-spaces.
  const churn = `const ring = new Array(100000);
    for (let i = 0; i < 3e6; i++) ring[i % 100000] = { i, s: 'x' + i };
    const s = require('node:v8').getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');
    process.stdout.write(String(s.space_size));`;
  const newSpace = (flags: readonly string[]) =>
    Number(execFileSync(process.execPath, [...flags, '-e', churn], { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] }));
  const semi = NODE_FLAGS.find((f) => f.startsWith('--max-semi-space-size='));
  assert.ok(semi, 'the semi-space cap is set');
  const capBytes = Number(semi.split('=')[1]) * 1024 * 1024;
  const capped = newSpace(NODE_FLAGS);
  // Two semi-spaces, plus the few 256 KiB pages V8 counts while it resizes them (2.25 to 4.5 MiB
  // in 12 runs here, 4.75 MiB once in CI); far below the uncapped growth checked next (64 MiB here).
  const pageBytes = 256 * 1024;
  assert.ok(capped <= 2 * capBytes + 8 * pageBytes, `new_space ${capped} bytes with a ${capBytes}-byte semi-space cap`);
  assert.ok(newSpace([]) > 4 * capBytes, 'without the flag the young generation grows past the cap');
});

test('this runtime accepts every flag without a warning', () => {
  // node refuses an unknown V8 flag ("bad option", exit 9): a flag dropped by a later V8 fails here.
  const run = spawnSync(process.execPath, [...NODE_FLAGS, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, 'ok');
  assert.equal(run.stderr, '');
});

test('the image sets no runtime environment variables of its own', () => {
  const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
  const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const env = [...finalStage.matchAll(/^ENV (.+)$/gm)].map((m) => m[1]!);
  assert.deepEqual(env, ['NODE_ENV=production']);
});
