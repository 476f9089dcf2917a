import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inCluster, KubeConfigError, loadKubeConfig } from './kubeconfig.js';
import { resolveCredentials } from './credentials.js';
import { selfSigned } from '../../../test/support/self-signed.js';

function tempDir(t: { after(fn: () => unknown): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kc-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const never = new AbortController().signal;
const b64 = (s: string) => Buffer.from(s).toString('base64');

test('YAML kubeconfig: current context, inline CA and client certificate, TLS server name', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'config');
  fs.writeFileSync(
    file,
    `
apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: other
  cluster: {server: https://other:6443}
- name: main
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: ${b64('CA-PEM')}
    tls-server-name: kubernetes.default
users:
- name: admin
  user:
    client-certificate-data: ${b64('CERT-PEM')}
    client-key: key.pem
contexts:
- name: prod
  context: {cluster: main, user: admin}
`,
  );
  fs.writeFileSync(path.join(dir, 'key.pem'), 'KEY-PEM');
  const config = await loadKubeConfig({ kubeconfigPath: file });
  assert.equal(config.server, 'https://10.0.0.1:6443');
  assert.deepEqual(config.auth, { kind: 'none' });
  const creds = await resolveCredentials(config, never);
  assert.deepEqual(creds.headers, {});
  assert.equal(creds.tls.ca?.toString(), 'CA-PEM');
  assert.equal(creds.tls.cert?.toString(), 'CERT-PEM');
  assert.equal(creds.tls.key?.toString(), 'KEY-PEM', 'a relative key path resolves next to the kubeconfig');
  assert.equal(creds.tls.servername, 'kubernetes.default');
  assert.equal(creds.tls.rejectUnauthorized, true);
});

test('JSON kubeconfig with a static token and basic auth', async (t) => {
  const dir = tempDir(t);
  const write = (user: object) => {
    const file = path.join(dir, `c-${Math.random()}`);
    fs.writeFileSync(
      file,
      JSON.stringify({
        'current-context': 'c',
        clusters: [{ name: 'k', cluster: { server: 'https://h:1', 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'u', user }],
        contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
      }),
    );
    return loadKubeConfig({ kubeconfigPath: file });
  };
  const token = await resolveCredentials(await write({ token: 'abc' }), never);
  assert.equal(token.headers['Authorization'], 'Bearer abc');
  assert.equal(token.tls.rejectUnauthorized, false);
  const basic = await resolveCredentials(await write({ username: 'me', password: 'pw' }), never);
  assert.equal(basic.headers['Authorization'], `Basic ${b64('me:pw')}`);
});

test('a file that opens with { but is a YAML flow mapping, not JSON, is read as YAML', async (t) => {
  const file = path.join(tempDir(t), 'flow');
  fs.writeFileSync(
    file,
    `{current-context: c, clusters: [{name: k, cluster: {server: "https://h:2"}}],
  contexts: [{name: c, context: {cluster: k, user: u}}], users: [{name: u, user: {token: flow}}]}  # a comment
`,
  );
  const creds = await resolveCredentials(await loadKubeConfig({ kubeconfigPath: file }), never);
  assert.equal(creds.headers['Authorization'], 'Bearer flow');
});

test('JSON read as JSON: a repeated key takes its last value (YAML would refuse the file)', async (t) => {
  const file = path.join(tempDir(t), 'dup.json');
  fs.writeFileSync(
    file,
    `{"current-context": "old", "current-context": "c",
    "clusters": [{"name": "k", "cluster": {"server": "https://h:3"}}],
    "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
    "users": [{"name": "u", "user": {"token": "json"}}]}`,
  );
  const creds = await resolveCredentials(await loadKubeConfig({ kubeconfigPath: file }), never);
  assert.equal(creds.headers['Authorization'], 'Bearer json');
});

test("a malformed file that opens with { is reported with YAML's message and the path", async (t) => {
  const file = path.join(tempDir(t), 'broken');
  fs.writeFileSync(file, '{"current-context": "c", "clusters": [');
  await assert.rejects(
    loadKubeConfig({ kubeconfigPath: file }),
    (err: Error) => err.message.startsWith(`${file}: `) && /unexpected end|flow collection/i.test(err.message),
  );
});

test('exec credential plugin: runs with KUBERNETES_EXEC_INFO, token and expiry taken from its answer', async (t) => {
  const dir = tempDir(t);
  const plugin = path.join(dir, 'plugin.sh');
  fs.writeFileSync(
    plugin,
    `#!/bin/sh
case "$KUBERNETES_EXEC_INFO" in *ExecCredential*) ;; *) exit 3 ;; esac
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-'"$1"'-'"$EXTRA"'","expirationTimestamp":"2099-01-01T00:00:00Z"}}'
`,
    { mode: 0o755 },
  );
  const file = path.join(dir, 'config');
  fs.writeFileSync(
    file,
    `
current-context: c
clusters: [{name: k, cluster: {server: "https://h:1"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./plugin.sh
      args: [plugin]
      env: [{name: EXTRA, value: x}]
`,
  );
  const creds = await resolveCredentials(await loadKubeConfig({ kubeconfigPath: file }), never);
  assert.equal(creds.headers['Authorization'], 'Bearer from-plugin-x');
  assert.equal(creds.expiresAtMs, Date.parse('2099-01-01T00:00:00Z'));
});

test('exec credential plugin: malformed args and env entries are refused with a clear error, not a TypeError', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'config');
  const cases: Array<[exec: string, message: RegExp]> = [
    ['{command: p, env: [null]}', /exec credential plugin env\[0\] must be a mapping with a name and a value, not null$/],
    ['{command: p, env: [{name: A, value: a}, 7]}', /env\[1\] must be a mapping with a name and a value, not number 7$/],
    ['{command: p, env: [[A, a]]}', /env\[0\] must be a mapping with a name and a value, not a list$/],
    ['{command: p, env: [{value: a}]}', /env\[0\] needs a non-empty string name$/],
    ['{command: p, env: [{name: A, value: {x: 1}}]}', /env\[0\] \(A\) needs a string value, not a mapping$/],
    ['{command: p, env: {A: a}}', /exec credential plugin env must be a list of \{name, value\} entries$/],
    ['{command: p, args: [null]}', /exec credential plugin args\[0\] must be a string, not null$/],
    ['{command: p, args: x}', /exec credential plugin args must be a list of strings$/],
  ];
  for (const [exec, message] of cases) {
    fs.writeFileSync(
      file,
      `
current-context: c
clusters: [{name: k, cluster: {server: "https://h:1"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {exec: ${exec}}}]
`,
    );
    await assert.rejects(
      () => loadKubeConfig({ kubeconfigPath: file }),
      (err: unknown) => {
        assert.ok(err instanceof KubeConfigError, `${exec}: ${String(err)}`);
        assert.match(err.message, message, exec);
        return true;
      },
    );
  }
  // An absent value is empty, as in client-go.
  fs.writeFileSync(
    file,
    `
current-context: c
clusters: [{name: k, cluster: {server: "https://h:1"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {exec: {command: p, env: [{name: A}]}}}]
`,
  );
  const config = await loadKubeConfig({ kubeconfigPath: file });
  assert.deepEqual(config.auth.kind === 'exec' ? config.auth.plugin.env : undefined, { A: '' });
});

test('refused clearly: legacy auth-provider, missing context, not in a cluster', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'config');
  fs.writeFileSync(
    file,
    `
current-context: c
clusters: [{name: k, cluster: {server: "https://h:1"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {auth-provider: {name: gcp}}}]
`,
  );
  await assert.rejects(() => loadKubeConfig({ kubeconfigPath: file }), /auth-provider "gcp" is not supported/);
  fs.writeFileSync(file, 'current-context: nope\ncontexts: []\n');
  await assert.rejects(() => loadKubeConfig({ kubeconfigPath: file }), /context "nope" not found/);
  assert.throws(() => inCluster({}), KubeConfigError);
});

test('in cluster: service host and port (IPv6 bracketed), the service account CA and rotating token file', async (t) => {
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, 'token'), 'sa-token-1');
  const saCa = selfSigned().cert;
  fs.writeFileSync(path.join(dir, 'ca.crt'), saCa);
  const config = inCluster({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, dir);
  assert.equal(config.server, 'https://[fd00::1]:443');
  assert.equal((await resolveCredentials(config, never)).headers['Authorization'], 'Bearer sa-token-1');
  fs.writeFileSync(path.join(dir, 'token'), 'sa-token-2');
  const again = await resolveCredentials(config, never);
  assert.equal(again.headers['Authorization'], 'Bearer sa-token-2');
  assert.deepEqual(again.tls.ca, saCa);
});

test('a cluster proxy-url is kept, kept with --master, and a scheme client-go refuses (or a socks5 one, which we cannot speak) stops the load', async (t) => {
  const dir = tempDir(t);
  const write = (proxyUrl: string) => {
    const file = path.join(dir, `c-${Math.random()}`);
    fs.writeFileSync(
      file,
      JSON.stringify({
        'current-context': 'c',
        contexts: [{ name: 'c', context: { cluster: 'k' } }],
        clusters: [{ name: 'k', cluster: { server: 'https://kube.example:6443', 'proxy-url': proxyUrl } }],
      }),
    );
    return file;
  };
  assert.equal((await loadKubeConfig({ kubeconfigPath: write('http://user:pw@proxy.example:3128') })).proxyUrl, 'http://user:pw@proxy.example:3128');
  const overridden = await loadKubeConfig({ kubeconfigPath: write('https://proxy.example:3128'), masterUrl: 'https://other:6443' });
  assert.deepEqual([overridden.server, overridden.proxyUrl], ['https://other:6443', 'https://proxy.example:3128']);
  await assert.rejects(
    loadKubeConfig({ kubeconfigPath: write('socks5://127.0.0.1:1080') }),
    (err) =>
      err instanceof KubeConfigError && /cluster "k": proxy-url socks5:\/\/127\.0\.0\.1:1080 is a SOCKS5 proxy, which csi-resizer cannot use/.test(err.message),
  );
  await assert.rejects(
    loadKubeConfig({ kubeconfigPath: write('socks4://127.0.0.1:1080') }),
    (err) => err instanceof KubeConfigError && /cluster "k": proxy-url has unsupported scheme "socks4", must be http, https, or socks5/.test(err.message),
  );
});
