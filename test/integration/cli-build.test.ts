// `npm run build` produces a runnable dist/, and dist/ runs with package.json alone beside it —
// what the Dockerfile's runtime stage holds (package.json, dist/, license files; no node_modules).
// No Docker engine here, so the stages are reproduced in a temp directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../cluster/components.js';
import { NODE_FLAGS } from '../../scripts/node-flags.js';

const exec = promisify(execFile);
const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;

test('build, and run dist/main.js without node_modules', { timeout: 600_000 }, async (t) => {
  const app = mkdtempSync(join(tmpdir(), 'rz-build-'));
  t.after(() => rmSync(app, { recursive: true, force: true }));

  // Stage 1: the build script (what `npm run build` runs) into app/dist.
  // SOURCE_COMMIT as the image build passes it (its context has no .git): --version prints it.
  const commit = 'abcdef0123456789abcdef0123456789abcdef01';
  await exec('bash', [join(repoRoot, 'scripts', 'build.sh'), join(app, 'dist')], {
    cwd: repoRoot,
    maxBuffer: 16 << 20,
    env: { ...process.env, SOURCE_COMMIT: commit },
  });
  assert.ok(existsSync(join(app, 'dist', 'main.js')));
  // One bundle: the entry point and the resizer with its dependencies, no module tree.
  assert.deepEqual(
    readdirSync(join(app, 'dist'))
      .filter((f) => f.endsWith('.js'))
      .sort(),
    ['main.js', 'resizer.js'],
  );

  // Stage 2: the image ships package.json beside dist/ and no node_modules: the bundle holds every
  // production dependency (an import the bundle left outside would fail to resolve below).
  copyFileSync(join(repoRoot, 'package.json'), join(app, 'package.json'));
  assert.ok(!existsSync(join(app, 'node_modules')));

  // Stage 3: the entry point runs from there.
  const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    exec(process.execPath, [...NODE_FLAGS, join(app, 'dist', 'main.js'), ...args], { cwd: app, env: { PATH: process.env['PATH'], ...env } }).then(
      (r) => ({ code: 0, ...r }),
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
  const v = await run(['--version']);
  assert.equal(v.code, 0);
  assert.equal(v.stdout, `csi-resizer ${version}-g${commit.slice(0, 12)}\n`);
  // The build made the bundle's compile cache for this runtime (scripts/compile-cache.sh), and a
  // start reads it.
  assert.ok(
    readdirSync(join(app, 'dist', 'compile-cache')).some((d) => d.startsWith(`${process.version}-${process.arch}-`)),
    'dist/compile-cache holds a cache of this runtime',
  );
  const cached = await run(['--version'], { NODE_DEBUG_NATIVE: 'COMPILE_CACHE' });
  assert.match(cached.stderr, /V8 code cache for ESM file:\/\/\S+\/dist\/resizer\.js was accepted/);
  const help = await run(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stderr, /^Usage of csi-resizer:/);
  // Past flag parsing every module loads (gRPC, proto, client-node): startup gets as far as the
  // cluster config, which is missing here.
  const start = await run(['--csi-address=/nonexistent.sock']);
  assert.equal(start.code, 1);
  assert.match(start.stderr, /Failed to create cluster config/);

  // That start loads no builtin module the resizer does not use (docs/differences/performance.md):
  // Node's own copy of undici comes with an ESM import of node:http (the resizer uses node:http(s)'
  // own client, not undici). node:http2 is used (@grpc/grpc-js runs on it), so it is not checked.
  const preload = join(app, 'loaded.cjs');
  const list = join(app, 'loaded.txt');
  writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')));\n`);
  const listed = await exec(process.execPath, [...NODE_FLAGS, '--require', preload, join(app, 'dist', 'main.js'), '--csi-address=/nonexistent.sock'], {
    cwd: app,
    env: { PATH: process.env['PATH'] },
  }).then(
    (r) => ({ code: 0, ...r }),
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
  assert.match(listed.stderr, /Failed to create cluster config/);
  const loaded = new Set(
    readFileSync(list, 'utf8')
      .split('\n')
      .map((l) => l.replace(/^NativeModule /, '')),
  );
  assert.ok(loaded.has('tls'), "the list is this process's module load list, TLS included");
  const unused = ['internal/deps/undici/undici'];
  assert.deepEqual(
    unused.filter((m) => loaded.has(m)),
    [],
  );
});
