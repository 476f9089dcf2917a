// Where a node's kubelet answers, chosen as metrics-server chooses it: the first address of the
// first preferred type the Node reports (its --kubelet-preferred-address-types, default
// Hostname, InternalDNS, InternalIP, ExternalDNS, ExternalIP: overrides first, internal before
// external, names before IPs), and the port the kubelet reports in the Node's
// status.daemonEndpoints (10250, kubelet's default, when it reports none).
import { isIP } from 'node:net';
import type { Node } from '../model/objects.js';

export const DEFAULT_ADDRESS_TYPES: readonly string[] = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];
export const DEFAULT_KUBELET_PORT = 10250;

export type KubeletEndpoint = { readonly kind: 'ok'; readonly url: URL } | { readonly kind: 'noAddress'; readonly message: string };

/** The URL of `path` on the node's kubelet. */
export function kubeletUrl(node: Node, preferredTypes: readonly string[], path: string): KubeletEndpoint {
  const addresses = node.status?.addresses ?? [];
  for (const type of preferredTypes) {
    const found = addresses.find((a) => a.type === type && a.address !== '');
    if (found === undefined) continue;
    const reported = node.status?.daemonEndpoints?.kubeletEndpoint?.Port;
    const port = Number.isInteger(reported) && reported! > 0 && reported! < 65536 ? reported! : DEFAULT_KUBELET_PORT;
    const host = isIP(found.address) === 6 ? `[${found.address}]` : found.address;
    try {
      return { kind: 'ok', url: new URL(`https://${host}:${port}${path}`) };
    } catch {
      return { kind: 'noAddress', message: `node ${node.metadata.name}: address ${JSON.stringify(found.address)} (${type}) is not a host` };
    }
  }
  return { kind: 'noAddress', message: `node ${node.metadata.name} reports no address of the types ${preferredTypes.join(', ')}` };
}
