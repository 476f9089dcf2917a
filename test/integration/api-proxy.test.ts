// The resizer, `csi-resizer doctor` and the informers' watches reaching the real API server through
// a proxy, by a name only the proxy resolves (PROXY_ONLY_NAME, in the serving certificate): a
// loopback CONNECT proxy from HTTPS_PROXY, the same from a kubeconfig proxy-url (with credentials);
// a SOCKS5 proxy-url, which node:https cannot speak, refused at start-up. A resize that completes
// shows both halves: the watch saw the edit, the client wrote status.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig } from '../cluster/kube.js';
import { requestPvcSize } from '../cluster/fixtures.js';
import { PROXY_ONLY_NAME } from '../cluster/pki.js';
import { ConnectProxy } from '../fakes/connect-proxy.js';
import { eventually } from '../support/eventually.js';
import { faultScenario } from '../support/fault-scenario.js';
import { readPvc } from '../support/api-reads.js';
import { runCli } from './cli-harness.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);
const apiPort = new URL(cluster.apiUrl).port;
const hosts = { [PROXY_ONLY_NAME]: '127.0.0.1' };

const dir = mkdtempSync(join(tmpdir(), 'rz-proxy-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** The resizer's kubeconfig with the server named PROXY_ONLY_NAME (and a proxy-url when given). */
function proxiedKubeconfig(name: string, proxyUrl?: string): string {
  const config = JSON.parse(readFileSync(cluster.resizerKubeconfigPath, 'utf8')) as { clusters: Array<{ cluster: Record<string, unknown> }> };
  for (const entry of config.clusters) {
    entry.cluster['server'] = `https://${PROXY_ONLY_NAME}:${apiPort}`;
    if (proxyUrl !== undefined) entry.cluster['proxy-url'] = proxyUrl;
  }
  const path = join(dir, `${name}.kubeconfig`);
  writeFileSync(path, JSON.stringify(config));
  return path;
}

const clean = { HTTPS_PROXY: '', https_proxy: '', HTTP_PROXY: '', http_proxy: '', NO_PROXY: '', no_proxy: '' };

interface DoctorCheck {
  name: string;
  status: string;
  summary: string;
}

async function doctor(kubeconfig: string, env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  const out = await runCli(['doctor', `--kubeconfig=${kubeconfig}`, '--csi-address=unix:///nonexistent/csi.sock', '--output=json'], {
    env: { ...clean, ...env },
    timeoutMs: 60_000,
  });
  const report = JSON.parse(out.stdout) as { checks: DoctorCheck[] };
  const check = report.checks.find((c) => c.name === 'API server');
  assert.ok(check, out.stdout + out.stderr);
  return check;
}

/** A PVC resized by our resizer running with `kubeconfig` and `env`, to completion. */
async function resizeThrough(t: { after(fn: () => unknown): void }, kubeconfig: string, env: NodeJS.ProcessEnv): Promise<void> {
  const s = await faultScenario(t, { ...cluster, resizerKubeconfigPath: kubeconfig }, admin, { namespacePrefix: 'rz-proxy', resizerEnv: { ...clean, ...env } });
  await requestPvcSize(admin, s.namespace, s.pvcName, '2Gi', { retryUntilAdmittedMs: 10_000 });
  await eventually('the PVC resized through the proxy', async () => (await readPvc(admin, s.namespace, s.pvcName)).status?.capacity?.['storage'] === '2Gi');
  await s.resizer.stop();
}

test("HTTPS_PROXY: doctor, the resizer's client and its informers' watches reach the API server through the proxy", async (t) => {
  const proxy = await ConnectProxy.start({ hosts });
  t.after(() => proxy.close());
  const kubeconfig = proxiedKubeconfig('env');
  const check = await doctor(kubeconfig, { HTTPS_PROXY: proxy.url() });
  assert.equal(check.status, 'ok', check.summary);
  assert.match(check.summary, /through proxy http:\/\/127\.0\.0\.1:\d+\/\) reachable, version v/);
  const tunnelsForDoctor = proxy.tunnels;
  assert.ok(tunnelsForDoctor >= 1);
  await resizeThrough(t, kubeconfig, { HTTPS_PROXY: proxy.url() });
  assert.ok(proxy.tunnels >= tunnelsForDoctor + 2, `the resizer's requests and watches tunnelled (${proxy.tunnels} tunnels)`);
  assert.ok(proxy.requests.every((r) => r.method === 'CONNECT' && r.target === `${PROXY_ONLY_NAME}:${apiPort}`));
});

test("kubeconfig proxy-url (with proxy credentials): doctor and a resize, the environment's proxy not used", async (t) => {
  const credentials = { user: 'rz', password: 'proxy-pass' };
  const proxy = await ConnectProxy.start({ hosts, credentials });
  t.after(() => proxy.close());
  const kubeconfig = proxiedKubeconfig('proxy-url', proxy.url(credentials));
  const env = { HTTPS_PROXY: 'http://127.0.0.1:1', NO_PROXY: PROXY_ONLY_NAME };
  const check = await doctor(kubeconfig, env);
  assert.equal(check.status, 'ok', check.summary);
  assert.ok(!check.summary.includes(credentials.password), 'the proxy password is masked');
  await resizeThrough(t, kubeconfig, env);
  assert.ok(proxy.tunnels >= 3);
});

test('a socks5 proxy-url: doctor and the resizer refuse it at start-up, naming the alternatives', async () => {
  const kubeconfig = proxiedKubeconfig('socks5', 'socks5://rz:proxy-pass@127.0.0.1:1080');
  const refusal =
    /cluster "[^"]+": proxy-url socks5:\/\/rz:xxxxx@127\.0\.0\.1:1080 is a SOCKS5 proxy, which csi-resizer cannot use \(its HTTP client, node:https, has no SOCKS5\); use an http:\/\/ or https:\/\/ proxy \(HTTP CONNECT\) instead/;
  const check = await doctor(kubeconfig, {});
  assert.equal(check.status, 'fail');
  assert.match(check.summary, refusal);
  const run = await runCli([`--kubeconfig=${kubeconfig}`, `--csi-address=${cluster.csiAddress}`], { env: clean, timeoutMs: 60_000 });
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /"Failed to create cluster config" err=/);
  assert.match(run.stderr.replaceAll('\\"', '"'), refusal);
  assert.ok(!`${check.summary}${run.stderr}`.includes('proxy-pass'), 'the proxy password is masked');
});
