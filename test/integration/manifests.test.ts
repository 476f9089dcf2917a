// deploy/kubernetes applies cleanly to the real API server (server-side apply, dry run, as the
// admin), and the Deployment agrees with the RBAC manifest and with the command line: its
// arguments parse, its ServiceAccount exists, its probe and port are the ones the resizer serves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseConfig } from '../../src/app/config.js';
import { LEADER_ELECTION_HEALTH_PATH, parseListenAddress } from '../../src/observability/http-server.js';
import { repoRoot } from '../cluster/components.js';
import { adminClients, useCluster } from '../cluster/test-cluster.js';

const deployDir = join(repoRoot, 'deploy', 'kubernetes');
const load = (file: string) => k8s.loadAllYaml(readFileSync(join(deployDir, file), 'utf8')).filter(Boolean) as k8s.KubernetesObject[];

test('rbac.yaml and deployment.yaml apply cleanly (server-side apply, dry run)', async () => {
  const cluster = await useCluster();
  const admin = adminClients(cluster);
  const objects = k8s.KubernetesObjectApi.makeApiClient(admin.kc);
  for (const doc of [...load('rbac.yaml'), ...load('deployment.yaml')]) {
    const applied = await objects.patch(doc, undefined, 'All', 'csi-resizer-manifest-test', true, k8s.PatchStrategy.ServerSideApply);
    assert.equal(applied.kind, doc.kind);
    assert.equal(applied.metadata?.name, doc.metadata?.name);
  }
});

test('the Deployment matches the RBAC manifest and the resizer\'s command line', () => {
  const [deployment] = load('deployment.yaml') as k8s.V1Deployment[];
  assert.ok(deployment);
  const rbac = load('rbac.yaml');
  const pod = deployment.spec!.template.spec!;
  const sa = rbac.find((d) => d.kind === 'ServiceAccount');
  assert.equal(pod.serviceAccountName, sa?.metadata?.name);
  assert.equal(deployment.metadata?.namespace, sa?.metadata?.namespace);
  const leaseRole = rbac.find((d) => d.kind === 'Role') as k8s.V1Role;
  assert.equal(leaseRole.metadata?.namespace, deployment.metadata?.namespace, 'the Lease Role is in the pod\'s namespace');
  assert.deepEqual(deployment.spec?.selector.matchLabels, deployment.spec?.template.metadata?.labels);

  const resizer = pod.containers.find((c) => c.name === 'csi-resizer')!;
  const env = new Map((resizer.env ?? []).map((e) => [e.name, e.value ?? '']));
  // Kubernetes expands $(VAR) from the container's env before the process sees its arguments.
  const args = (resizer.args ?? []).map((a) => a.replace(/\$\((\w+)\)/g, (_m, name: string) => env.get(name) ?? ''));
  const config = parseConfig(args);
  assert.equal(config.leaderElection, true);
  assert.equal(config.verbosity, 5);
  assert.equal(config.csiAddress, '/var/lib/csi/sockets/pluginproxy/mock.socket');
  const port = resizer.ports?.find((p) => p.name === 'http-endpoint');
  assert.equal(port?.containerPort, parseListenAddress(config.httpEndpoint).port);
  assert.equal(resizer.livenessProbe?.httpGet?.path, LEADER_ELECTION_HEALTH_PATH);
  assert.equal(resizer.livenessProbe?.httpGet?.port, 'http-endpoint');

  // The socket is shared with the driver container through the emptyDir.
  const driver = pod.containers.find((c) => c.name !== 'csi-resizer')!;
  assert.ok(config.csiAddress.startsWith(resizer.volumeMounts![0]!.mountPath));
  assert.equal(driver.volumeMounts?.[0]?.name, resizer.volumeMounts?.[0]?.name);
  assert.ok(pod.volumes?.some((v) => v.name === resizer.volumeMounts?.[0]?.name && v.emptyDir));

  // Hardened: non-root, read-only root filesystem, bounded resources.
  assert.equal(pod.securityContext?.runAsNonRoot, true);
  assert.equal(resizer.securityContext?.readOnlyRootFilesystem, true);
  assert.equal(resizer.securityContext?.allowPrivilegeEscalation, false);
  assert.ok(resizer.resources?.requests?.['memory'] && resizer.resources?.limits?.['memory']);
});

test('the Dockerfile runs dist/main.js as a non-root user from a production-only stage', () => {
  const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
  assert.match(dockerfile, /npm ci --omit=dev/);
  assert.match(dockerfile, /RUN npm run build/);
  assert.match(dockerfile, /^USER (?!0\b|root\b)\S+/m);
  assert.match(dockerfile, /^ENTRYPOINT \["node", "dist\/main\.js"\]$/m);
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  assert.doesNotMatch(runtime, /npm ci(?! --omit=dev)/, 'the runtime stage installs nothing with dev dependencies');
});
