// The node flags and environment of scripts/node-flags.ts are the ones every way of running the
// resizer uses: the Dockerfile's ENTRYPOINT and ENV (the OCI image's entry point and Env are built
// from the same constants and checked in test/integration/image.test.ts; the bench imports them) and
// the image build's description in docs/development.md and the runtime tuning in docs/performance.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../cluster/components.js';
import { applyRuntimeV8Flags } from '../../src/app/runtime-v8-flags.js';
import { NODE_FLAGS, RUNTIME_ENV, RUNTIME_V8_FLAGS, runtimeEnvLines } from '../../scripts/node-flags.js';

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

test('the heap growing bound, set by the process itself as the process runner does, keeps a churning old generation smaller', () => {
  // 10 MB that lives on, and two million objects that live long enough to be promoted, then die:
  // the old generation's largest size with RUNTIME_V8_FLAGS set at run time against without them.
  const churn = (flags: readonly string[]) => `const v8 = require('node:v8');
    for (const flag of ${JSON.stringify(flags)}) v8.setFlagsFromString(flag);
    const keep = []; for (let i = 0; i < 100000; i++) keep.push({ i, s: 'k' + i });
    const ring = new Array(20000); let peak = 0;
    for (let i = 0; i < 2e6; i++) {
      ring[i % 20000] = { i, a: [i, i + 1, i + 2], s: 'x' + i };
      if (i % 10000 === 0) peak = Math.max(peak, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_size);
    }
    process.stdout.write(String(peak));`;
  const peakOld = (flags: readonly string[]) =>
    Number(execFileSync(process.execPath, [...NODE_FLAGS, '-e', churn(flags)], { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] }));
  assert.ok(RUNTIME_V8_FLAGS.some((f) => f.startsWith('--heap-growing-percent=')), 'the bound is set');
  const bounded = peakOld(RUNTIME_V8_FLAGS);
  const unbounded = peakOld([]);
  // Measured here: about 21 against 30 MiB.
  assert.ok(bounded < unbounded * 0.85, `old space peak ${bounded} bytes with the bound, ${unbounded} without`);
});

test('the Maglev threshold, set by the process itself as the process runner does, makes a function wait longer for Maglev', () => {
  // Calls, 25 at a time, until V8 runs a small function as Maglev (or TurboFan) code; background
  // compiles are waited for after each step, so the count is the budget, not the compiler's pace.
  const callsToOptimise = (flags: readonly string[]) => `const v8 = require('node:v8');
    for (const flag of ${JSON.stringify(flags)}) v8.setFlagsFromString(flag);
    function work(a, b) { return a.x + b.y * 2 + (a.s + b.s).length; }
    const a = { x: 1, s: 'p' }, b = { y: 2, s: 'q' };
    let calls = 0;
    while (calls < 20000 && !(%ActiveTierIsMaglev(work) || %ActiveTierIsTurbofan(work))) {
      for (let i = 0; i < 25; i++) work(a, b);
      calls += 25;
      %WaitForBackgroundOptimization();
    }
    process.stdout.write(String(calls));`;
  const calls = (flags: readonly string[]) =>
    Number(execFileSync(process.execPath, [...NODE_FLAGS, '--allow-natives-syntax', '-e', callsToOptimise(flags)], { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] }));
  const threshold = RUNTIME_V8_FLAGS.find((f) => f.startsWith('--invocation-count-for-maglev='));
  assert.ok(threshold, 'the Maglev threshold is set');
  const withFlags = calls(RUNTIME_V8_FLAGS);
  const without = calls([]);
  // Measured here: 1050 against 525 calls (V8's default threshold is 400, ours 1000).
  assert.ok(without < 20000, `optimised at all without the flags (${without} calls)`);
  assert.ok(withFlags >= without * 1.5 && withFlags < 20000, `${withFlags} calls to Maglev with RUNTIME_V8_FLAGS, ${without} without`);
});

test('TurboFan off, set by the process itself as the process runner does, keeps hot code at Maglev', () => {
  // A function with a loop, called 100 times per turn of the event loop until it runs as
  // TurboFan code (or 400,000 calls): the tier each compiler reached it at.
  const tiers = (flags: readonly string[]) => `const v8 = require('node:v8');
    for (const flag of ${JSON.stringify(flags)}) v8.setFlagsFromString(flag);
    function work(a, b) { let s = 0; for (let k = 0; k < 20; k++) s += a.x + b.y * k + (a.s + b.s).length; return s; }
    const a = { x: 1, s: 'p' }, b = { y: 2, s: 'q' };
    (async () => {
      let calls = 0, maglev = -1, turbofan = -1;
      while (calls < 400000 && turbofan < 0) {
        for (let i = 0; i < 100; i++) work(a, b);
        calls += 100;
        await new Promise((resolve) => setImmediate(resolve));
        %WaitForBackgroundOptimization();
        if (maglev < 0 && %ActiveTierIsMaglev(work)) maglev = calls;
        if (%ActiveTierIsTurbofan(work)) turbofan = calls;
      }
      process.stdout.write(JSON.stringify({ maglev, turbofan }));
    })();`;
  const reached = (flags: readonly string[]) => JSON.parse(execFileSync(process.execPath, [...NODE_FLAGS, '--allow-natives-syntax', '-e', tiers(flags)], {
    encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'],
  })) as { maglev: number; turbofan: number };
  assert.ok(RUNTIME_V8_FLAGS.includes('--no-turbofan'), 'TurboFan is turned off');
  const without = reached([]);
  // Measured here: Maglev at 200 calls and TurboFan at 1400 without the flags; with them Maglev
  // at 1000-odd calls and TurboFan never.
  assert.ok(without.turbofan > 0, `TurboFan reached without RUNTIME_V8_FLAGS: ${JSON.stringify(without)}`);
  const withFlags = reached(RUNTIME_V8_FLAGS);
  assert.ok(withFlags.maglev > 0, `still optimised by Maglev: ${JSON.stringify(withFlags)}`);
  assert.equal(withFlags.turbofan, -1, `never TurboFan: ${JSON.stringify(withFlags)}`);
});

test('NODE_FLAGS keep the code cache Node ships for its builtins; RUNTIME_V8_FLAGS on the command line would not', () => {
  // Node prints whether each builtin's cached code was accepted (NODE_DEBUG_NATIVE=CODE_CACHE); a
  // rejected cache means every builtin compiled from source at each start (~30 ms of CPU).
  const rejected = (flags: readonly string[]) => {
    const run = spawnSync(process.execPath, [...flags, '-e', 'require("node:http2"); require("node:https")'], {
      encoding: 'utf8', timeout: 60_000, env: { ...process.env, NODE_DEBUG_NATIVE: 'CODE_CACHE' },
    });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /^Code cache of http2 .* is (accepted|rejected)$/m, `the runtime reports on its code cache: ${run.stderr.slice(0, 500)}`);
    return run.stderr.split('\n').filter((l) => l.includes('is rejected')).length;
  };
  assert.equal(rejected(NODE_FLAGS), 0);
  assert.ok(rejected([...NODE_FLAGS, ...RUNTIME_V8_FLAGS]) > 0, 'RUNTIME_V8_FLAGS would cost the cache on the command line');
});

test('applyRuntimeV8Flags sets RUNTIME_V8_FLAGS', () => {
  const set: string[] = [];
  applyRuntimeV8Flags((flag) => set.push(flag));
  assert.deepEqual(set, RUNTIME_V8_FLAGS);
});

test('the Dockerfile\'s final stage sets RUNTIME_ENV', () => {
  const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const env = [...runtime.matchAll(/^ENV (.+)$/gm)].flatMap((m) => m[1]!.trim().split(/\s+/));
  for (const line of runtimeEnvLines()) assert.ok(env.includes(line), `ENV ${line} in the runtime stage (has ${env.join(' ')})`);
});

test('docs/performance.md names RUNTIME_ENV where it describes the runtime', () => {
  const doc = readFileSync(join(repoRoot, 'docs', 'performance.md'), 'utf8');
  for (const line of runtimeEnvLines()) assert.ok(doc.includes(`\`${line}\``), `${line} in docs/performance.md`);
});

test('with RUNTIME_ENV, glibc keeps the threads\' allocations in at most MALLOC_ARENA_MAX arenas', () => {
  // Sixteen gzip jobs on libuv's four pool threads, each thread calling malloc: glibc gives each
  // its own 64 MiB-aligned arena (a reservation whose unused tail is mapped ---p) unless capped.
  const threadArenas = `const zlib = require('node:zlib');
    const { readFileSync } = require('node:fs');
    const input = Buffer.alloc(1 << 20, 'abcdefgh');
    let pending = 16;
    for (let i = 0; i < 16; i++) zlib.gzip(input, () => { if (--pending === 0) report(); });
    function report() {
      const maps = readFileSync('/proc/self/maps', 'utf8').trim().split('\\n').map((l) => {
        const [range, perms, , , , name] = l.split(/\\s+/);
        const [a, b] = range.split('-').map((x) => BigInt('0x' + x));
        return { a, b, perms, name };
      });
      const ARENA = 64n << 20n;
      let arenas = 0;
      for (let i = 0; i + 1 < maps.length; i++) {
        const m = maps[i], next = maps[i + 1];
        if (!m.name && m.a % ARENA === 0n && next.a === m.b && next.perms.startsWith('---') && next.b - m.a === ARENA) arenas++;
      }
      process.stdout.write(String(arenas));
    }`;
  const arenas = (env: Record<string, string>) => {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MALLOC_') && k !== 'GLIBC_TUNABLES'));
    return Number(execFileSync(process.execPath, ['-e', threadArenas], { encoding: 'utf8', timeout: 60_000, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
  };
  const max = Number(RUNTIME_ENV['MALLOC_ARENA_MAX']);
  assert.ok(max >= 1, 'MALLOC_ARENA_MAX is set');
  // The main arena (the brk heap) is one of the max; the rest are thread arenas.
  const capped = arenas({ ...RUNTIME_ENV });
  assert.ok(capped <= max - 1, `${capped} thread arenas with MALLOC_ARENA_MAX=${max}`);
  assert.ok(arenas({}) > max, 'without it glibc makes an arena per busy thread');
});
