// `csi-resizer explain NAMESPACE/PVC`, the reading half: gathers the claim, its PV, StorageClass,
// VolumeAttributesClass, the pods that use it and its events, asks the driver what it can do, and
// hands the facts to diagnose/explain-decision.ts for the decision. Read-only. A fact it cannot read (no
// driver socket, no permission to list pods) is left unknown and the explanation says less.
import { messageOf } from '../base/errors.js';
import { discoverCapabilities, GrpcCsiClient } from '../csi/client.js';
import { ApiClientFactory, ClientPurpose } from '../kube/wire/client-factory.js';
import { isNotFound } from '../kube/api/errors.js';
import { Resources } from '../kube/api/resources.js';
import type { Node, Pv, Pvc, VolumeAttributesClass } from '../model/objects.js';
import type { Logger } from '../observability/log/logger.js';
import { createMetrics } from '../observability/metrics.js';
import { explainClaim, type DriverFacts, type EventFacts, type Explanation, type StorageClassFacts } from './explain-decision.js';
import type { Config } from '../flags/config.js';
import type { HttpKubeClient } from '../kube/wire/http-client.js';
import type { ClientConfig } from '../kube/wire/kubeconfig.js';
import { readPolicy, type StorageClassView } from '../autogrow/policy.js';
import { usageSourceFromFlags } from '../usage/source-from-flags.js';
import type { AutoGrowFacts } from './explain-auto-grow.js';

export class ExplainInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExplainInputError';
  }
}

interface KubeEvent {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string | null;
  eventTime?: string | null;
  firstTimestamp?: string | null;
  series?: { lastObservedTime?: string; count?: number };
}

interface PodLike {
  metadata: { name: string };
  status?: { phase?: string };
  spec?: { nodeName?: string; volumes?: Array<{ persistentVolumeClaim?: { claimName?: string } }> };
}

/** NAMESPACE/NAME, as kubectl prints keys. */
export function parseClaimKey(raw: string): { namespace: string; name: string } {
  const parts = raw.split('/');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') {
    throw new ExplainInputError(`expected NAMESPACE/PVC, got ${JSON.stringify(raw)}`);
  }
  return { namespace: parts[0]!, name: parts[1]! };
}

async function orMissing<T>(read: () => Promise<unknown>): Promise<T | null> {
  try {
    return (await read()) as T;
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

function eventTime(e: KubeEvent): Date | undefined {
  const raw = e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp;
  const t = raw ? Date.parse(raw) : NaN;
  return Number.isFinite(t) ? new Date(t) : undefined;
}

export interface ExplainResult {
  key: string;
  explanation: Explanation;
  /** Facts that could not be read, said once each. */
  unknown: string[];
}

export async function runExplain(
  options: { config: Config; log: Logger; claim: string; now?: () => Date; csiConnectTimeoutMs?: number },
  signal: AbortSignal,
): Promise<ExplainResult> {
  const { config } = options;
  const { namespace, name } = parseClaimKey(options.claim);
  const key = `${namespace}/${name}`;
  const unknown: string[] = [];
  const clients = await ApiClientFactory.load(config);
  const kubeConfig = clients.clientConfig;
  const kube = clients.create(ClientPurpose.Explain);
  try {
    const pvc = await orMissing<Pvc>(() => kube.getPvc(namespace, name, signal));
    const pv = pvc?.spec.volumeName ? await orMissing<Pv>(() => kube.getPv(pvc.spec.volumeName!, signal)) : null;

    let storageClass: StorageClassFacts | null | undefined;
    let classView: StorageClassView | undefined;
    const scName = pvc?.spec.storageClassName;
    if (scName) {
      const sc = await orMissing<StorageClassView & { provisioner?: string }>(() => kube.getStorageClass(scName, signal));
      storageClass = sc ? { name: sc.metadata.name, provisioner: sc.provisioner ?? '', allowVolumeExpansion: sc.allowVolumeExpansion === true } : null;
      classView = sc ?? undefined;
    }

    let attributesClass: VolumeAttributesClass | null | undefined;
    const vacName = pvc?.spec.volumeAttributesClassName;
    if (vacName) {
      try {
        attributesClass = await orMissing<VolumeAttributesClass>(() => kube.getVolumeAttributesClass(vacName, signal));
      } catch (err) {
        unknown.push(`VolumeAttributesClass ${vacName}: ${messageOf(err)}`);
      }
    }

    let events: EventFacts[] = [];
    try {
      const list = await kube.listWatcher(Resources.events).list(
        {
          namespace,
          fieldSelector: `involvedObject.kind=PersistentVolumeClaim,involvedObject.name=${name}`,
        },
        signal,
      );
      events = (list.items as unknown as KubeEvent[])
        .filter((e) => !pvc || (e as { involvedObject?: { uid?: string } }).involvedObject?.uid === pvc.metadata.uid)
        .map((e) => ({ type: e.type ?? '', reason: e.reason ?? '', message: e.message ?? '', at: eventTime(e), count: e.series?.count ?? e.count ?? 1 }))
        .sort((a, b) => (a.at?.getTime() ?? 0) - (b.at?.getTime() ?? 0));
    } catch (err) {
      unknown.push(`events: ${messageOf(err)}`);
    }

    let usedBy: string[] | undefined;
    let usingPods: PodLike[] = [];
    try {
      const pods = (await kube.listWatcher(Resources.pods).list({ namespace }, signal)).items as unknown as PodLike[];
      usingPods = pods
        .filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
        .filter((p) => p.spec?.volumes?.some((v) => v.persistentVolumeClaim?.claimName === name));
      usedBy = usingPods.map((p) => p.metadata.name);
    } catch (err) {
      unknown.push(`pods using the claim: ${messageOf(err)}`);
    }

    const driver = await driverFacts(options, pv, unknown, signal);
    const autoGrow = pvc ? await autoGrowFacts({ config, kubeConfig, kube, key, pvc, storageClass: classView, pods: usingPods, unknown }, signal) : undefined;
    const explanation = explainClaim({
      key,
      pvc: pvc ?? undefined,
      pv: pv ?? undefined,
      storageClass,
      attributesClass,
      events,
      driver,
      gates: { volumeAttributesClass: config.gates.volumeAttributesClass },
      usedBy,
      ...(autoGrow ? { autoGrow } : {}),
      now: (options.now ?? (() => new Date()))(),
    });
    return { key, explanation, unknown };
  } finally {
    kube.close();
  }
}

async function driverFacts(
  options: { config: Config; log: Logger; csiConnectTimeoutMs?: number },
  pv: Pv | null,
  unknown: string[],
  signal: AbortSignal,
): Promise<DriverFacts> {
  const fallback = pv?.spec.csi?.driver ?? '';
  try {
    const csi = await GrpcCsiClient.start(
      {
        address: options.config.csiAddress,
        timeoutMs: options.config.timeoutMs,
        log: options.log,
        metrics: createMetrics(),
        connectTimeoutMs: options.csiConnectTimeoutMs ?? 5_000,
      },
      signal,
    );
    try {
      const caps = await discoverCapabilities(csi, signal);
      return {
        name: csi.driverName,
        controllerExpand: caps.controllerExpand,
        nodeExpand: caps.nodeExpand,
        modify: caps.controllerModify,
        offlineOnly: caps.volumeExpansion === 'offline',
      };
    } finally {
      csi.close();
    }
  } catch (err) {
    unknown.push(`the CSI driver at ${options.config.csiAddress} (assuming the PV's driver ${fallback || 'unknown'}, capabilities unknown): ${messageOf(err)}`);
    return { name: fallback, controllerExpand: undefined, nodeExpand: undefined, modify: undefined, offlineOnly: undefined };
  }
}

/**
 * What auto-grow would read of the claim: its class's opt-in and, with --auto-grow, its usage from
 * the configured source (each node whose pods mount it). Nothing is read for a claim that does not opt in.
 */
async function autoGrowFacts(
  o: {
    config: Config;
    kubeConfig: ClientConfig;
    kube: HttpKubeClient;
    key: string;
    pvc: Pvc;
    storageClass: StorageClassView | undefined;
    pods: PodLike[];
    unknown: string[];
  },
  signal: AbortSignal,
): Promise<AutoGrowFacts> {
  const flags = o.config.autoGrow;
  const defaults = { cooldownMs: flags.cooldownMs, minStepBytes: flags.minStepBytes, dryRun: flags.dryRun };
  const base = { enabled: flags.enabled, storageClass: o.storageClass, usage: undefined, defaults };
  if (!flags.enabled || readPolicy(o.pvc, o.storageClass, defaults).kind === 'notOptedIn') return base;
  const nodes = [...new Set(o.pods.map((p) => p.spec?.nodeName ?? '').filter((n) => n !== ''))];
  if (nodes.length === 0) return { ...base, usageNotRead: 'no scheduled pod mounts the claim: kubelet measures only mounted volumes' };
  const chosen = usageSourceFromFlags(flags, o.kubeConfig);
  try {
    const claim = { namespace: o.pvc.metadata.namespace ?? '', name: o.pvc.metadata.name };
    const asked = await Promise.all(
      nodes.map(async (name) => ({ node: chosen.readsKubelets ? ((await o.kube.getNode(name, signal)) as Node) : { metadata: { name } }, claims: [claim] })),
    );
    const report = await chosen.source.readUsage(asked, signal);
    return { ...base, usage: report.claims.get(o.key) };
  } catch (err) {
    o.unknown.push(`the claim's usage (${chosen.description}): ${messageOf(err)}`);
    return { ...base, usageNotRead: 'its usage could not be read' };
  } finally {
    chosen.close();
  }
}
