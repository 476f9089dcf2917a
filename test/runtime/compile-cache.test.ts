// The compile cache shipped beside the bundle (scripts/compile-cache.sh makes it at build time,
// scripts/dist-main.js reads it): the same bytes from any directory, read by a start from a
// read-only dist/ with no writable temp directory (a pod's root filesystem), and a start that
// still works when the cache is stale, missing, or another runtime's. A small stand-in bundle
// beside the real entry point, so no build is needed; test/integration/cli-build.test.ts checks
// the real bundle's cache. Node reports what its cache does with NODE_DEBUG_NATIVE=COMPILE_CACHE.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../cluster/components.js';

const exec = promisify(execFile);

// Enough code for V8 to cache, and what the process saw of the cache.
const BUNDLE = `const { getCompileCacheDir } = process.getBuiltinModule('node:module');
function describe(name) { return [name, process.argv.length].join(' '); }
console.log(JSON.stringify({ ran: describe('bundle'), cacheDir: getCompileCacheDir() ?? null }));
`;

/** A dist/ with the real entry point and the stand-in bundle, under a fresh directory with a package.json (as in the image). */
function makeApp(parent: string, name: string): string {
  const dist = join(parent, name, 'dist');
  mkdirSync(dist, { recursive: true });
  writeFileSync(join(parent, name, 'package.json'), '{"type":"module"}\n');
  copyFileSync(join(repoRoot, 'scripts', 'dist-main.js'), join(dist, 'main.js'));
  writeFileSync(join(dist, 'resizer.js'), BUNDLE);
  return dist;
}

async function makeCache(dist: string): Promise<void> {
  await exec('bash', [join(repoRoot, 'scripts', 'compile-cache.sh'), dist, process.execPath]);
}

/** Every file under dir (relative path to bytes). */
function files(dir: string, rel = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of readdirSync(join(dir, rel))) {
    const path = rel === '' ? name : `${rel}/${name}`;
    if (statSync(join(dir, path)).isDirectory()) for (const [p, b] of files(dir, path)) out.set(p, b);
    else out.set(path, readFileSync(join(dir, path)).toString('base64'));
  }
  return out;
}

/** Directories 0555 and files 0444 (root writes anyway: its run gets a read-only mount as well). */
function readOnly(dir: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) readOnly(path);
    else chmodSync(path, 0o444);
  }
  chmodSync(dir, 0o555);
}

interface Start {
  ran: string;
  cacheDir: string | null;
  /** Node's compile-cache lines about the bundle. */
  cacheLog: string[];
}

/** dist/main.js from a read-only dist/, TMPDIR a directory that does not exist, as a pod starts it. */
async function startLikeAPod(dist: string): Promise<Start> {
  readOnly(dist);
  const node = [process.execPath, join(dist, 'main.js')];
  // As root: dist/ bind-mounted read-only in a mount namespace of the run's own, as a pod's root
  // filesystem is mounted.
  const [file, args] =
    process.getuid?.() === 0 ? ['unshare', ['--mount', 'sh', '-c', 'mount --bind -o ro "$0" "$0" && exec "$@"', dist, ...node]] : [node[0]!, node.slice(1)];
  const { stdout, stderr } = await exec(file, args, {
    cwd: '/',
    env: { PATH: process.env['PATH'], TMPDIR: join(dist, 'no-tmp'), NODE_DEBUG_NATIVE: 'COMPILE_CACHE' },
  });
  const out = JSON.parse(stdout) as { ran: string; cacheDir: string | null };
  return { ...out, cacheLog: stderr.split('\n').filter((l) => l.startsWith('[compile cache]') && l.includes('resizer.js')) };
}

function workDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'rz-compile-cache-'));
  chmodSync(dir, 0o755);
  t.after(() => {
    // Writable again, so the tree can be removed.
    const writable = (d: string) => {
      chmodSync(d, 0o755);
      for (const name of readdirSync(d)) if (statSync(join(d, name)).isDirectory()) writable(join(d, name));
    };
    writable(dir);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

const thisRuntime = `${process.version}-${process.arch}-`;

test('the build makes the cache for this runtime, the same bytes from any directory', async (t) => {
  const work = workDir(t);
  const a = makeApp(work, 'a');
  const b = makeApp(work, 'a-longer-path');
  await makeCache(a);
  await makeCache(b);
  const made = files(join(a, 'compile-cache'));
  assert.ok(
    [...made.keys()].some((p) => p.startsWith(thisRuntime)),
    `a directory for ${thisRuntime}*: ${[...made.keys()].join(', ')}`,
  );
  assert.deepEqual(files(join(b, 'compile-cache')), made);
});

test('a start from a read-only dist/ with no writable temp directory reads the shipped cache and writes nothing', async (t) => {
  const dist = makeApp(workDir(t), 'app');
  await makeCache(dist);
  const before = files(join(dist, 'compile-cache'));
  const start = await startLikeAPod(dist);
  assert.equal(start.ran, 'bundle 2');
  assert.equal(start.cacheDir?.startsWith(join(dist, 'compile-cache', thisRuntime)), true, `cache dir ${start.cacheDir}`);
  assert.ok(
    start.cacheLog.some((l) => /was accepted/.test(l)),
    start.cacheLog.join('\n'),
  );
  assert.deepEqual(files(join(dist, 'compile-cache')), before);
});

test('a stale shipped cache (the bundle changed after it was made) is not used, and the start works', async (t) => {
  const dist = makeApp(workDir(t), 'app');
  await makeCache(dist);
  appendFileSync(join(dist, 'resizer.js'), '// changed after the cache was made\n');
  const before = files(join(dist, 'compile-cache'));
  const start = await startLikeAPod(dist);
  assert.equal(start.ran, 'bundle 2');
  assert.ok(!start.cacheLog.some((l) => /was accepted/.test(l)), start.cacheLog.join('\n'));
  assert.deepEqual(files(join(dist, 'compile-cache')), before);
});

test("without a shipped cache, or with only another runtime's, a read-only start works with the cache off", async (t) => {
  const work = workDir(t);
  const missing = makeApp(work, 'missing');
  const other = makeApp(work, 'other');
  await makeCache(other);
  const cache = join(other, 'compile-cache');
  for (const name of readdirSync(cache)) renameSync(join(cache, name), join(cache, name.replace(thisRuntime, 'v0.0.0-other-')));
  for (const dist of [missing, other]) {
    const start = await startLikeAPod(dist);
    assert.equal(start.ran, 'bundle 2');
    assert.equal(start.cacheDir, null, `${dist}: no compile cache`);
  }
});
