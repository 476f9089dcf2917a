// The composition root (§1 steps 6–18): the only place that creates concrete classes and
// connects them. `startApp` does everything every replica does before leader election (API
// client, VolumeAttributesClass detection, CSI connection, driver name, capabilities, back-end
// choice, the resize-state gauges); `App.run` is what the leader runs (informers, controllers)
// until its signal aborts. The other clients of the process (the RBAC check's, the elector's)
// are made here too, each with its own rate limiter.
import { realClock, type Clock } from '../base/clock.js';
import { abortable, linkedSignal } from '../base/signals.js';
import { discoverCapabilities, DriverNameError, GrpcCsiClient, type DriverCapabilities } from '../csi/client.js';
import { ApiEventRecorder } from '../kube/events.js';
import { HttpKubeClient } from '../kube/client.js';
import { Informer } from '../kube/informer.js';
import { LeaderElectionConfigError, LeaderElector, leaseNameForDriver, leaseNamespace, type LeaderCallbacks } from '../kube/leader-election.js';
import { loadKubeConfig, type ClientConfig } from '../kube/kubeconfig.js';
import { clientRateLimit, ClientRateLimitError } from '../kube/rate-limiter.js';
import { Resources } from '../kube/resources.js';
import { StringPool } from '../kube/string-pool.js';
import { everyVolume, type VolumeScope } from '../model/volume-scope.js';
import { NodeVolumeScope } from './node-volume-scope.js';
import { NodeLocalCaches } from './node-local-caches.js';
import { scopedResizer } from '../resize/resizer.js';
import { volumeApi } from '../kube/volume-api.js';
import type { KubeObject, Pv, Pvc, VolumeAttributesClass } from '../model/objects.js';
import { requestedBytes } from '../model/pvc.js';
import type { HealthResult } from '../observability/http-server.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { registerResizeStateMetrics } from '../observability/resize-state.js';
import { ResizeStateCensus } from '../resize/state-census.js';
import { RateLimitingQueue, ItemExponentialFailureRateLimiter } from '../queue/rate-limiters.js';
import { SlowSet } from '../queue/slow-set.js';
import { KeyLock } from '../queue/key-lock.js';
import { CsiModifier } from '../modify/csi-modifier.js';
import { ModifyController } from '../modify/controller.js';
import { ModifyReconciler } from '../modify/reconcile.js';
import { ResizeController } from '../resize/controller.js';
import { ClaimUsage, toPodClaimUsage, type PodClaimUsage } from '../resize/in-use.js';
import { ResizeReconciler } from '../resize/reconcile.js';
import { selectBackends } from './select-backends.js';
import { StartupError } from './startup-error.js';
import type { Config } from '../flags/config.js';
import { withGate, type FeatureGates } from '../flags/feature-gates.js';
import { leaderIdentity } from './lifecycle.js';
import { checkPermissions } from './permission-check.js';
import { autoGrowNodeNames, autoGrowRuns, buildAutoGrow } from './build/auto-grow.js';

export interface AppDeps {
  log: Logger;
  metrics: Metrics;
  clock?: Clock;
  version?: string;
  /** Where NODE_NAME is read with --node-deployment, and the API server's proxy variables (default process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface Runnable {
  readonly name: string;
  /** Runs until `signal` aborts and in-flight work has finished; `cancelSignal` cuts in-flight work short. */
  run(signal: AbortSignal, cancelSignal?: AbortSignal): Promise<void>;
}

/** The Lease elector as the process runner drives it. */
export interface Elector {
  /** Acquires, then renews until leadership is lost or `signal` aborts (then releases the Lease when configured). */
  run(signal: AbortSignal): Promise<void>;
  /** The leader-election health check of the diagnostics server. */
  healthCheck(toleranceMs: number): HealthResult;
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
   * Resolves once every informer of the controllers has its first list (only ever while `run`
   * runs: on the leader); rejects when `signal` aborts first.
   */
  whenCachesSynced(signal: AbortSignal): Promise<void>;
  /** The startup RBAC check (logs what is missing), with a client of its own. */
  checkPermissions(signal: AbortSignal): Promise<void>;
  /** The Lease elector for --leader-election, with a client of its own. Throws StartupError. */
  createElector(callbacks: LeaderCallbacks): Elector;
  /** Closes every client the app made. */
  close(): void;
}

/** Drops what no controller reads and what weighs most in memory. */
function withoutManagedFields<T extends KubeObject>(obj: KubeObject): T {
  if (obj.metadata && 'managedFields' in obj.metadata) {
    const { managedFields: _dropped, ...metadata } = obj.metadata;
    return { ...obj, metadata } as T;
  }
  return obj as T;
}

/** The PVC/PV/VAC informers' transform: without managedFields, repeated strings shared. */
function forCache<T extends KubeObject>(strings: StringPool): (obj: KubeObject) => T {
  return (obj) => {
    const cached = withoutManagedFields<T>(obj);
    strings.internValues(cached);
    return cached;
  };
}

export async function startApp(config: Config, deps: AppDeps, signal: AbortSignal): Promise<App> {
  const { log } = deps;
  const clock = deps.clock ?? realClock;

  let kube: HttpKubeClient;
  let kubeConfig: ClientConfig;
  try {
    kubeConfig = await loadKubeConfig({ kubeconfigPath: config.kubeconfig, masterUrl: config.master });
    // --kube-api-qps/--kube-api-burst as client-go reads them (0 = its defaults, negative QPS = no limiter).
    kube = new HttpKubeClient({
      kubeConfig,
      ...clientRateLimit(config.kubeApiQps, config.kubeApiBurst),
      userAgent: `csi-resizer/${deps.version ?? 'unknown'}`,
      ...(deps.env ? { env: deps.env } : {}),
    });
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
    return assemble({ config, deps, clock, kube, clientConfig: kubeConfig, csi, gates, driverName, backends, scope });
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
  kube: HttpKubeClient;
  clientConfig: ClientConfig;
  csi: GrpcCsiClient;
  gates: FeatureGates;
  driverName: string;
  backends: ReturnType<typeof selectBackends>;
  scope: VolumeScope;
}): App {
  const { config, deps, clock, kube, clientConfig, csi, gates, driverName, backends, scope } = parts;
  const { log, metrics } = deps;
  const informerLog = log;
  const resyncPeriodMs = config.resyncPeriodMs;
  const strings = new StringPool();
  // --node-deployment: only this node's volumes, claims and pods are cached (node-local-caches.ts).
  const nodeLocal = scope instanceof NodeVolumeScope ? new NodeLocalCaches({ scope, driverName }) : undefined;

  const pvs = new Informer<Pv>({
    listWatcher: kube.listWatcher(Resources.persistentVolumes),
    log: informerLog,
    resyncPeriodMs,
    skippedObjects: metrics.informerObjectsSkipped,
    transform: nodeLocal ? nodeLocal.pvTransform(forCache<Pv>(strings)) : forCache<Pv>(strings),
  });
  const pvcs = new Informer<Pvc>({
    listWatcher: kube.listWatcher(Resources.persistentVolumeClaims),
    log: informerLog,
    resyncPeriodMs,
    skippedObjects: metrics.informerObjectsSkipped,
    transform: nodeLocal ? nodeLocal.pvcTransform(forCache<Pvc>(strings), pvs.store) : forCache<Pvc>(strings),
  });
  nodeLocal?.connect(pvs, pvcs);
  const informers: InformerRunnable[] = [
    informerRunnable('pvc-informer', pvcs, nodeLocal ? NodeLocalCaches.claimsAfterVolumes(pvs, pvcs) : undefined),
    informerRunnable('pv-informer', pvs),
  ];
  let cachesSynced!: () => void;
  const synced = new Promise<void>((resolve) => {
    cachesSynced = resolve;
  });

  // One recorder per controller, as upstream's controllers each have their own broadcaster (so
  // their event correlation and spam budgets are separate). No source.host: upstream names only the component.
  const newEventRecorder = () => new ApiEventRecorder({ client: kube, component: `external-resizer ${driverName}`, log });
  const resizeEvents = newEventRecorder();
  const modifyEvents = newEventRecorder();
  const queueName = `${driverName}-pvc`;
  const newQueue = () =>
    new RateLimitingQueue<string>({
      name: queueName,
      clock,
      metrics: metrics.workqueue,
      rateLimiter: new ItemExponentialFailureRateLimiter({ baseDelayMs: config.retryIntervalStartMs, maxDelayMs: config.retryIntervalMaxMs }),
    });

  const keyLock = new KeyLock();
  const api = volumeApi(kube);
  const controllers: Runnable[] = [];
  const slowSets: SlowSet<string>[] = [];
  const resizer = backends.resizer && scope !== everyVolume ? scopedResizer(backends.resizer, scope) : backends.resizer;
  let resizeQueue: RateLimitingQueue<string> | undefined;
  // --auto-grow shares the pod cache, whose records then keep their node (app/build/auto-grow.ts).
  const autoGrow = autoGrowRuns(config, resizer, log);
  let podInformer: Informer<PodClaimUsage> | undefined;
  if (resizer) {
    resizeQueue = newQueue();
    let claimUsage: ClaimUsage | undefined;
    if (config.handleVolumeInUseError || autoGrow) {
      const usage = config.handleVolumeInUseError ? (claimUsage = new ClaimUsage()) : undefined;
      const nodeNames = autoGrowNodeNames(autoGrow, strings);
      podInformer = new Informer<PodClaimUsage>({
        listWatcher: kube.listWatcher(Resources.pods),
        log: informerLog,
        resyncPeriodMs,
        skippedObjects: metrics.informerObjectsSkipped,
        fieldSelector: nodeLocal?.podFieldSelector,
        transform: (obj, key) => toPodClaimUsage(obj, key, usage && ((claim) => usage.intern(claim)), nodeNames),
      });
      informers.push(informerRunnable('pod-informer', podInformer));
    }
    const slowSet = new SlowSet<string>({ retentionMs: config.retryIntervalMaxMs, clock });
    slowSets.push(slowSet);
    const reconciler = new ResizeReconciler({
      resizer,
      pvcs: pvcs.store,
      pvs: pvs.store,
      api,
      events: resizeEvents,
      gates,
      slowSet,
      claimUsage,
      keyLock,
      clock,
      log,
    });
    controllers.push(
      new ResizeController({
        pvcInformer: pvcs,
        pvInformer: pvs,
        podInformer,
        claimUsage,
        queue: resizeQueue,
        reconciler,
        workers: config.workers,
        controllerName: resizer.name,
        log,
      }),
    );
  }

  if (backends.canModify && gates.volumeAttributesClass) {
    // §1 step 18: the modify controller, with its own queue (same name and rate-limiter shape as
    // the resize controller's) and slow set, sharing the PVC/PV informers and the
    // KeyLock with the resize controller (see src/modify/reconcile.ts for why the lock).
    const vacs = new Informer<VolumeAttributesClass>({
      listWatcher: kube.listWatcher(Resources.volumeAttributesClasses),
      log: informerLog,
      resyncPeriodMs,
      skippedObjects: metrics.informerObjectsSkipped,
      transform: forCache<VolumeAttributesClass>(strings),
    });
    informers.push(informerRunnable('vac-informer', vacs));
    const slowSet = new SlowSet<string>({ retentionMs: config.retryIntervalMaxMs, clock });
    slowSets.push(slowSet);
    const modifyLog = log;
    const reconciler = new ModifyReconciler({
      modifier: new CsiModifier({ driverName, csi, secrets: kube, extraModifyMetadata: config.extraModifyMetadata, timeoutMs: config.modifyTimeoutMs }),
      pvcs: pvcs.store,
      pvs: pvs.store,
      classes: { get: (name) => vacs.store.get(name) },
      api,
      events: modifyEvents,
      slowSet,
      keyLock,
      clock,
      log: modifyLog,
      scope,
    });
    controllers.push(
      new ModifyController({
        pvcInformer: pvcs,
        pvInformer: pvs,
        vacInformer: vacs,
        queue: newQueue(),
        reconciler,
        workers: config.workers,
        controllerName: driverName,
        log: modifyLog,
      }),
    );
  }

  const autoGrowWiring =
    autoGrow && resizer && resizeQueue && podInformer
      ? buildAutoGrow({
          config,
          clientConfig,
          kube,
          pvcs,
          pvs,
          pods: podInformer,
          resizer,
          resizeQueue,
          keyLock,
          events: newEventRecorder(),
          strings,
          clock,
          log,
          metrics,
        })
      : undefined;
  if (autoGrowWiring) {
    controllers.push(autoGrowWiring.controller);
    for (const { name, informer } of autoGrowWiring.informers) informers.push(informerRunnable(name, informer));
  }

  // The resize-state gauges (§5.4) read the caches the controllers keep; a changed request
  // starts a PVC's clock.
  const resizeCensus = new ResizeStateCensus({
    driverName,
    pvcs: pvcs.store,
    pvs: pvs.store,
    requeues: (key) => resizeQueue?.numRequeues(key) ?? 0,
    scope,
  });
  registerResizeStateMetrics({ registry: metrics.registry, snapshot: () => resizeCensus.count() });
  pvcs.addEventHandler({
    update: (before, after) => {
      try {
        if (requestedBytes(before) !== requestedBytes(after)) resizeCensus.requestChanged(after);
      } catch {
        // a malformed quantity is the controller's to report
      }
    },
  });

  const closers: (() => void)[] = [() => resizeEvents.close(), () => modifyEvents.close(), () => csi.close(), () => kube.close()];
  if (autoGrowWiring) closers.unshift(() => autoGrowWiring.close());
  /** Another client of the same API server, with its own rate limiter (startApp has checked the flags). */
  const newClient = (purpose: string, minBurst = 0) => {
    const rateLimit = clientRateLimit(config.kubeApiQps, config.kubeApiBurst);
    return new HttpKubeClient({
      kubeConfig: clientConfig,
      qps: rateLimit.qps,
      burst: Math.max(rateLimit.burst, minBurst),
      userAgent: `csi-resizer/${purpose}`,
      ...(deps.env ? { env: deps.env } : {}),
    });
  };

  return {
    driverName,
    async run(signal: AbortSignal, cancelSignal: AbortSignal = signal): Promise<void> {
      for (const set of slowSets) set.start();
      try {
        // Informers keep the caches fresh until the controllers have drained (or are cancelled).
        const caches = linkedSignal(cancelSignal);
        try {
          const informersDone = Promise.all(informers.map((r) => runLogged(r, caches.signal, caches.signal, log)));
          Promise.all(informers.map((r) => r.waitForSync(caches.signal))).then(cachesSynced, () => {});
          await Promise.all(controllers.map((r) => runLogged(r, signal, cancelSignal, log))).finally(() => caches.abort());
          await informersDone;
        } finally {
          caches.dispose();
        }
      } finally {
        for (const set of slowSets) set.stop();
      }
    },
    onFatal(listener: (err: Error) => void): void {
      csi.onFatal(listener);
    },
    whenCachesSynced(signal: AbortSignal): Promise<void> {
      return abortable(synced, signal);
    },
    async checkPermissions(signal: AbortSignal): Promise<void> {
      // Its own client (and rate limiter), so its dozen reviews never take the tokens the first
      // resizes need.
      const client = newClient('permission-check', 20);
      try {
        await checkPermissions(
          client,
          {
            pods: resizer !== undefined && (config.handleVolumeInUseError || autoGrow),
            volumeAttributesClasses: backends.canModify && gates.volumeAttributesClass,
            leaseNamespace: config.leaderElection ? leaseNamespace(config.leaderElectionNamespace) : undefined,
            node: config.nodeDeployment,
            ...(autoGrowWiring ? { autoGrow: { kubelets: autoGrowWiring.readsKubelets } } : {}),
          },
          log,
          signal,
        );
      } finally {
        client.close();
      }
    },
    createElector(callbacks: LeaderCallbacks): Elector {
      // Its own client and rate limiter, so controller traffic never starves lease renewals.
      let client: HttpKubeClient;
      try {
        client = newClient('leader-election');
      } catch (err) {
        throw new StartupError('Failed to create leaderelection client', 1, { cause: err });
      }
      closers.push(() => client.close());
      const name = leaseNameForDriver(driverName);
      const namespace = leaseNamespace(config.leaderElectionNamespace);
      const identity = leaderIdentity();
      let elector: LeaderElector;
      try {
        elector = new LeaderElector({
          client,
          namespace,
          name,
          identity,
          leaseDurationMs: config.leaderElectionLeaseDurationMs,
          renewDeadlineMs: config.leaderElectionRenewDeadlineMs,
          retryPeriodMs: config.leaderElectionRetryPeriodMs,
          labels: { ...config.leaderElectionLabels },
          releaseOnCancel: gates.releaseLeaderElectionOnExit,
          log,
          metrics,
          callbacks,
        });
      } catch (err) {
        // client-go's RunOrDie panics on these settings, so the Go sidecar exits 2.
        if (err instanceof LeaderElectionConfigError) throw new StartupError('Invalid leader election configuration', 2, { cause: err });
        throw new StartupError('Invalid leader election configuration', 1, { cause: err });
      }
      log.info('Leader election enabled', { lease: `${namespace}/${name}`, identity });
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

interface InformerRunnable extends Runnable {
  waitForSync(signal: AbortSignal): Promise<void>;
}

/** `run` replaces the informer's own run (e.g. to start it after another informer's sync). */
function informerRunnable<T extends KubeObject>(name: string, informer: Informer<T>, run?: (signal: AbortSignal) => Promise<void>): InformerRunnable {
  return { name, run: run ?? ((signal) => informer.run(signal)), waitForSync: (signal) => informer.waitForSync(signal) };
}

async function runLogged(runnable: Runnable, signal: AbortSignal, cancelSignal: AbortSignal, log: Logger): Promise<void> {
  try {
    await runnable.run(signal, cancelSignal);
  } catch (err) {
    if (signal.aborted) return;
    log.error('Component stopped with an error', { component: runnable.name, err });
    throw err;
  }
}
