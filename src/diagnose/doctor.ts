// `csi-resizer doctor`: answers "why is my PVC not resizing?" for a whole driver. Read-only: it
// asks the API server and the CSI driver what the sidecar would ask at startup (reachability,
// VolumeAttributesClass v1, every RBAC permission the configuration needs, the socket, Probe, the
// driver's name and capabilities), then what only a person would look up by hand: who holds the
// driver's Lease and how fresh it is (is any resizer running?), StorageClasses of the driver that
// forbid expansion, PVs whose claimRef no longer matches their claim, and every claim of the
// driver that is waiting, in progress, infeasible, in backoff or waiting for kubelet, with how long.
// A failed check makes the exit status 1; warnings do not.
import { messageOf } from '../base/errors.js';
import { statSync } from 'node:fs';
import { discoverCapabilities, GrpcCsiClient, type DriverCapabilities } from '../csi/client.js';
import { parseCsiAddress } from '../csi/driver-channel.js';
import type { HttpKubeClient } from '../kube/wire/http-client.js';
import { ApiClientFactory, ClientPurpose } from '../kube/wire/client-factory.js';
import { isForbidden, isNotFound } from '../kube/api/errors.js';
import { leaseNameForDriver, leaseNamespace } from '../kube/api/leader-election.js';
import { Resources } from '../kube/api/resources.js';
import type { Pv, Pvc } from '../model/objects.js';
import type { Logger } from '../observability/log/logger.js';
import { createMetrics } from '../observability/metrics.js';
import { formatAge } from './age.js';
import { CLAIM_STATE_TEXT, claimTable, type ClaimRow } from './claim-progress.js';
import type { Check, DoctorReport } from './doctor-report.js';
import type { Config } from '../flags/config.js';
import { describeRule, permissionsOf, requiredRules, RULE_EFFECTS, Stops, type RequiredRule } from '../kube/api/required-permissions.js';
import type { ClientConfig } from '../kube/wire/kubeconfig.js';
import { checkAutoGrow } from './doctor-auto-grow.js';

export interface DoctorOptions {
  config: Config;
  log: Logger;
  now?: () => Date;
  /** How long to wait for the driver's socket (the sidecar waits up to 30 s). */
  csiConnectTimeoutMs?: number;
}

interface Lease {
  spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number };
}

interface StorageClass {
  metadata: { name: string };
  provisioner?: string;
  allowVolumeExpansion?: boolean;
}

/** The proxy the API server is reached through, as the API server check names it (password masked). */
function via(kube: HttpKubeClient): string {
  return kube.endpoint.proxy === undefined ? '' : ` (through proxy ${kube.endpoint.proxy})`;
}

export async function runDoctor(options: DoctorOptions, signal: AbortSignal): Promise<DoctorReport> {
  const { config } = options;
  const now = options.now ?? (() => new Date());
  const checks: Check[] = [];
  const claims: ClaimRow[] = [];
  const report = (): DoctorReport => ({ driver, checks, claims, healthy: checks.every((c) => c.status !== 'fail') });
  let driver: string | undefined;

  let kube: HttpKubeClient | undefined;
  let kubeConfig: ClientConfig | undefined;
  try {
    const clients = await ApiClientFactory.load(config);
    kubeConfig = clients.clientConfig;
    kube = clients.create(ClientPurpose.Doctor);
  } catch (err) {
    checks.push({ name: 'API server', status: 'fail', summary: `no client configuration: ${messageOf(err)}` });
  }

  let vacServed = false;
  if (kube) {
    try {
      const version = await kube.serverVersion(signal);
      checks.push({ name: 'API server', status: 'ok', summary: `${kube.endpoint.server}${via(kube)} reachable, version ${version ?? 'unknown'}` });
    } catch (err) {
      checks.push({ name: 'API server', status: 'fail', summary: `${kube.endpoint.server}${via(kube)} not reachable: ${messageOf(err)}` });
      kube.close();
      kube = undefined;
    }
  }
  if (kube) {
    try {
      vacServed = await kube.hasResource('storage.k8s.io/v1', 'VolumeAttributesClass', signal);
      checks.push(
        vacServed
          ? { name: 'VolumeAttributesClass', status: 'ok', summary: 'storage.k8s.io/v1 VolumeAttributesClass is served' }
          : {
              name: 'VolumeAttributesClass',
              status: 'warn',
              summary: 'storage.k8s.io/v1 VolumeAttributesClass is not served: the modify controller will not run',
            },
      );
    } catch (err) {
      checks.push({ name: 'VolumeAttributesClass', status: 'warn', summary: `could not ask discovery: ${messageOf(err)}` });
    }
  }

  const capabilities = await checkDriver(options, checks, signal);
  driver = capabilities?.driver;
  const caps = capabilities?.caps;
  if (!kube) return report();

  try {
    const resizes = caps === undefined || caps.controllerExpand || caps.nodeExpand === true;
    const modifies = vacServed && config.gates.volumeAttributesClass && (caps === undefined || caps.controllerModify);
    const lease = config.leaderElection ? leaseNamespace(config.leaderElectionNamespace) : undefined;
    const needed = requiredRules({
      resizes,
      pods: resizes && config.handleVolumeInUseError,
      volumeAttributesClasses: modifies,
      leaseNamespace: lease,
      node: config.nodeDeployment,
      ...(config.autoGrow.enabled ? { autoGrow: { kubelets: config.autoGrow.usageSource.kind === 'kubelet' } } : {}),
    });
    await checkPermissions(kube, needed, 'RBAC', checks, signal);

    if (driver === undefined) return report();
    await checkLease(kube, driver, config, now(), checks, signal);

    await checkStorageClasses(kube, driver, checks, signal);
    const pvs = (await kube.listWatcher(Resources.persistentVolumes).list({}, signal)).items as unknown as Pv[];
    const pvcs = (await kube.listWatcher(Resources.persistentVolumeClaims).list({}, signal)).items as unknown as Pvc[];
    await checkClaims({ kube, driver, pvs, pvcs, now: now(), checks, claims }, signal);
    if (config.autoGrow.enabled && kubeConfig) checks.push(await checkAutoGrow({ kube, kubeConfig, config, driver, pvs, pvcs }, signal));
  } catch (err) {
    checks.push({ name: 'API reads', status: 'fail', summary: `could not read the cluster: ${messageOf(err)}` });
  } finally {
    kube.close();
  }
  return report();
}

async function checkStorageClasses(kube: HttpKubeClient, driver: string, checks: Check[], signal: AbortSignal): Promise<void> {
  let classes: StorageClass[];
  try {
    classes = (await kube.listStorageClasses(signal)) as unknown as StorageClass[];
  } catch (err) {
    // The sidecar itself never reads StorageClasses, so its identity usually may not.
    if (!isForbidden(err)) throw err;
    checks.push({
      name: 'StorageClasses',
      status: 'skip',
      summary: 'this identity may not list StorageClasses (the sidecar does not need to): run doctor as a cluster reader to check them',
    });
    return;
  }
  const fixed = classes.filter((sc) => sc.provisioner === driver && sc.allowVolumeExpansion !== true);
  checks.push(
    fixed.length === 0
      ? { name: 'StorageClasses', status: 'ok', summary: `every StorageClass of ${driver} allows volume expansion` }
      : {
          name: 'StorageClasses',
          status: 'warn',
          summary: `${fixed.length} StorageClass(es) of ${driver} do not set allowVolumeExpansion: claims of them cannot ask for more`,
          details: fixed.map((sc) => sc.metadata.name),
        },
  );
}

async function checkDriver(
  options: DoctorOptions,
  checks: Check[],
  signal: AbortSignal,
): Promise<{ driver: string; caps: DriverCapabilities | undefined } | undefined> {
  const { config, log } = options;
  let socketPath: string;
  try {
    socketPath = parseCsiAddress(config.csiAddress).socketPath;
  } catch (err) {
    checks.push({ name: 'CSI socket', status: 'fail', summary: messageOf(err) });
    return undefined;
  }
  try {
    if (!statSync(socketPath).isSocket()) {
      checks.push({ name: 'CSI socket', status: 'fail', summary: `${socketPath} exists but is not a unix socket (is --csi-address the driver's socket?)` });
      return undefined;
    }
  } catch {
    checks.push({
      name: 'CSI socket',
      status: 'fail',
      summary: `no socket at ${socketPath}: is the driver running, and is its socket directory mounted here?`,
    });
    return undefined;
  }
  let csi: GrpcCsiClient;
  try {
    csi = await GrpcCsiClient.start(
      {
        address: config.csiAddress,
        timeoutMs: config.timeoutMs,
        log,
        metrics: createMetrics(),
        connectTimeoutMs: options.csiConnectTimeoutMs ?? 5_000,
      },
      signal,
    );
  } catch (err) {
    checks.push({ name: 'CSI socket', status: 'fail', summary: `${socketPath}: ${messageOf(err)}` });
    return undefined;
  }
  try {
    const driver = csi.driverName;
    checks.push({ name: 'CSI driver', status: 'ok', summary: `${driver} answers Probe and GetPluginInfo on ${socketPath}` });
    let caps: DriverCapabilities | undefined;
    try {
      caps = await discoverCapabilities(csi, signal);
    } catch (err) {
      checks.push({ name: 'CSI capabilities', status: 'fail', summary: messageOf(err) });
      return { driver, caps: undefined };
    }
    const details = [
      `controller expansion (EXPAND_VOLUME): ${caps.controllerExpand ? 'yes' : 'no'}`,
      `node expansion: ${caps.nodeExpand === undefined ? 'not asked (controller expansion is enough)' : caps.nodeExpand ? 'yes' : 'no'}`,
      `expansion mode: ${caps.volumeExpansion === 'unknown' ? 'not stated (treated as online)' : caps.volumeExpansion.toUpperCase()}`,
      `modify (MODIFY_VOLUME): ${caps.controllerModify ? 'yes' : 'no'}`,
      `SINGLE_NODE_MULTI_WRITER: ${caps.singleNodeMultiWriter ? 'yes' : 'no'}`,
    ];
    if (!caps.controllerExpand && caps.nodeExpand !== true && !caps.controllerModify) {
      checks.push({ name: 'CSI capabilities', status: 'fail', summary: `${driver} can neither expand nor modify volumes: the sidecar would exit`, details });
    } else {
      checks.push({
        name: 'CSI capabilities',
        status: 'ok',
        summary: caps.controllerExpand
          ? 'controller expansion supported'
          : caps.nodeExpand
            ? 'node-only expansion (the resizer only records sizes)'
            : 'modify only',
        details,
      });
    }
    return { driver, caps };
  } finally {
    csi.close();
  }
}

/** One detail per missing rule: the rule as an operator adds it, and what its absence disables. */
async function checkPermissions(kube: HttpKubeClient, needed: RequiredRule[], name: string, checks: Check[], signal: AbortSignal): Promise<void> {
  const details: string[] = [];
  let disablesAll = false;
  for (const rule of needed) {
    const verbs: string[] = [];
    for (const attributes of permissionsOf(rule)) {
      if (!(await kube.canI(attributes, signal)).allowed) verbs.push(attributes.verb);
    }
    if (verbs.length === 0) continue;
    const effect = RULE_EFFECTS[rule.stops];
    details.push(`${describeRule(rule, verbs)}: disables ${effect.disables}`);
    if (effect.severity === 'error') disablesAll = true;
  }
  checks.push(
    details.length === 0
      ? { name, status: 'ok', summary: `all ${needed.length} rules this configuration uses are granted to this identity` }
      : {
          name,
          // A rule only modify or events need leaves resizes working: a warning, not a failure.
          status: disablesAll ? 'fail' : 'warn',
          summary: `${details.length} rule(s) missing, each named below with what it disables (see deploy/kubernetes/rbac.yaml)`,
          details,
        },
  );
}

async function checkLease(kube: HttpKubeClient, driver: string, config: Config, now: Date, checks: Check[], signal: AbortSignal): Promise<void> {
  const namespace = leaseNamespace(config.leaderElectionNamespace);
  const name = leaseNameForDriver(driver);
  let lease: Lease;
  try {
    lease = (await kube.getLease(namespace, name, signal)) as Lease;
  } catch (err) {
    const notFound = isNotFound(err);
    if (isForbidden(err)) {
      checks.push({ name: 'Leader', status: 'skip', summary: `this identity may not read Lease ${namespace}/${name}` });
      return;
    }
    checks.push({
      name: 'Leader',
      status: notFound ? 'warn' : 'fail',
      summary: notFound
        ? `no Lease ${namespace}/${name}: no resizer for ${driver} runs with --leader-election in this namespace (one without it leaves no trace)`
        : `could not read Lease ${namespace}/${name}: ${messageOf(err)}`,
    });
    return;
  }
  const holder = lease.spec?.holderIdentity ?? '';
  const renewed = lease.spec?.renewTime ? Date.parse(lease.spec.renewTime) : NaN;
  const durationMs = (lease.spec?.leaseDurationSeconds ?? config.leaderElectionLeaseDurationMs / 1000) * 1000;
  const ageMs = Number.isFinite(renewed) ? now.getTime() - renewed : undefined;
  if (holder === '') {
    checks.push({ name: 'Leader', status: 'fail', summary: `Lease ${namespace}/${name} has no holder: no resizer is leading for ${driver}` });
  } else if (ageMs === undefined || ageMs > durationMs) {
    checks.push({
      name: 'Leader',
      status: 'fail',
      summary: `Lease ${namespace}/${name} held by ${holder} expired (last renewed ${ageMs === undefined ? 'never' : `${formatAge(ageMs)} ago`}, lease ${formatAge(durationMs)}): no resizer is running for ${driver}`,
    });
  } else {
    checks.push({ name: 'Leader', status: 'ok', summary: `${holder} leads for ${driver} (Lease ${namespace}/${name} renewed ${formatAge(ageMs)} ago)` });
  }
}

async function checkClaims(
  o: { kube: HttpKubeClient; driver: string; pvs: Pv[]; pvcs: Pvc[]; now: Date; checks: Check[]; claims: ClaimRow[] },
  signal: AbortSignal,
): Promise<void> {
  const table = claimTable(o.driver, o.pvs, o.pvcs, o.now);
  o.claims.push(...table.rows);
  const secretsNeeded = new Map<string, RequiredRule>();
  for (const pv of table.matched) {
    const secret = pv.spec.csi?.controllerExpandSecretRef;
    if (secret?.namespace) {
      secretsNeeded.set(secret.namespace, { group: '', resource: 'secrets', namespace: secret.namespace, verbs: ['get'], stops: Stops.Resizes });
    }
  }
  o.checks.push(
    table.mismatched.length === 0
      ? { name: 'Claim references', status: 'ok', summary: `${table.volumes} bound volume(s) of ${o.driver}, each claimRef matches its claim` }
      : {
          name: 'Claim references',
          status: 'warn',
          summary: `${table.mismatched.length} volume(s) whose claimRef UID is not their claim's: never resized`,
          details: table.mismatched,
        },
  );
  if (secretsNeeded.size > 0) await checkPermissions(o.kube, [...secretsNeeded.values()], 'Expansion secrets', o.checks, signal);
  const stuck = o.claims.filter((c) => c.state === CLAIM_STATE_TEXT.infeasible || c.state === CLAIM_STATE_TEXT.backoff);
  o.checks.push(
    stuck.length === 0
      ? { name: 'Claims', status: 'ok', summary: `${o.claims.length} claim operation(s) pending, none failing` }
      : { name: 'Claims', status: 'warn', summary: `${stuck.length} claim operation(s) infeasible or failing (csi-resizer explain NAMESPACE/NAME says why)` },
  );
}
