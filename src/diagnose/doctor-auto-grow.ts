// `csi-resizer doctor --auto-grow`: the auto-grow check (docs/auto-grow.md, "Explain and doctor").
// Counts the claims of the driver that opt in, then asks the configured usage source for the
// usage of one that a scheduled pod mounts (trying a few nodes): one kubelet that answers is enough
// to show that the address, the port, the TLS trust and the nodes/stats permission all work.
// The permissions themselves are in doctor's RBAC check.
import { messageOf } from '../base/errors.js';
import { readPolicy, type StorageClassView } from '../autogrow/policy.js';
import type { Config } from '../flags/config.js';
import type { HttpKubeClient } from '../kube/wire/http-client.js';
import { isForbidden } from '../kube/api/errors.js';
import type { ClientConfig } from '../kube/wire/kubeconfig.js';
import { Resources } from '../kube/api/resources.js';
import type { Node, Pv, Pvc } from '../model/objects.js';
import { pvcKey } from '../model/pvc.js';
import { formatBytes } from '../model/quantity.js';
import { canSupport } from '../model/volume-scope.js';
import { usageSourceFromFlags } from '../usage/source-from-flags.js';
import type { Check } from './doctor-report.js';

interface PodLike {
  metadata: { namespace?: string };
  status?: { phase?: string };
  spec?: { nodeName?: string; volumes?: Array<{ persistentVolumeClaim?: { claimName?: string } }> };
}

const NAME = 'Auto-grow';
const NODES_TRIED = 3;

export async function checkAutoGrow(
  o: { kube: HttpKubeClient; kubeConfig: ClientConfig; config: Config; driver: string; pvs: Pv[]; pvcs: Pvc[] },
  signal: AbortSignal,
): Promise<Check> {
  const flags = o.config.autoGrow;
  let classes: Map<string, StorageClassView>;
  try {
    classes = new Map(((await o.kube.listStorageClasses(signal)) as unknown as StorageClassView[]).map((sc) => [sc.metadata.name, sc]));
  } catch (err) {
    if (!isForbidden(err)) throw err;
    return { name: NAME, status: 'fail', summary: 'this identity may not list StorageClasses, which auto-grow reads (deploy/kubernetes/auto-grow)' };
  }
  const defaults = { cooldownMs: flags.cooldownMs, minStepBytes: flags.minStepBytes, dryRun: flags.dryRun };
  const pvByName = new Map(o.pvs.map((pv) => [pv.metadata.name, pv]));
  const optedIn = new Set(
    o.pvcs
      .filter((pvc) => {
        const pv = pvc.spec.volumeName ? pvByName.get(pvc.spec.volumeName) : undefined;
        if (!pv || !canSupport(o.driver, pv, pvc)) return false;
        return readPolicy(pvc, classes.get(pvc.spec.storageClassName ?? ''), defaults).kind !== 'notOptedIn';
      })
      .map(pvcKey),
  );
  if (optedIn.size === 0) {
    return {
      name: NAME,
      status: 'warn',
      summary: `no claim of ${o.driver} opts in (StorageClass annotation resize.topolvm.io/enabled: "true" and claim annotation resize.topolvm.io/storage_limit)`,
    };
  }
  const pods = (await o.kube.listWatcher(Resources.pods).list({}, signal)).items as unknown as PodLike[];
  const mounted = mountedClaims(pods, optedIn);
  if (mounted.length === 0) {
    return { name: NAME, status: 'skip', summary: `${optedIn.size} claim(s) opt in, none mounted by a scheduled pod: no kubelet measures them yet` };
  }
  // One answer is enough; a few nodes are tried so one node that is down does not hide the rest.
  const failures: string[] = [];
  for (const claim of mounted.slice(0, NODES_TRIED)) {
    const result = await readOne(o, claim, signal);
    if (result.ok) {
      const summary = `${result.text} (${optedIn.size} claim(s) opt in)`;
      return failures.length === 0 ? { name: NAME, status: 'ok', summary } : { name: NAME, status: 'warn', summary, details: failures };
    }
    failures.push(result.text);
  }
  return { name: NAME, status: 'fail', summary: `no usage could be read (${optedIn.size} claim(s) opt in)`, details: failures };
}

/** One mounted opted-in claim per node, in the order the pods are listed. */
function mountedClaims(pods: PodLike[], optedIn: ReadonlySet<string>): { key: string; node: string }[] {
  const byNode = new Map<string, string>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName ?? '';
    if (node === '' || byNode.has(node) || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') continue;
    for (const v of pod.spec?.volumes ?? []) {
      const key = `${pod.metadata.namespace ?? ''}/${v.persistentVolumeClaim?.claimName ?? ''}`;
      if (optedIn.has(key)) {
        byNode.set(node, key);
        break;
      }
    }
  }
  return [...byNode].map(([node, key]) => ({ key, node }));
}

async function readOne(
  o: { kube: HttpKubeClient; kubeConfig: ClientConfig; config: Config },
  mounted: { key: string; node: string },
  signal: AbortSignal,
): Promise<{ ok: boolean; text: string }> {
  const chosen = usageSourceFromFlags(o.config.autoGrow, o.kubeConfig);
  const where = chosen.readsKubelets ? `kubelet on node ${mounted.node}` : chosen.description;
  try {
    const node = chosen.readsKubelets ? ((await o.kube.getNode(mounted.node, signal)) as Node) : { metadata: { name: mounted.node } };
    const slash = mounted.key.indexOf('/');
    const claim = { namespace: mounted.key.slice(0, slash), name: mounted.key.slice(slash + 1) };
    const usage = (await chosen.source.readUsage([{ node, claims: [claim] }], signal)).claims.get(mounted.key);
    if (usage?.kind === 'sampled') {
      const u = usage.usage;
      return {
        ok: true,
        text: `${where} answered: ${mounted.key} has ${formatBytes(u.availableBytes, 'BinarySI')} of ${formatBytes(u.capacityBytes, 'BinarySI')} free`,
      };
    }
    return { ok: false, text: `${where}: no usage of ${mounted.key}: ${usage?.message ?? 'no answer'}` };
  } catch (err) {
    return { ok: false, text: `${where}: ${messageOf(err)}` };
  } finally {
    chosen.close();
  }
}
