// The program request-instructions.sh runs under callgrind: K API requests (half GETs, half
// merge-PATCHes of one ConfigMap, whose answer is the whole object as the resizer's PATCH answers
// are) from C workers through one source tree's request layer (src/kube/wire/http.ts with the REST
// client metrics the resizer records), against the cluster of the env file. The script bundles it
// once per tree, its imports of ../../src/ pointing at that tree's src/.
import { readFileSync } from 'node:fs';
import { KubeHttp } from '../../src/kube/wire/http.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { loadKubeConfig } from '../../src/kube/wire/kubeconfig.js';

const [envFile, kArg, cArg] = process.argv.slice(2);
const env = new Map(
  readFileSync(envFile!, 'utf8')
    .split('\n')
    .filter((line) => line.includes('='))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as [string, string]),
);
const kubeConfig = await loadKubeConfig({ kubeconfigPath: env.get('ADMIN_KUBECONFIG')!, masterUrl: '' });
const client = new KubeHttp({ kubeConfig, qps: 0, burst: 1, metrics: createMetrics().restClient });
const signal = new AbortController().signal;
const path = '/api/v1/namespaces/default/configmaps/request-count';
await client
  .request(
    { method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: { metadata: { name: 'request-count' }, data: {} }, contentType: 'application/json' },
    signal,
  )
  .catch(() => undefined);
const k = Number(kArg);
let next = 0;
const worker = async () => {
  while (next < k) {
    const i = next++;
    if (i % 2 === 1) await client.request({ method: 'PATCH', path, body: { data: { n: String(i) } }, contentType: 'application/merge-patch+json' }, signal);
    else await client.request({ method: 'GET', path }, signal);
  }
};
await Promise.all(Array.from({ length: Number(cArg) }, worker));
client.close();
