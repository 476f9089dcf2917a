// deploy/kubernetes applies cleanly to the real API server (server-side apply, dry run, as the
// admin), and the Deployment agrees with the RBAC manifest and with the command line: its
// arguments parse, its ServiceAccount exists, its probe and port are the ones the resizer serves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseConfig } from '../../src/flags/config.js';
import { LEADER_ELECTION_HEALTH_PATH, parseListenAddress } from '../../src/observability/http-server.js';
import { repoRoot } from '../cluster/components.js';
import { NODE_FLAGS } from '../../scripts/node-flags.js';
import { adminClients, useCluster } from '../cluster/test-cluster.js';

const deployDir = join(repoRoot, 'deploy', 'kubernetes');
const load = (file: string) => k8s.loadAllYaml(readFileSync(join(deployDir, file), 'utf8')).filter(Boolean) as k8s.KubernetesObject[];

test('rbac.yaml, the opt-in secrets access and auto-grow RBAC, and deployment.yaml apply cleanly (server-side apply, dry run)', async () => {
  const cluster = await useCluster();
  const admin = adminClients(cluster);
  const objects = k8s.KubernetesObjectApi.makeApiClient(admin.kc);
  for (const doc of [...load('rbac.yaml'), ...load('secrets-access/rbac-secrets.yaml'), ...load('auto-grow/rbac-auto-grow.yaml'), ...load('deployment.yaml')]) {
    const applied = await objects.patch(doc, undefined, 'All', 'csi-resizer-manifest-test', true, k8s.PatchStrategy.ServerSideApply);
    assert.equal(applied.kind, doc.kind);
    assert.equal(applied.metadata?.name, doc.metadata?.name);
  }
});

test("the Deployment matches the RBAC manifest and the resizer's command line", () => {
  const [deployment] = load('deployment.yaml') as k8s.V1Deployment[];
  assert.ok(deployment);
  const rbac = load('rbac.yaml');
  const pod = deployment.spec!.template.spec!;
  const sa = rbac.find((d) => d.kind === 'ServiceAccount');
  assert.equal(pod.serviceAccountName, sa?.metadata?.name);
  assert.equal(deployment.metadata?.namespace, sa?.metadata?.namespace);
  const leaseRole = rbac.find((d) => d.kind === 'Role') as k8s.V1Role;
  assert.equal(leaseRole.metadata?.namespace, deployment.metadata?.namespace, "the Lease Role is in the pod's namespace");
  for (const [k, v] of Object.entries(deployment.spec?.selector.matchLabels ?? {})) {
    assert.equal(deployment.spec?.template.metadata?.labels?.[k], v, `the pods carry the selector's ${k}`);
  }

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
  // The image defaults to root as upstream's does; the manifest picks the image's csi-resizer user.
  assert.equal(pod.securityContext?.runAsUser, 1000);
  assert.equal(resizer.securityContext?.readOnlyRootFilesystem, true);
  assert.equal(resizer.securityContext?.allowPrivilegeEscalation, false);
  assert.ok(resizer.resources?.requests?.['memory'] && resizer.resources?.limits?.['memory']);
});

test("the Dockerfile runs dist/main.js from a production-only stage, as root by default as upstream's image", () => {
  const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
  assert.match(dockerfile, /npm ci --omit=dev/);
  assert.match(dockerfile, /RUN npm run build/);
  assert.match(dockerfile, /^USER 0:0$/m);
  // With the node flags every way of running it uses (scripts/node-flags.ts).
  assert.ok(dockerfile.includes(`\nENTRYPOINT ${JSON.stringify(['node', ...NODE_FLAGS, 'dist/main.js']).replaceAll('","', '", "')}\n`));
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  assert.doesNotMatch(runtime, /npm ci(?! --omit=dev)/, 'the runtime stage installs nothing with dev dependencies');
});

/**
 * RSS figures in MiB of our resizer at idle, from the result files of the current measurements in
 * docs/performance.md (the commands in the first code block under "## The latest full run"; older
 * runs it cites measured earlier versions).
 */
function idleRssMiB(): Array<{ file: string; scenario: string; name: string; mib: number }> {
  const performance = readFileSync(join(repoRoot, 'docs', 'performance.md'), 'utf8');
  const measured = performance.slice(performance.indexOf('\n## The latest full run'));
  const commands = /```\n([\s\S]*?)```/.exec(measured)?.[1] ?? '';
  const files = [...new Set([...commands.matchAll(/bench\/results\/[\w.-]+\.json/g)].map((m) => m[0]))];
  const out = [];
  for (const file of files) {
    const result = JSON.parse(readFileSync(join(repoRoot, file), 'utf8')) as {
      figures: Array<{ scenario: string; name: string; unit: string; samples?: { ours?: number[] } }>;
    };
    for (const f of result.figures) {
      if (!f.scenario.startsWith('idle') || f.unit !== 'MiB' || !/RSS/.test(f.name)) continue;
      for (const mib of f.samples?.ours ?? []) out.push({ file, scenario: f.scenario, name: f.name, mib });
    }
  }
  return out;
}

function quantityMiB(q: string): number {
  const m = /^(\d+)(Mi|Gi)$/.exec(q);
  assert.ok(m, `memory quantity ${q} in Mi or Gi`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
}

test("the Deployment's memory request covers every idle RSS the benchmarks measured", () => {
  const [deployment] = load('deployment.yaml') as k8s.V1Deployment[];
  const resizer = deployment!.spec!.template.spec!.containers.find((c) => c.name === 'csi-resizer')!;
  const requestMiB = quantityMiB(resizer.resources!.requests!['memory']!);
  const limitMiB = quantityMiB(resizer.resources!.limits!['memory']!);
  const figures = idleRssMiB();
  assert.ok(figures.length > 0, 'docs/performance.md cites benchmark results with idle RSS figures');
  for (const f of figures) assert.ok(f.mib <= requestMiB, `${f.file}: ${f.scenario} ${f.name} = ${f.mib.toFixed(1)} MiB > request ${requestMiB} MiB`);
  assert.ok(limitMiB >= 2 * requestMiB, 'the limit leaves room for a burst on top of idle');
});
