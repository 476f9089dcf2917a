// The auto-grow flags (docs/auto-grow.md): ours, not upstream's, so -h lists them beside its
// flags and the help comparison leaves them out. The kubelet flags take metrics-server's names
// (--kubelet-insecure-tls, --kubelet-certificate-authority, --kubelet-preferred-address-types), so
// an operator who set them up for metrics-server recognises them. Every bad value is reported at
// once, in one error, as the rest of the command line is.
import { parseQuantity } from '../model/quantity.js';
import type { FlagSet } from './go-flags.js';

/** Where usage comes from: each node's kubelet, or a Prometheus server that scrapes them. */
export type UsageSourceFlag = { readonly kind: 'kubelet' } | { readonly kind: 'prometheus'; readonly url: string };

export interface AutoGrowFlags {
  /** --auto-grow: the auto-grow controller runs (off by default). */
  readonly enabled: boolean;
  readonly intervalMs: number;
  /** The cooldown of a claim without its own annotation. */
  readonly cooldownMs: number;
  /** The minimum step of a claim without its own annotation. */
  readonly minStepBytes: bigint;
  /** Dry-run for a claim without its own annotation. */
  readonly dryRun: boolean;
  readonly usageSource: UsageSourceFlag;
  /** Bound on one kubelet's answer, or on one Prometheus query. */
  readonly usageTimeoutMs: number;
  /** Kubelets asked at once. */
  readonly concurrency: number;
  /** The CA of the kubelets' serving certificates; '' means the kubeconfig's. */
  readonly kubeletCaFile: string;
  readonly kubeletInsecureTls: boolean;
  readonly kubeletPreferredAddressTypes: readonly string[];
}

/** metrics-server's address types, in its default order. */
const ADDRESS_TYPES = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'] as const;

/** Defines the auto-grow flags on `flags` and returns a function that reads and checks them. */
export function defineAutoGrowFlags(flags: FlagSet): () => AutoGrowFlags {
  const enabled = flags.bool(
    'auto-grow',
    false,
    "Raise the storage request of claims that opt in (StorageClass annotation resize.topolvm.io/enabled, claim annotation resize.topolvm.io/storage_limit) before their filesystem fills up, from the usage kubelet measures. Acts only on this driver's claims, only while this replica leads (with --node-deployment: on this node's claims). See docs/auto-grow.md.",
  );
  const interval = flags.durationMs('auto-grow-interval', 60_000, 'How often auto-grow reads the usage of the opted-in claims that pods mount.');
  const cooldown = flags.durationMs(
    'auto-grow-cooldown',
    (8 * 60 + 10) * 60_000,
    'The least time between two grows of one claim, unless the claim sets auto-grow.csi-resizer.io/cooldown.',
  );
  const minStep = flags.string(
    'auto-grow-min-step',
    '1Gi',
    'The least one grow adds (a quantity; 0 gives pvc-autoresizer sizes), unless the claim sets auto-grow.csi-resizer.io/min-step.',
  );
  const dryRun = flags.bool(
    'auto-grow-dry-run',
    false,
    'Say in an event what auto-grow would do and write nothing, unless the claim sets auto-grow.csi-resizer.io/dry-run.',
  );
  const source = flags.string(
    'auto-grow-usage-source',
    'kubelet',
    "Where auto-grow reads usage: 'kubelet' (GET /stats/summary on each node that mounts an opted-in claim; needs get on nodes/stats) or the http(s) URL of a Prometheus server that scrapes the kubelets' kubelet_volume_stats_* metrics.",
  );
  const timeout = flags.durationMs('auto-grow-usage-timeout', 10_000, "Bound on one kubelet's answer, or on one Prometheus query.");
  const concurrency = flags.int('auto-grow-usage-concurrency', 16, 'How many kubelets auto-grow asks at once.');
  const caFile = flags.string(
    'kubelet-certificate-authority',
    '',
    "Path to the CA file that signed the kubelets' serving certificates (auto-grow). Default: the CA of the kubeconfig or service account.",
  );
  const insecure = flags.bool('kubelet-insecure-tls', false, "Do not verify the kubelets' serving certificates (auto-grow). For testing only.");
  const addressTypes = flags.string(
    'kubelet-preferred-address-types',
    ADDRESS_TYPES.join(','),
    "The node address types auto-grow tries, in order, to reach a kubelet (metrics-server's list and order).",
  );

  return () => {
    const problems: string[] = [];
    let minStepBytes = 0n;
    try {
      minStepBytes = parseQuantity(minStep.value).toBytes();
      if (minStepBytes < 0n) problems.push(`--auto-grow-min-step=${minStep.value}: must not be negative`);
    } catch (err) {
      problems.push(`--auto-grow-min-step=${minStep.value}: not a quantity (${err instanceof Error ? err.message : String(err)}); use e.g. 1Gi or 0`);
    }
    const usageSource = readUsageSource(source.value, problems);
    if (interval.value <= 0) problems.push('--auto-grow-interval: must be positive, e.g. 1m');
    if (cooldown.value < 0) problems.push('--auto-grow-cooldown: must not be negative');
    if (timeout.value <= 0) problems.push('--auto-grow-usage-timeout: must be positive, e.g. 10s');
    if (concurrency.value < 1) problems.push(`--auto-grow-usage-concurrency=${concurrency.value}: must be 1 or more`);
    const types = addressTypes.value.split(',').map((t) => t.trim());
    const unknown = types.filter((t) => !(ADDRESS_TYPES as readonly string[]).includes(t));
    if (unknown.length > 0 || types.length === 0) {
      problems.push(
        `--kubelet-preferred-address-types=${addressTypes.value}: ${unknown.map((t) => JSON.stringify(t)).join(', ')} not among ${ADDRESS_TYPES.join(', ')}`,
      );
    }
    if (problems.length > 0) throw new Error(`invalid auto-grow flags: ${problems.join('; ')}`);
    return Object.freeze({
      enabled: enabled.value,
      intervalMs: interval.value,
      cooldownMs: cooldown.value,
      minStepBytes,
      dryRun: dryRun.value,
      usageSource,
      usageTimeoutMs: timeout.value,
      concurrency: concurrency.value,
      kubeletCaFile: caFile.value,
      kubeletInsecureTls: insecure.value,
      kubeletPreferredAddressTypes: Object.freeze(types),
    });
  };
}

function readUsageSource(value: string, problems: string[]): UsageSourceFlag {
  if (value === 'kubelet') return { kind: 'kubelet' };
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    problems.push(`--auto-grow-usage-source=${value}: use kubelet or the http(s) URL of a Prometheus server`);
    return { kind: 'kubelet' };
  }
  return { kind: 'prometheus', url: value };
}
