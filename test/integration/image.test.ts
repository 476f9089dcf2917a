// The container image operators deploy, built by `npm run image` (scripts/image.sh) and run for
// real: its OCI layout is well formed, it holds no shell or package manager, the amd64 image runs
// under podman against the local control plane with a CSI driver socket mounted in (grows a PVC,
// serves /metrics, stops on SIGTERM with exit 0 and a released Lease), each architecture's node
// reads the compile cache shipped in the image, a second build gives the same digests, and the
// arm64 image starts under qemu-user. See image-harness.ts for how podman
// runs here.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, lstatSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../cluster/cluster.js';
import { repoRoot } from '../cluster/components.js';
import { createNamespace, createStorageClass, provisionVolume, requestPvcSize } from '../cluster/fixtures.js';
import { startMockDriver } from '../cluster/mock-driver.js';
import { adminClients, useCluster } from '../cluster/test-cluster.js';
import { buildImage, Container, pullImage, removeImage, unpack, verifyBlobs, type OciImage } from './image-harness.js';
import { eventually } from '../support/eventually.js';
import { NODE_FLAGS } from '../../scripts/node-flags.js';

const pins = readFileSync(join(repoRoot, 'scripts', 'node-runtime.pins'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '' && !l.startsWith('#'));
const shippedNode = pins[0]!.trim().split(/\s+/)[1]!;
const appVersion = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;

const until = <T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000) => eventually(what, fn, timeoutMs, 200);

/** Every path under root (relative), with lstat. */
function walk(root: string, rel = ''): Array<{ path: string; uid: number; size: number; isFile: boolean }> {
  const out: Array<{ path: string; uid: number; size: number; isFile: boolean }> = [];
  for (const name of readdirSync(join(root, rel))) {
    const path = rel === '' ? name : `${rel}/${name}`;
    const st = lstatSync(join(root, path));
    out.push({ path, uid: st.uid, size: st.size, isFile: st.isFile() });
    if (st.isDirectory()) out.push(...walk(root, path));
  }
  return out;
}

describe('the container image (npm run image)', { timeout: 1_500_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'rz-image-'));
  after(() => rmSync(work, { recursive: true, force: true }));
  let image: OciImage;

  before(
    async () => {
      const started = Date.now();
      image = (await buildImage(join(work, 'oci'), ['amd64', 'arm64'])).image;
      process.stderr.write(`# image built (amd64, arm64) in ${Date.now() - started} ms\n`);
    },
    { timeout: 900_000 },
  );

  test("OCI layout: an index over amd64 and arm64, blobs match their digests, node as root by default, as upstream's image", (t) => {
    assert.equal(image.tag, appVersion);
    assert.deepEqual(
      image.manifests.map((m) => m.platform),
      [
        { architecture: 'amd64', os: 'linux' },
        { architecture: 'arm64', os: 'linux', variant: 'v8' },
      ],
    );
    assert.ok(verifyBlobs(image.dir) >= 7, 'index, 2 manifests, 2 configs, 2 base layers and the shared app layer');
    for (const arch of ['amd64', 'arm64']) {
      const config = image.config(arch);
      assert.equal(config.architecture, arch);
      assert.equal(config.config.User, '0:0');
      assert.deepEqual(config.config.Entrypoint, ['/usr/local/bin/node', ...NODE_FLAGS, '/app/dist/main.js']);
      assert.deepEqual(config.config.Env, ['PATH=/usr/local/bin', 'NODE_ENV=production']);
      assert.equal(config.config.Labels['io.github.csi-resizer.node-version'], shippedNode);
      assert.equal(config.rootfs.diff_ids.length, 2);
    }
    assert.equal(image.config('amd64').rootfs.diff_ids[1], image.config('arm64').rootfs.diff_ids[1], 'one app layer for both');
    t.diagnostic(`compressed: amd64 ${(image.compressedBytes('amd64') / 1e6).toFixed(1)} MB, arm64 ${(image.compressedBytes('arm64') / 1e6).toFixed(1)} MB`);
  });

  test('root filesystem: node, its libraries, CA bundle, a non-root user; no shell, no package manager', async (t) => {
    const bundle = join(work, 'bundle-inspect');
    await unpack(image, 'amd64', bundle);
    const rootfs = join(bundle, 'rootfs');
    const entries = walk(rootfs);
    const names = new Set(entries.map((e) => e.path.split('/').pop()));
    for (const forbidden of ['sh', 'bash', 'dash', 'busybox', 'npm', 'npx', 'corepack', 'apt', 'apt-get', 'dpkg']) {
      assert.ok(!names.has(forbidden), `no ${forbidden} in the image`);
    }
    assert.deepEqual(
      entries.filter((e) => e.uid !== 0).map((e) => e.path),
      [],
      'everything is owned by root, read-only to the user',
    );
    for (const path of [
      'usr/local/bin/node',
      'lib64/ld-linux-x86-64.so.2',
      'lib/x86_64-linux-gnu/libstdc++.so.6',
      'app/dist/main.js',
      'app/package.json',
      'app/licenses/prom-client/LICENSE',
      'app/licenses/js-yaml/LICENSE',
      'app/dist/resizer.js.LEGAL.txt',
    ]) {
      assert.ok(
        entries.some((e) => e.path === path),
        `${path} is in the image`,
      );
    }
    // The bundle holds the production dependencies: no module tree ships beside it.
    assert.deepEqual(
      entries.filter((e) => e.path.split('/').includes('node_modules')).map((e) => e.path),
      [],
      'no node_modules',
    );
    assert.match(readFileSync(join(rootfs, 'etc', 'passwd'), 'utf8'), /^csi-resizer:x:1000:1000:/m);
    assert.match(readFileSync(join(rootfs, 'etc', 'ssl', 'certs', 'ca-certificates.crt'), 'utf8'), /BEGIN CERTIFICATE/);
    const bytes = entries.filter((e) => e.isFile).reduce((n, e) => n + e.size, 0);
    t.diagnostic(`unpacked amd64 root filesystem: ${(bytes / 1e6).toFixed(1)} MB in ${entries.length} entries`);
  });

  test('amd64 under podman against the control plane: grows a PVC, /metrics, SIGTERM exits 0 and releases the Lease', { timeout: 600_000 }, async (t) => {
    const cluster = await useCluster();
    const admin = adminClients(cluster);

    // A driver of its own, its socket as a Go driver running as root leaves it (mode 0755): the
    // image's default user must open it, as upstream's does.
    const driverDir = mkdtempSync('/tmp/rz-img-');
    t.after(() => rmSync(driverDir, { recursive: true, force: true }));
    const driverName = `image-${process.pid}.csi.k8s.io`;
    const driver = await startMockDriver({ dir: driverDir, name: driverName });
    t.after(() => driver.stop());
    chmodSync(driverDir, 0o755);
    chmodSync(driver.socketPath, 0o755);

    // The resizer's kubeconfig (the manifest's RBAC only), readable by uid 1000, CA path inside.
    const kubeDir = mkdtempSync(join(tmpdir(), 'rz-img-kube-'));
    t.after(() => rmSync(kubeDir, { recursive: true, force: true }));
    const kubeconfig = JSON.parse(readFileSync(cluster.resizerKubeconfigPath, 'utf8')) as { clusters: Array<{ cluster: Record<string, string> }> };
    kubeconfig.clusters[0]!.cluster['certificate-authority'] = '/etc/csi-resizer/ca.crt';
    writeFileSync(join(kubeDir, 'kubeconfig'), JSON.stringify(kubeconfig), { mode: 0o644 });
    copyFileSync(cluster.caPath, join(kubeDir, 'ca.crt'));
    chmodSync(join(kubeDir, 'ca.crt'), 0o644);
    chmodSync(kubeDir, 0o755);

    const imageId = await pullImage(image, 'amd64');
    t.after(() => removeImage(imageId));
    const binds = [
      { host: driverDir, container: '/csi' },
      { host: kubeDir, container: '/etc/csi-resizer' },
    ];

    // --version: the image's entry point, start to exit.
    const version = new Container(imageId, { args: ['--version'], binds });
    t.after(() => version.destroy());
    assert.deepEqual(await version.exited, { code: 0, signal: null }, version.tail());
    const versionMs = performance.now() - version.startedAt;
    assert.match(version.stdout, new RegExp(`^csi-resizer ${appVersion.replaceAll('.', '\\.')}\\b`));

    const namespace = await createNamespace(admin);
    const sc = await createStorageClass(admin, { provisioner: driverName, allowVolumeExpansion: true });
    const volume = await provisionVolume(admin, driver.address, {
      namespace,
      size: '1Gi',
      storageClassName: sc.metadata!.name!,
      driverName,
      csiProtoPath: cluster.csiProtoPath,
    });

    const port = await freePort();
    const identity = `csi-resizer-image-${process.pid}`;
    const resizer = new Container(imageId, {
      hostname: identity,
      binds,
      args: [
        '--kubeconfig=/etc/csi-resizer/kubeconfig',
        '--csi-address=/csi/csi.sock',
        '--v=2',
        '--leader-election',
        '--leader-election-namespace=default',
        `--http-endpoint=127.0.0.1:${port}`,
      ],
    });
    t.after(() => resizer.destroy());
    const leaderMs = await resizer.waitForLog(/became leader, starting/i, 120_000);
    const readyMs = await resizer.waitForLog(/"Starting external resizer"/, 120_000);

    const leaseName = `external-resizer-${driverName.replace(/[^a-zA-Z0-9-]/g, '-')}`;
    const lease = () => admin.coordination.readNamespacedLease({ namespace: 'default', name: leaseName });
    assert.equal((await lease()).spec?.holderIdentity, identity, 'the Lease names the container (its hostname)');

    const name = volume.pvc.metadata!.name!;
    await requestPvcSize(admin, namespace, name, '2Gi', { retryUntilAdmittedMs: 10_000 });
    await until('the PVC to reach 2Gi', async () => {
      const pvc = await admin.core.readNamespacedPersistentVolumeClaim({ namespace, name });
      return pvc.status?.capacity?.['storage'] === '2Gi' ? pvc : undefined;
    });

    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(
      metrics,
      new RegExp(
        `^csi_sidecar_operations_seconds_count\\{driver_name="${driverName.replaceAll('.', '\\.')}",method_name="/csi.v1.Controller/ControllerExpandVolume",grpc_status_code="OK"\\} [1-9]`,
        'm',
      ),
    );
    assert.match(metrics, new RegExp(`^nodejs_version_info\\{version="v${shippedNode.replaceAll('.', '\\.')}"`, 'm'), 'the image runs the pinned Node.js');
    assert.match(metrics, /^leader_election_master_status\{name=""\} 1$/m);

    // SIGTERM to podman reaches node as PID 1, which handles it: drain, release, exit 0.
    resizer.signal('SIGTERM');
    assert.deepEqual(await resizer.exited, { code: 0, signal: null }, resizer.tail());
    assert.equal((await lease()).spec?.holderIdentity, '', 'the Lease is released');

    t.diagnostic(
      `start-up under podman (runc): --version ${versionMs.toFixed(0)} ms; leader ${leaderMs.toFixed(0)} ms; resize controller started ${readyMs.toFixed(0)} ms`,
    );
  });

  test("the shipped compile cache: each architecture's node reads its own from the read-only root", async (t) => {
    const bundle = join(work, 'bundle-cache');
    await unpack(image, 'amd64', bundle);
    const caches = readdirSync(join(bundle, 'rootfs', 'app', 'dist', 'compile-cache')).sort();
    assert.deepEqual(
      caches.map((name) => name.split('-').slice(0, 2).join('-')),
      [`v${shippedNode}-arm64`, `v${shippedNode}-x64`],
      caches.join(', '),
    );
    const qemu = [{ host: '/usr/bin/qemu-aarch64-static', container: '/qemu-aarch64' }];
    for (const arch of ['amd64', 'arm64']) {
      const imageId = await pullImage(image, arch);
      t.after(() => removeImage(imageId));
      const c = new Container(imageId, {
        args: ['--version'],
        env: { NODE_DEBUG_NATIVE: 'COMPILE_CACHE' },
        ...(arch === 'arm64' ? { entrypoint: ['/qemu-aarch64', '/usr/local/bin/node', ...NODE_FLAGS, '/app/dist/main.js'], binds: qemu } : {}),
      });
      t.after(() => c.destroy());
      assert.deepEqual(await c.exited, { code: 0, signal: null }, c.tail());
      assert.match(c.stderr, /V8 code cache for ESM file:\/\/\/app\/dist\/resizer\.js was accepted/, `${arch}:\n${c.tail()}`);
    }
  });

  test('reproducible: a second build of the same commit has the same digests', async () => {
    const again = (await buildImage(join(work, 'oci-again'), ['amd64', 'arm64'])).image;
    assert.deepEqual(
      again.manifests.map((m) => m.digest),
      image.manifests.map((m) => m.digest),
    );
    assert.equal(readFileSync(join(again.dir, 'index.json'), 'utf8'), readFileSync(join(image.dir, 'index.json'), 'utf8'));
    rmSync(again.dir, { recursive: true, force: true });
  });

  test('arm64 image starts under qemu-user (qemu-aarch64-static in front of its node): --version', async (t) => {
    const imageId = await pullImage(image, 'arm64');
    t.after(() => removeImage(imageId));
    const qemu = [{ host: '/usr/bin/qemu-aarch64-static', container: '/qemu-aarch64' }];
    const c = new Container(imageId, {
      entrypoint: ['/qemu-aarch64', '/usr/local/bin/node', ...NODE_FLAGS, '/app/dist/main.js'],
      args: ['--version'],
      binds: qemu,
    });
    t.after(() => c.destroy());
    assert.deepEqual(await c.exited, { code: 0, signal: null }, c.tail());
    assert.match(c.stdout, new RegExp(`^csi-resizer ${appVersion.replaceAll('.', '\\.')}\\b`));
    t.diagnostic(`arm64 --version under qemu-user: ${(performance.now() - c.startedAt).toFixed(0)} ms`);

    const arch = new Container(imageId, {
      entrypoint: ['/qemu-aarch64', '/usr/local/bin/node', '-p'],
      args: ['process.arch + " " + process.version'],
      binds: qemu,
    });
    t.after(() => arch.destroy());
    assert.deepEqual(await arch.exited, { code: 0, signal: null }, arch.tail());
    assert.equal(arch.stdout.trim(), `arm64 v${shippedNode}`);
  });
});
