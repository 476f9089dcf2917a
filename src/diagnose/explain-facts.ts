// `csi-resizer explain NAMESPACE/PVC`, the reading half: gathers the claim, its PV, StorageClass,
// VolumeAttributesClass, the pods that use it and its events, asks the driver what it can do, and
// hands the facts to diagnose/explain-decision.ts for the decision. Read-only. A fact it cannot read (no
// driver socket, no permission to list pods) is left unknown and the explanation says less.
import { messageOf } from '../base/errors.js';
import { discoverCapabilities, GrpcCsiClient } from '../csi/client.js';
import { ApiClientFactory, ClientPurpose } from '../kube/client-factory.js';
import { isNotFound } from '../kube/errors.js';
import { Resources } from '../kube/resources.js';
import type { Pv, Pvc, VolumeAttributesClass } from '../model/objects.js';
import type { Logger } from '../observability/logger.js';
import { createMetrics } from '../observability/metrics.js';
import { explainClaim, type DriverFacts, type EventFacts, type Explanation, type StorageClassFacts } from './explain-decision.js';
import type { Config } from '../flags/config.js';

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
  spec?: { volumes?: Array<{ persistentVolumeClaim?: { claimName?: string } }> };
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
  const kube = (await ApiClientFactory.load(config)).create(ClientPurpose.Explain);
  try {
    const pvc = await orMissing<Pvc>(() => kube.getPvc(namespace, name, signal));
    const pv = pvc?.spec.volumeName ? await orMissing<Pv>(() => kube.getPv(pvc.spec.volumeName!, signal)) : null;

    let storageClass: StorageClassFacts | null | undefined;
    const scName = pvc?.spec.storageClassName;
    if (scName) {
      const sc = await orMissing<{ metadata: { name: string }; provisioner?: string; allowVolumeExpansion?: boolean }>(() =>
        kube.getStorageClass(scName, signal),
      );
      storageClass = sc ? { name: sc.metadata.name, provisioner: sc.provisioner ?? '', allowVolumeExpansion: sc.allowVolumeExpansion === true } : null;
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
    try {
      const pods = (await kube.listWatcher(Resources.pods).list({ namespace }, signal)).items as unknown as PodLike[];
      usedBy = pods
        .filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
        .filter((p) => p.spec?.volumes?.some((v) => v.persistentVolumeClaim?.claimName === name))
        .map((p) => p.metadata.name);
    } catch (err) {
      unknown.push(`pods using the claim: ${messageOf(err)}`);
    }

    const driver = await driverFacts(options, pv, unknown, signal);
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
