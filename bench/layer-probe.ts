// Evaluation probe (not part of `npm run bench`): the client CPU of K API requests
// through our request layer (src/kube/http.ts) as it is in the working tree versus as it was at a
// given commit, alternating A B per round in one process. Run inside a test cluster:
//   node --import tsx test/cluster/run-with-cluster.ts -- node --import tsx bench/layer-probe.ts COMMIT [K] [concurrency] [rounds]
// It GETs and merge-PATCHes one ConfigMap (K/2 each) with the admin kubeconfig, no client-side
// rate limit. The older http.ts (and, where the commit has them, the modules under it: connections.ts
// and proxy.ts, or the HTTP/1.1 client of its own, http1-transport.ts and http1-parser.ts) is
// written to bench/.build/ with its other imports pointing at today's src/ (so only the request
// layer differs).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseEnvFile, repoRoot } from '../test/cluster/components.js';
import { CLUSTER_ENV_VAR } from '../test/cluster/test-cluster.js';
import { loadKubeConfig } from '../src/kube/kubeconfig.js';
import { ContentType } from '../src/kube/content-type.js';
import { KubeHttp } from '../src/kube/http.js';
import { getPatchLoop, type LoopRun } from './lib/request-loop.js';

const [commit, ...rest] = process.argv.slice(2);
if (!commit || !/^[0-9a-f]{4,40}$/.test(commit)) throw new Error('usage: layer-probe.ts COMMIT [K] [concurrency] [rounds]');
const [k = 2000, concurrency = 10, rounds = 3] = rest.map(Number);

const srcUrl = pathToFileURL(join(repoRoot, 'src')).href;
const buildDir = join(repoRoot, 'bench', '.build');
mkdirSync(buildDir, { recursive: true });
/** The commit's version of src/kube/<file>.ts in bench/.build, importing today's src/ except for `own` (the commit's too). */
function oldModule(file: string, own: readonly string[]): string | undefined {
  let source: string;
  try {
    source = execFileSync('git', ['-C', repoRoot, 'show', `${commit}:src/kube/${file}.ts`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined; // the commit has no such file
  }
  let rewritten = source.replace(/from '\.\.\/base\//g, `from '${srcUrl}/base/`);
  for (const name of own) rewritten = rewritten.replaceAll(`from './${name}.js'`, `from './${name}-${commit}.ts'`);
  rewritten = rewritten.replace(/from '\.\/(?![\w-]+-[0-9a-f]{4,40}\.ts')/g, `from '${srcUrl}/kube/`);
  const path = join(buildDir, `${file}-${commit}.ts`);
  writeFileSync(path, rewritten);
  return path;
}
// The layer is http.ts and what was under it at that commit: connections.ts (the undici or
// node:https agents), or the own client's transport and parser.
const ownParser = oldModule('http1-parser', []) !== undefined;
const ownTransport = oldModule('http1-transport', ownParser ? ['http1-parser'] : []) !== undefined;
const ownConnections = oldModule('connections', ['proxy']) !== undefined && oldModule('proxy', []) !== undefined;
const oldPath = oldModule('http', [...(ownTransport ? ['http1-transport'] : []), ...(ownConnections ? ['connections', 'proxy'] : [])])!;
const { KubeHttp: OldKubeHttp } = (await import(pathToFileURL(oldPath).href)) as { KubeHttp: typeof KubeHttp };

const env = parseEnvFile(readFileSync(process.env[CLUSTER_ENV_VAR]!, 'utf8'));
const kubeConfig = await loadKubeConfig({ kubeconfigPath: env.get('ADMIN_KUBECONFIG')!, masterUrl: '' });
const path = '/api/v1/namespaces/default/configmaps/layer-probe';
const signal = new AbortController().signal;
const make = (Impl: typeof KubeHttp) => new Impl({ kubeConfig, qps: 0, burst: 1 });

// The ConfigMap both read and patch (an existing one from an earlier run is fine).
const setup = make(KubeHttp);
await setup
  .request(
    {
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      body: { metadata: { name: 'layer-probe' }, data: {} },
      contentType: ContentType.Json,
    },
    signal,
  )
  .catch(() => undefined);
setup.close();

type Run = LoopRun;

async function run(Impl: typeof KubeHttp): Promise<Run> {
  const client = make(Impl);
  await client.request({ method: 'GET', path }, signal); // connection set-up outside the measurement
  const result = await getPatchLoop(k, concurrency, async (i, patch) => {
    if (patch) await client.request({ method: 'PATCH', path, body: { data: { n: String(i) } }, contentType: ContentType.MergePatch }, signal);
    else await client.request({ method: 'GET', path }, signal);
  });
  client.close();
  return result;
}

const results: Record<string, Run[]> = { [commit]: [], 'working tree': [] };
for (let r = 0; r < rounds; r++) {
  results[commit]!.push(await run(OldKubeHttp));
  results['working tree']!.push(await run(KubeHttp));
}
for (const [name, runs] of Object.entries(results)) {
  const sorted = runs.map((x) => x.cpuMs).sort((a, b) => a - b);
  const median = sorted[sorted.length >> 1]!;
  process.stdout.write(
    `${name}: ${k} requests x ${rounds} rounds, concurrency ${concurrency}: CPU ms ${runs.map((x) => `${x.cpuMs.toFixed(0)} (sys ${x.sysMs.toFixed(0)})`).join(', ')}; ` +
      `median ${((median / k) * 1000).toFixed(0)} us/request; wall ms ${runs.map((x) => x.wallMs.toFixed(0)).join(' ')}\n`,
  );
}
process.stdout.write(`loadavg at end ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`);
