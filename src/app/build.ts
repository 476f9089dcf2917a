// The composition root (§1 steps 6–18). `startApp` does what every replica does before leader
// election: the API clients (kube/wire/client-factory.ts), VolumeAttributesClass discovery, the CSI
// connection, driver name and capabilities, the back-end choice. `assemble` then connects what the
// builders in build/ make (the shared informers, each controller, the resize-state gauges, and on
// demand the RBAC check's and the elector's clients) into the App the process runner drives;
// `App.run` is what the leader runs until its signal aborts. A new controller is a new builder
// and a line in `assemble`.
import { realClock, type Clock } from '../base/clock.js';
import { linkedSignal } from '../base/signals.js';
import { discoverCapabilities, DriverNameError, GrpcCsiClient, type DriverCapabilities } from '../csi/client.js';
import type { Config } from '../flags/config.js';
import { withGate, type FeatureGates } from '../flags/feature-gates.js';
import type { HttpKubeClient } from '../kube/wire/http-client.js';
import { ApiClientFactory, ClientPurpose } from '../kube/wire/client-factory.js';
import { leaseNamespace, type LeaderCallbacks } from '../kube/api/leader-election.js';
import { requiredRules, type PermissionNeeds } from '../kube/api/required-permissions.js';
import { ClientRateLimitError } from '../kube/wire/rate-limiter.js';
import type { KubeObject } from '../model/objects.js';
import { everyVolume, type VolumeScope } from '../model/volume-scope.js';
import type { Logger } from '../observability/log/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { ControllerKit } from './build/controller-kit.js';
import { autoGrowRuns, buildAutoGrow } from './build/auto-grow.js';
import { buildElector, type Elector } from './build/elector.js';
import { InformerSet } from './build/informers.js';
import { buildModifyController } from './build/modify-controller.js';
import { buildResizeController } from './build/resize-controller.js';
import { runLogged } from './build/runnable.js';
import { registerOperationDurations } from './build/operation-durations.js';
import { registerStateGauges } from './build/state-gauges.js';
import { NodeVolumeScope } from './node-volume-scope.js';
import { runPermissionCheck } from './permission-check.js';
import { PermissionNotices } from './permission-notices.js';
import { selectBackends, type Backends } from './select-backends.js';
import { StartupError } from './startup-error.js';

export interface AppDeps {
  log: Logger;
  metrics: Metrics;
  clock?: Clock;
  version?: string;
  /** Where NODE_NAME is read with --node-deployment, and the API server's proxy variables (default process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface App {
  readonly driverName: string;
  /**
   * Informers and controllers until `signal` aborts (stop taking work) and in-flight work has
   * finished; aborting `cancelSignal` (default: `signal`) cancels what is still in flight.
   */
  run(signal: AbortSignal, cancelSignal?: AbortSignal): Promise<void>;
  /** Called once if the CSI driver comes back under another name after a reconnect: the process must end. */
  onFatal(listener: (err: Error) => void): void;
  /**
   * Resolves once every informer of the controllers has its first list or has been refused it
   * for want of an RBAC rule (only ever while `run` runs: on the leader); rejects when `signal`
   * aborts first.
   */
  whenCachesSettled(signal: AbortSignal): Promise<void>;
  /** The startup RBAC check (logs what is missing), with a client of its own. */
  checkPermissions(signal: AbortSignal): Promise<void>;
  /** The Lease elector for --leader-election, with a client of its own. Throws StartupError. */
  createElector(callbacks: LeaderCallbacks): Elector;
  /** Closes every client the app made. */
  close(): void;
}

export async function startApp(config: Config, deps: AppDeps, signal: AbortSignal): Promise<App> {
  const { log } = deps;
  const clock = deps.clock ?? realClock;

  let clients: ApiClientFactory;
  let kube: HttpKubeClient;
  try {
    clients = await ApiClientFactory.load(config, { version: deps.version, env: deps.env, metrics: deps.metrics.restClient });
    kube = clients.create(ClientPurpose.Controllers);
  } catch (err) {
    if (err instanceof ClientRateLimitError) throw new StartupError('Failed to create kube client', 1, { cause: err });
    throw new StartupError('Failed to create cluster config', 1, { cause: err });
  }

  // VolumeAttributesClass discovery (an API round trip) and the CSI start-up (connect, Probe,
  // driver name, capabilities) do not depend on each other, so they run at once (upstream runs them
  // one after the other). The discovery's outcome is logged first and the CSI outcome judged after
  // it, so a failing driver ends the process as before and with the same lines; only the lines
  // logged while the driver is being reached may come before the discovery's line
  // (docs/differences/startup-order.md).
  const csiStarting = startCsi(config, deps, signal);
  csiStarting.catch(() => {}); // judged below, after the discovery; not an unhandled rejection meanwhile
  const gates = await discoveredGates(config.gates, kube, log, signal);
  let csi: GrpcCsiClient | undefined;
  try {
    const started = await csiStarting;
    csi = started.csi;
    const driverName = csi.driverName;
    const backends = selectBackends({ capabilities: started.capabilities, csi, secrets: kube, resizeTimeoutMs: config.resizeTimeoutMs, log });
    const scope = config.nodeDeployment ? await nodeScope(kube, deps.env ?? process.env, log, signal) : everyVolume;
    return assemble({ config, deps, clock, clients, kube, csi, gates, driverName, backends, scope });
  } catch (err) {
    csi?.close();
    kube.close();
    if (err instanceof StartupError) throw err;
    throw new StartupError('Failed to create CSI resizer', 1, { cause: err });
  }
}

/** The gates once VolumeAttributesClass discovery has run (when the gate was not set explicitly). */
async function discoveredGates(gates: FeatureGates, kube: HttpKubeClient, log: Logger, signal: AbortSignal): Promise<FeatureGates> {
  if (gates.explicit.has('VolumeAttributesClass')) return gates;
  try {
    if (await kube.hasResource('storage.k8s.io/v1', 'VolumeAttributesClass', signal)) {
      log.info('VolumeAttributesClass v1 API is available');
      return gates;
    }
    log.info('Disabling VolumeAttributesClass feature gate because the VolumeAttributesClass v1 API is not available');
    return withGate(gates, { volumeAttributesClass: false });
  } catch (err) {
    log.error('Failed to check VolumeAttributesClass V1 API availability', { err });
    return gates;
  }
}

/**
 * The CSI client, started and asked for its capabilities. A failure to start is a StartupError; a
 * failed capability query closes the client and rejects with the query's error.
 */
async function startCsi(config: Config, deps: AppDeps, signal: AbortSignal): Promise<{ csi: GrpcCsiClient; capabilities: DriverCapabilities }> {
  let csi: GrpcCsiClient;
  try {
    csi = await GrpcCsiClient.start({ address: config.csiAddress, timeoutMs: config.timeoutMs, log: deps.log, metrics: deps.metrics }, signal);
  } catch (err) {
    throw new StartupError(err instanceof DriverNameError ? 'Get driver name failed' : 'Failed to create CSI client', 1, { cause: err });
  }
  // From the driver's name on, the operations metric carries it (§1 step 11): the capability
  // queries already do. They have the resize timeout, as upstream's resizer asks them (§1 step 14).
  csi.setMetricsDriverName(csi.driverName);
  try {
    return { csi, capabilities: await discoverCapabilities(csi, signal, { timeoutMs: config.resizeTimeoutMs }) };
  } catch (err) {
    csi.close();
    throw err;
  }
}

function assemble(parts: {
  config: Config;
  deps: AppDeps;
  clock: Clock;
  clients: ApiClientFactory;
  kube: HttpKubeClient;
  csi: GrpcCsiClient;
  gates: FeatureGates;
  driverName: string;
  backends: Backends;
  scope: VolumeScope;
}): App {
  const { config, deps, clock, clients, kube, csi, gates, driverName, backends, scope } = parts;
  const { log, metrics } = deps;
  const modifies = backends.canModify && gates.volumeAttributesClass;
  // --auto-grow shares the resize controller's pod cache, whose records then keep their node.
  const autoGrows = autoGrowRuns(config, backends.resizer, log);
  const needs: PermissionNeeds = {
    resizes: backends.resizer !== undefined,
    pods: backends.resizer !== undefined && (config.handleVolumeInUseError || autoGrows),
    volumeAttributesClasses: modifies,
    leaseNamespace: config.leaderElection ? leaseNamespace(config.leaderElectionNamespace) : undefined,
    node: config.nodeDeployment,
    ...(autoGrows ? { autoGrow: { kubelets: config.autoGrow.usageSource.kind === 'kubelet' } } : {}),
  };
  // One voice for missing rules: the informers' refusals and the startup check's reviews.
  const notices = new PermissionNotices(log);
  const permissions = { rules: requiredRules(needs), notices };
  const informers = new InformerSet({ kube, resyncPeriodMs: config.resyncPeriodMs, metrics, log, scope, driverName, permissions });
  // The event recorders and the elector say their refusals through the same notices.
  const accessTo = (resource: string) => {
    const rule = permissions.rules.find((r) => r.resource === resource);
    return rule ? notices.listenerFor(rule) : undefined;
  };
  const eventAccess = accessTo('events');
  const kit = new ControllerKit({ config, clock, log, metrics, kube, driverName, gates, scope, informers, ...(eventAccess ? { eventAccess } : {}) });
  // Each controller registers its informer handlers when built: the resize controller's first.
  const resize = backends.resizer ? buildResizeController(kit, backends.resizer, { podNodes: autoGrows }) : undefined;
  const modify = modifies ? buildModifyController(kit, csi) : undefined;
  const autoGrow = autoGrows && resize ? buildAutoGrow(kit, resize, clients.clientConfig) : undefined;
  const controllers = [resize?.controller, modify, autoGrow?.controller].filter((c) => c !== undefined);
  registerStateGauges({ driverName, informers, scope, registry: metrics.registry, requeues: (key) => resize?.queue.numRequeues(key) ?? 0 });
  registerOperationDurations({ driverName, informers, scope, operations: metrics.operations, modifies });

  const closers: (() => void)[] = [() => autoGrow?.close(), () => kit.close(), () => csi.close(), () => kube.close()];
  return {
    driverName,
    async run(signal: AbortSignal, cancelSignal: AbortSignal = signal): Promise<void> {
      kit.startSlowSets();
      try {
        // Informers keep the caches fresh until the controllers have drained (or are cancelled).
        const caches = linkedSignal(cancelSignal);
        try {
          const informersDone = informers.run(caches.signal);
          await Promise.all(controllers.map((r) => runLogged(r, signal, cancelSignal, log))).finally(() => caches.abort());
          await informersDone;
        } finally {
          caches.dispose();
        }
      } finally {
        kit.stopSlowSets();
      }
    },
    onFatal: (listener) => csi.onFatal(listener),
    whenCachesSettled: (signal) => informers.whenStarted(signal),
    checkPermissions: (signal) => runPermissionCheck(clients, needs, notices, log, signal),
    createElector(callbacks: LeaderCallbacks): Elector {
      const access = accessTo('leases');
      const { elector, close } = buildElector({ config, gates, driverName, clients, log, metrics, callbacks, ...(access ? { access } : {}) });
      closers.push(close);
      return elector;
    },
    close(): void {
      for (const close of closers) close();
    },
  };
}

/**
 * --node-deployment: this replica's node, read once at startup (its labels are what PV node
 * affinity selects on). Without NODE_NAME or the Node the replica cannot tell its volumes apart,
 * so it does not start.
 */
async function nodeScope(kube: HttpKubeClient, env: NodeJS.ProcessEnv, log: Logger, signal: AbortSignal): Promise<VolumeScope> {
  const name = env['NODE_NAME'] ?? '';
  if (name === '') {
    throw new StartupError('--node-deployment needs the node name in the NODE_NAME environment variable (fieldRef spec.nodeName in the DaemonSet)', 1);
  }
  let node: KubeObject;
  try {
    node = await kube.getNode(name, signal);
  } catch (err) {
    throw new StartupError(`Failed to get node ${name} for --node-deployment`, 1, { cause: err });
  }
  const labels = node?.metadata?.labels ?? {};
  log.info('Node deployment: acting only on volumes whose node affinity selects this node', { node: name });
  return new NodeVolumeScope({ name, labels }, log.child({ component: 'node-scope' }));
}
