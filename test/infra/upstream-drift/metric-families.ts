// The metric families each sidecar registers at start: both run against the same real API server
// and the same CSI driver, each with its own Lease, with --http-endpoint, and /metrics is read once
// both lead and their scrapes have stopped gaining families.
//
// The driver is a mock driver of its own with a name no claim in the cluster uses, so neither
// sidecar has work: what they show is what start-up registers, not what some left-over claim made
// happen in one of them. Both use the admin identity, so no RBAC refusal changes what they do.
//
// Families without a sample: Go's Prometheus client prints a family only once it has a sample (a
// vector without children prints nothing), prom-client prints every registered family, with its
// HELP and TYPE lines and no sample. So a family ours shows without a sample and upstream does not
// show at all cannot be compared from a scrape: it is reported apart ("unsampled in ours") and not
// counted as a difference. Every other family that one side shows and the other does not is one.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { freePort } from '../../cluster/cluster.js';
import { createNamespace, uniqueName } from '../../cluster/fixtures.js';
import { startMockDriver } from '../../cluster/mock-driver.js';
import { spawnLogged, tail } from '../../cluster/process.js';
import { adminClients, type ClusterHandle } from '../../cluster/test-cluster.js';
import { eventually, StopPolling } from '../../support/eventually.js';
import { sidecarEnv, type Sidecar } from './sidecars.js';

export interface MetricFamily {
  readonly name: string;
  /** counter, gauge, histogram, summary, untyped. */
  readonly type: string;
  readonly help: string;
  readonly samples: number;
}

/** The families of one scrape (text exposition format), by name. */
export function parseScrape(text: string): Map<string, MetricFamily> {
  const families = new Map<string, MetricFamily>();
  for (const family of parsePrometheusTextFormat(text)) {
    families.set(family.name, { name: family.name, type: family.type.toLowerCase(), help: family.help, samples: family.metrics.length });
  }
  return families;
}

export interface StartScrape {
  readonly families: ReadonlyMap<string, MetricFamily>;
  /** The scrape as read, for the report's reader. */
  readonly text: string;
}

/** One sidecar's process, serving /metrics on a loopback port. */
interface Running {
  readonly sidecar: Sidecar;
  readonly url: string;
  readonly logPath: string;
  readonly exited: () => boolean;
  stop(): Promise<void>;
}

const STABLE_SCRAPES = 3;
const SCRAPE_INTERVAL_MS = 500;

/** Starts every sidecar at once against the cluster and returns each one's start-up scrape, in order. */
export async function scrapeAtStart(cluster: ClusterHandle, sidecars: readonly Sidecar[], timeoutMs = 90_000): Promise<StartScrape[]> {
  const dir = mkdtempSync('/tmp/rz-drift-');
  const driver = await startMockDriver({ dir, name: `${uniqueName('drift')}.csi.k8s.io` });
  const running: Running[] = [];
  const admin = adminClients(cluster);
  const namespaces: string[] = [];
  try {
    for (const [index, sidecar] of sidecars.entries()) {
      const namespace = await createNamespace(admin, 'rz-drift');
      namespaces.push(namespace);
      const port = await freePort();
      const logPath = join(dir, `sidecar-${index}.log`);
      const proc = spawnLogged({
        name: sidecar.label,
        command: sidecar.command,
        args: [
          ...sidecar.leadingArgs,
          `--kubeconfig=${cluster.adminKubeconfigPath}`,
          `--csi-address=${driver.address}`,
          `--http-endpoint=127.0.0.1:${port}`,
          '--leader-election',
          `--leader-election-namespace=${namespace}`,
          '--v=2',
        ],
        logPath,
        env: sidecarEnv(),
      });
      running.push({ sidecar, url: `http://127.0.0.1:${port}/metrics`, logPath, exited: () => proc.hasExited(), stop: () => proc.stop() });
    }
    return await Promise.all(running.map((r) => settledScrape(r, timeoutMs)));
  } finally {
    await Promise.all(running.map((r) => r.stop()));
    await driver.stop();
    // The Leases go with their namespaces.
    await Promise.all(namespaces.map((name) => admin.core.deleteNamespace({ name }).catch(() => undefined)));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function scrape(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
  return res.text();
}

/**
 * The scrape once the sidecar leads (leader_election_master_status 1: its controllers are being
 * started) and its family names stayed the same over STABLE_SCRAPES scrapes in a row.
 */
async function settledScrape(r: Running, timeoutMs: number): Promise<StartScrape> {
  let seen: string[] = [];
  let sameFor = 0;
  return eventually(
    `${r.sidecar.label} to lead and its /metrics families to settle`,
    async () => {
      if (r.exited()) throw new StopPolling(`${r.sidecar.label} exited during start-up:\n${tail(r.logPath, 30)}`);
      const text = await scrape(r.url);
      const families = parseScrape(text);
      const leading = parsePrometheusTextFormat(text)
        .find((f) => f.name === 'leader_election_master_status')
        ?.metrics.some((m) => (m as { value?: string }).value === '1');
      if (!leading) return undefined;
      const names = [...families.keys()].sort();
      sameFor = names.join(',') === seen.join(',') ? sameFor + 1 : 1;
      seen = names;
      return sameFor >= STABLE_SCRAPES ? { families, text } : undefined;
    },
    timeoutMs,
    SCRAPE_INTERVAL_MS,
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}\nlast log lines of ${r.sidecar.label}:\n${tail(r.logPath, 30)}`, { cause: err });
  });
}
