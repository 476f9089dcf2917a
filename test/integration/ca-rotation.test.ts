// A rotated service-account CA is picked up without a restart. The real command runs in cluster
// (KUBERNETES_SERVICE_HOST/PORT, the token and ca.crt under /var/run/secrets/kubernetes.io/
// serviceaccount, bind-mounted from a temp dir in a mount namespace of its own: needs root). The
// API server it reaches is re-certified: a TLS front on loopback, certified by CA 1, that passes
// each connection on to the real API server, is certified by CA 2 from one moment on and drops
// every open connection, as an API server restarting with its new certificate does, while ca.crt
// is replaced (in one rename, as kubelet swaps a projected volume) by CA 2. A resize asked after
// the rotation finishes through the new connections (docs/architecture.md, "The API server's connections").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import yaml from 'js-yaml';
import { useCluster } from '../cluster/test-cluster.js';
import { clientsFromKubeconfig } from '../cluster/kube.js';
import { createNamespace, createStorageClass, deletePvc, provisionVolume, requestPvcSize, uniqueName } from '../cluster/fixtures.js';
import { FaultDriver } from '../fakes/fault-driver.js';
import { readPvc } from '../support/api-reads.js';
import { eventually } from '../support/eventually.js';
import { GiB } from '../support/fault-scenario.js';
import { selfSigned } from '../support/self-signed.js';
import { CliProcess } from './cli-harness.js';

const cluster = await useCluster();
const admin = clientsFromKubeconfig(cluster.adminKubeconfigPath);

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * Runs a command with `dir` mounted at the service account's path, in a private mount namespace:
 * a tmpfs over /run (so no directory is made on the host), the dir bound inside it.
 */
function inClusterMounts(dir: string): string[] {
  const script = `mount -t tmpfs tmpfs /run && mkdir -p ${SERVICE_ACCOUNT_DIR} && mount --bind "$0" ${SERVICE_ACCOUNT_DIR} && exec "$@"`;
  return ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', script, dir];
}

/** A TLS front for the API server whose certificate can change, dropping every open connection. */
async function recertifiableFront(t: { after(fn: () => unknown): void }, certified: { cert: Buffer; key: Buffer }) {
  const api = new URL(cluster.apiUrl);
  const apiCa = readFileSync(cluster.caPath);
  const open = new Set<Socket>();
  let handshakes = 0;
  const server = tls.createServer({ cert: certified.cert, key: certified.key }, (client) => {
    handshakes++;
    const upstream = tls.connect({ host: api.hostname, port: Number(api.port), ca: apiCa });
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      open.add(socket);
      socket.on('error', () => other.destroy());
      socket.on('close', () => {
        open.delete(socket);
        other.destroy();
      });
      socket.pipe(other);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const s of open) s.destroy();
    server.close();
  });
  return {
    port: (server.address() as AddressInfo).port,
    handshakes: () => handshakes,
    recertify(next: { cert: Buffer; key: Buffer }) {
      server.setSecureContext({ cert: next.cert, key: next.key });
      for (const s of open) s.destroy();
    },
  };
}

test(
  'in cluster: a service-account CA replaced for a re-certified API server is taken without a restart',
  { skip: process.getuid?.() === 0 ? false : 'needs root for the mount namespace' },
  async (t) => {
    const ca1 = selfSigned();
    const ca2 = selfSigned();
    const front = await recertifiableFront(t, ca1);

    const serviceAccount = mkdtempSync(join(tmpdir(), 'rz-sa-'));
    t.after(() => rmSync(serviceAccount, { recursive: true, force: true }));
    const resizerKubeconfig = yaml.load(readFileSync(cluster.resizerKubeconfigPath, 'utf8')) as { users: { user: { token: string } }[] };
    writeFileSync(join(serviceAccount, 'token'), resizerKubeconfig.users[0]!.user.token);
    writeFileSync(join(serviceAccount, 'namespace'), 'default');
    writeFileSync(join(serviceAccount, 'ca.crt'), ca1.cert);

    const driver = await FaultDriver.start({ name: uniqueName('ca-rotation.csi') });
    t.after(() => driver.stop());
    const namespace = await createNamespace(admin, 'rz-ca-rotation');
    const storageClassName = uniqueName('rz-sc');
    await createStorageClass(admin, { name: storageClassName, allowVolumeExpansion: true, provisioner: driver.name });
    const id = uniqueName('vol');
    driver.createVolume(id, GiB);
    const volume = await provisionVolume(admin, driver.address, { namespace, size: '1Gi', storageClassName, driverName: driver.name, existingVolumeId: id });
    const claim = volume.pvc.metadata!.name!;
    t.after(() => deletePvc(admin, namespace, claim));

    const resizer = new CliProcess([`--csi-address=${driver.address}`, '--v=2', '--retry-interval-start=200ms', '--retry-interval-max=2s'], {
      wrapper: inClusterMounts(serviceAccount),
      env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(front.port), KUBECONFIG: '' },
    });
    t.after(() => resizer.destroy());
    const grownTo = (size: string) =>
      eventually(
        `the claim grown to ${size}`,
        async () => {
          if (resizer.hasExited) throw new Error(`the resizer exited:\n${resizer.tail()}`);
          return (await readPvc(admin, namespace, claim)).status?.capacity?.['storage'] === size;
        },
        60_000,
        200,
      );

    await requestPvcSize(admin, namespace, claim, '2Gi', { retryUntilAdmittedMs: 10_000 });
    await grownTo('2Gi');

    // The rotation: the front is re-certified by CA 2 and drops every connection; ca.crt says CA 2.
    writeFileSync(join(serviceAccount, 'ca.crt.new'), ca2.cert);
    renameSync(join(serviceAccount, 'ca.crt.new'), join(serviceAccount, 'ca.crt'));
    const handshakesBefore = front.handshakes();
    front.recertify(ca2);

    await requestPvcSize(admin, namespace, claim, '3Gi');
    await grownTo('3Gi');
    assert.equal(resizer.hasExited, false, 'the same process, never restarted');
    assert.ok(front.handshakes() > handshakesBefore, 'new connections, verified with CA 2, carried the second resize');
    assert.deepEqual(
      driver.callsOf('ControllerExpandVolume').map((c) => (c.request['capacity_range'] as { required_bytes?: string }).required_bytes),
      [String(2n * GiB), String(3n * GiB)],
    );
  },
);
