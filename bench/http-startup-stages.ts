// Evaluation probe (not part of `npm run bench`): where an HTTP client layer's start-up CPU and
// memory go. Each arm is a small entry bundled as the resizer is (esbuild, builtins through
// require: scripts/build.sh) and started fresh, alternating arms, with the V8 compile cache on as
// dist/main.js has it (one unmeasured warm-up start per arm fills it). Inside the child, the same
// snapshot is taken at each stage: at the entry's first line, after the layer's module is loaded
// (a dynamic import inside the bundle, so its evaluation is measured, not the bundle's parse),
// after the first request (a new TLS connection, the parser's set-up), and after N more requests:
// CPU (user+sys), the heap (used and committed, code space), external and ArrayBuffer memory, the
// resident set split as smaps_rollup splits it, and how many builtin modules were loaded. Each arm
// runs with the resizer's node flags (scripts/node-flags.ts).
//
//   node --import tsx bench/http-startup-stages.ts [--rounds 10] [--n 200] [--out file.json] ARM...
//
// ARM: `empty` (no layer), `undici` (undici's entry point: buildConnector and Pool as connections.ts
// builds them), `undici-pool` (undici's lib/dispatcher/pool.js and lib/core/connect.js only: not a
// documented entry point, to see what the entry's other modules cost), `https` (node:https with a
// keep-alive Agent), or `kubehttp:DIR` (the KubeHttp port of the checkout or snapshot at DIR, which
// has src/kube/http.ts: e.g. bench/.build/snap). Requests are GETs to an https server on loopback in
// this process (self-signed certificate, 2-byte JSON answers). ARM#--flag#--flag starts that arm
// with extra node flags.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../test/cluster/components.js';
import { selfSigned } from '../test/support/self-signed.js';
import { NODE_FLAGS } from '../scripts/node-flags.js';

const { values, positionals: arms } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '10' }, n: { type: 'string', default: '200' }, out: { type: 'string' } },
});
const rounds = Number(values.rounds);
const n = Number(values.n);
if (arms.length === 0 || !(rounds >= 1 && rounds <= 50) || !(n >= 0 && n <= 10_000)) {
  throw new Error('usage: http-startup-stages.ts [--rounds 1-50] [--n 0-10000] [--out file] ARM...');
}

const buildDir = join(repoRoot, 'bench', '.build', 'stages');
mkdirSync(buildDir, { recursive: true });
const undiciDir = join(repoRoot, 'node_modules', 'undici');

/** The driver of an arm: `open(url, ca)` resolves with a GET and a close. */
function driverSource(arm: string): string {
  if (arm === 'empty') {
    return `export async function open() { return { get: async () => {}, close() {} }; }`;
  }
  if (arm === 'undici' || arm === 'undici-pool') {
    const imports =
      arm === 'undici'
        ? `import { buildConnector, Pool } from ${JSON.stringify(undiciDir)};`
        : `import Pool from ${JSON.stringify(join(undiciDir, 'lib/dispatcher/pool.js'))}; import buildConnector from ${JSON.stringify(join(undiciDir, 'lib/core/connect.js'))};`;
    return `${imports}
import { createSecureContext } from 'node:tls';
export async function open(url, ca) {
  const connect = buildConnector({ secureContext: createSecureContext({ ca }), rejectUnauthorized: true, allowH2: false });
  const pool = new Pool(new URL(url).origin, { connect, allowH2: false, keepAliveTimeout: 90000 });
  const get = () => new Promise((resolve, reject) => {
    const chunks = [];
    pool.dispatch({ origin: new URL(url).origin, method: 'GET', path: '/api', headers: ['accept', 'application/json'], headersTimeout: 0, bodyTimeout: 0 }, {
      onRequestStart() {}, onResponseStart() {}, onResponseData(_c, chunk) { chunks.push(chunk); },
      onResponseEnd() { JSON.parse(Buffer.concat(chunks).toString()); resolve(); }, onResponseError(_c, err) { reject(err); },
    });
  });
  return { get, close() { pool.destroy().catch(() => {}); } };
}`;
  }
  if (arm === 'https') {
    // Through getBuiltinModule: an import would be hoisted to the bundle's top, before 'start'.
    return `const https = process.getBuiltinModule('node:https');
const { createSecureContext } = process.getBuiltinModule('node:tls');
export async function open(url, ca) {
  const agent = new https.Agent({ keepAlive: true, secureContext: createSecureContext({ ca }) });
  const get = () => new Promise((resolve, reject) => {
    const req = https.request(url + '/api', { agent, headers: { accept: 'application/json' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => { JSON.parse(Buffer.concat(chunks).toString()); resolve(); });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
  return { get, close() { agent.destroy(); } };
}`;
  }
  if (arm.startsWith('kubehttp:')) {
    const dir = resolve(repoRoot, arm.slice('kubehttp:'.length));
    return `import { KubeHttp } from ${JSON.stringify(join(dir, 'src/kube/http.ts'))};
export async function open(url, ca) {
  const client = new KubeHttp({ kubeConfig: { server: url, ca: { data: ca }, insecureSkipTlsVerify: false, auth: { kind: 'none' } }, qps: 0, burst: 1, env: {} });
  const signal = new AbortController().signal;
  return { get: () => client.request({ method: 'GET', path: '/api' }, signal), close() { client.close(); } };
}`;
  }
  throw new Error(`unknown arm ${arm}`);
}

/** The child's entry: a snapshot per stage, written as one JSON line to stdout. */
// node:tls is loaded before the first snapshot in every arm: the resizer loads it whatever its
// HTTP layer (and an arm's hoisted builtin imports would load it there anyway).
const ENTRY = `const { readFileSync } = process.getBuiltinModule('node:fs');
const v8 = process.getBuiltinModule('node:v8');
process.getBuiltinModule('node:tls');
function snap(stage) {
  const cpu = process.cpuUsage();
  const mem = process.memoryUsage();
  const rollup = Object.fromEntries(readFileSync('/proc/self/smaps_rollup', 'utf8').split('\\n')
    .map((l) => /^(\\w+):\\s+(\\d+) kB/.exec(l)).filter((m) => m !== null).map((m) => [m[1], Number(m[2])]));
  const code = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'code_space');
  return { stage, cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now(), rssKiB: rollup.Rss, anonKiB: rollup.Anonymous,
    fileKiB: rollup.Rss - rollup.Anonymous, heapUsedKiB: mem.heapUsed / 1024, heapTotalKiB: mem.heapTotal / 1024,
    codeSpaceKiB: code.space_used_size / 1024, externalKiB: mem.external / 1024, arrayBuffersKiB: mem.arrayBuffers / 1024,
    builtins: process.moduleLoadList.length };
}
const stages = [snap('start')];
const { open } = await import('./driver.js');
stages.push(snap('import'));
const layer = await open(process.env.STAGES_URL, readFileSync(process.env.STAGES_CA));
stages.push(snap('open'));
await layer.get();
stages.push(snap('first request'));
for (let i = 0; i < Number(process.env.STAGES_N); i++) await layer.get();
stages.push(snap('after N requests'));
layer.close();
process.stdout.write(JSON.stringify({ stages, loaded: process.moduleLoadList }) + '\\n');
`;

/** Bundles an arm as scripts/build.sh bundles the resizer; returns its main.js. */
function build(arm: string, index: number): string {
  const dir = join(buildDir, `arm-${index}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'driver.js'), driverSource(arm));
  writeFileSync(join(dir, 'entry.js'), ENTRY);
  const banner = "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";
  execFileSync(
    'npx',
    [
      '--no-install',
      'esbuild',
      join(dir, 'entry.js'),
      '--bundle',
      '--platform=node',
      '--format=esm',
      '--target=node24',
      `--outfile=${join(dir, 'bundle.js')}`,
      `--banner:js=${banner}`,
      '--log-level=warning',
      '--legal-comments=none',
    ],
    { cwd: repoRoot, stdio: 'inherit' },
  );
  execFileSync(process.execPath, [join(repoRoot, 'scripts', 'bundle-builtins.mjs'), join(dir, 'bundle.js')], { stdio: 'ignore' });
  const main = join(dir, 'main.js');
  writeFileSync(main, "process.getBuiltinModule('node:module').enableCompileCache?.();\nawait import('./bundle.js');\n");
  return main;
}

interface Stage {
  stage: string;
  [figure: string]: number | string;
}

const { cert, key } = selfSigned('IP:127.0.0.1');
const caPath = join(buildDir, 'ca.pem');
writeFileSync(caPath, cert);
const server = https.createServer({ cert, key, keepAliveTimeout: 120_000 }, (_req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
});
await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

function start(main: string, flags: readonly string[]): Promise<{ stages: Stage[]; loaded: string[] }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...NODE_FLAGS, ...flags, main], {
      env: { PATH: process.env['PATH'], STAGES_URL: url, STAGES_CA: caPath, STAGES_N: String(n) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) fail(new Error(`${main} exited ${code}`));
      else done(JSON.parse(out) as { stages: Stage[]; loaded: string[] });
    });
  });
}

// ARM#--flag#--flag: the arm started with extra node flags (e.g. undici#--liftoff-only).
const specs = arms.map((spec) => {
  const [arm, ...flags] = spec.split('#');
  return { arm: arm!, flags };
});
const mains = specs.map(({ arm }, i) => build(arm, i));
const bundleKiB = Object.fromEntries(specs.map((s, i) => [arms[i]!, Math.round(readFileSync(join(buildDir, `arm-${i}`, 'bundle.js')).length / 1024)]));
const runs: Array<{ arm: string; round: number; stages: Stage[] }> = [];
const loadedBy = new Map<string, string[]>();
try {
  for (const [i, main] of mains.entries()) await start(main, specs[i]!.flags); // fills the compile cache
  for (let round = 0; round < rounds; round++) {
    for (const [i, arm] of arms.entries()) {
      const r = await start(mains[i]!, specs[i]!.flags);
      runs.push({ arm, round, stages: r.stages });
      loadedBy.set(arm, r.loaded);
    }
  }
} finally {
  server.closeAllConnections();
  server.close();
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const figures = [
  'cpuMs',
  'wallMs',
  'rssKiB',
  'anonKiB',
  'fileKiB',
  'heapUsedKiB',
  'heapTotalKiB',
  'codeSpaceKiB',
  'externalKiB',
  'arrayBuffersKiB',
  'builtins',
];
const summary: Record<string, Record<string, Record<string, { median: number; min: number; max: number }>>> = {};
for (const arm of arms) {
  const mine = runs.filter((r) => r.arm === arm);
  summary[arm] = {};
  for (const stage of mine[0]!.stages.map((s) => s.stage)) {
    summary[arm]![stage] = {};
    for (const f of figures) {
      const xs = mine.map((r) => r.stages.find((s) => s.stage === stage)![f] as number);
      summary[arm]![stage]![f] = { median: Number(median(xs).toFixed(1)), min: Number(Math.min(...xs).toFixed(1)), max: Number(Math.max(...xs).toFixed(1)) };
    }
  }
  process.stdout.write(`${arm} (median of ${mine.length}; KiB; ms; bundle ${bundleKiB[arm]} KiB)\n`);
  for (const [stage, fs] of Object.entries(summary[arm]!)) {
    process.stdout.write(`  ${stage.padEnd(17)} ${figures.map((f) => `${f.replace(/KiB$/, '')} ${fs[f]!.median}`).join('  ')}\n`);
  }
}
const base = new Set(loadedBy.get(arms[0]!) ?? []);
for (const arm of arms.slice(1)) {
  const extra = (loadedBy.get(arm) ?? []).filter((m) => !base.has(m));
  process.stdout.write(`builtins loaded by ${arm} and not by ${arms[0]}: ${extra.map((m) => m.replace(/^NativeModule /, '')).join(', ')}\n`);
}
process.stdout.write(`loadavg at end ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`);
if (values.out)
  writeFileSync(values.out, JSON.stringify({ arms, rounds, n, bundleKiB, summary, runs, loadedBy: Object.fromEntries(loadedBy) }, null, 1) + '\n');
