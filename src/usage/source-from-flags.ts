// The usage source the auto-grow flags choose (docs/auto-grow.md, "Where usage comes from"): the
// kubelets, with the resizer's own credentials and the kubelet TLS flags, or a Prometheus server.
// One place, so the controller, `doctor` and `explain` read usage the same way.
import type { AutoGrowFlags } from '../flags/auto-grow-flags.js';
import type { ClientConfig } from '../kube/wire/kubeconfig.js';
import { KubeletUsageSource } from './kubelet-source.js';
import { PrometheusUsageSource } from './prometheus-source.js';
import type { VolumeUsageSource } from './volume-usage.js';

export interface ChosenUsageSource {
  readonly source: VolumeUsageSource;
  /** Whether the source reaches each node, so it needs the Node's addresses (and nodes/stats). */
  readonly readsKubelets: boolean;
  /** For logs: "kubelet" or the Prometheus URL without credentials. */
  readonly description: string;
  /** Closes its kept-alive connections. */
  close(): void;
}

/** Throws for a Prometheus URL the source refuses (the flags have checked its scheme). */
export function usageSourceFromFlags(flags: AutoGrowFlags, kubeConfig: ClientConfig): ChosenUsageSource {
  if (flags.usageSource.kind === 'prometheus') {
    const source = new PrometheusUsageSource({ url: flags.usageSource.url, timeoutMs: flags.usageTimeoutMs });
    const url = new URL(flags.usageSource.url);
    return { source, readsKubelets: false, description: `prometheus ${url.protocol}//${url.host}${url.pathname}`, close: () => source.close() };
  }
  const source = new KubeletUsageSource({
    kubeConfig,
    ...(flags.kubeletCaFile !== '' ? { caFile: flags.kubeletCaFile } : {}),
    insecureSkipTlsVerify: flags.kubeletInsecureTls,
    preferredAddressTypes: flags.kubeletPreferredAddressTypes,
    timeoutMs: flags.usageTimeoutMs,
    concurrency: flags.concurrency,
  });
  return { source, readsKubelets: true, description: 'kubelet', close: () => source.close() };
}
