// Certificates and keys for one local control plane: a small CA (openssl CLI) that signs the
// apiserver's serving certificate (SANs IP:127.0.0.1, localhost, and PROXY_ONLY_NAME for the proxy
// tests), the service-account signing key pair, and the static bearer tokens of the two test identities.
import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface Pki {
  readonly caPath: string;
  readonly servingCertPath: string;
  readonly servingKeyPath: string;
  readonly saKeyPath: string;
  readonly saPubPath: string;
  readonly tokenFilePath: string;
  readonly adminToken: string;
  readonly resizerToken: string;
}

/** The user the resizer's kubeconfig authenticates as; deploy/kubernetes/rbac.yaml is bound to it in tests. */
export const RESIZER_USER = 'csi-resizer';
export const ADMIN_USER = 'admin';
/**
 * A name for the API server that nothing resolves but the proxy tests' own proxies (the .test TLD is
 * reserved): a client reaches the server by it only through a proxy.
 */
export const PROXY_ONLY_NAME = 'kube-api.proxy-only.test';

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await execFileAsync('openssl', args, { cwd });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`openssl ${args[0]} failed: ${stderr.trim()}`, { cause: err });
  }
}

export async function makePki(dir: string): Promise<Pki> {
  const pki = join(dir, 'pki');
  mkdirSync(pki, { recursive: true, mode: 0o700 });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(
    [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '3650',
      '-subj',
      '/CN=csi-resizer-test-ca',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    pki,
  );
  await openssl(['req', '-new', ...ec, '-keyout', 'apiserver.key', '-out', 'apiserver.csr', '-subj', '/CN=kube-apiserver'], pki);
  writeFileSync(
    join(pki, 'apiserver.ext'),
    [
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      `subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:${PROXY_ONLY_NAME}`,
      '',
    ].join('\n'),
  );
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      'apiserver.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'apiserver.crt',
      '-days',
      '3650',
      '-extfile',
      'apiserver.ext',
    ],
    pki,
  );

  // Service-account tokens: the apiserver needs a signing key and its public half even though
  // the tests authenticate with static tokens.
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  writeFileSync(join(pki, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  writeFileSync(join(pki, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));

  const adminToken = randomBytes(16).toString('hex');
  const resizerToken = randomBytes(16).toString('hex');
  const tokenFilePath = join(pki, 'tokens.csv');
  // token,user,uid,"groups"
  writeFileSync(tokenFilePath, `${adminToken},${ADMIN_USER},uid-admin,"system:masters"\n${resizerToken},${RESIZER_USER},uid-csi-resizer\n`, { mode: 0o600 });

  return {
    caPath: join(pki, 'ca.crt'),
    servingCertPath: join(pki, 'apiserver.crt'),
    servingKeyPath: join(pki, 'apiserver.key'),
    saKeyPath: join(pki, 'sa.key'),
    saPubPath: join(pki, 'sa.pub'),
    tokenFilePath,
    adminToken,
    resizerToken,
  };
}

export function kubeconfig(opts: { apiUrl: string; caPath: string; user: string; token: string }): string {
  // JSON is valid YAML, and needs no quoting rules.
  return (
    JSON.stringify(
      {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'csi-resizer-test', cluster: { server: opts.apiUrl, 'certificate-authority': opts.caPath } }],
        users: [{ name: opts.user, user: { token: opts.token } }],
        contexts: [{ name: 'csi-resizer-test', context: { cluster: 'csi-resizer-test', user: opts.user, namespace: 'default' } }],
        'current-context': 'csi-resizer-test',
      },
      null,
      2,
    ) + '\n'
  );
}
