// The upstream drift check (docs/development.md, "Upstream drift"): upstream's Go csi-resizer at
// a version against ours, on what an operator sees of either without reading code: the flags of
// -h (names, type words, defaults, help texts), the feature gates (what -h lists, and what setting
// each one to true and to false does) and the metric families each registers at start. The
// differences are then held against the documented list (known-differences.ts).
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KNOWN_GATES } from '../../../src/flags/feature-gates.js';
import type { ClusterHandle } from '../../cluster/test-cluster.js';
import { compareFlags, compareGates, compareMetrics, type Difference, type SidecarFacts } from './compare.js';
import { tryGates } from './gate-probe.js';
import { parseGoUsage, splitGateHelp, type FlagUsage, type GateUsage } from './go-usage.js';
import { scrapeAtStart, type MetricFamily } from './metric-families.js';
import { oursSidecar, runToEnd, upstreamSidecar, type Sidecar } from './sidecars.js';

const execFileAsync = promisify(execFile);

export interface DriftResult {
  readonly version: string;
  readonly differences: Difference[];
  readonly unsampledInOursOnly: string[];
  readonly counts: {
    readonly flags: { readonly upstream: number; readonly ours: number };
    readonly gatesTried: number;
    readonly metrics: { readonly upstream: number; readonly ours: number };
  };
}

interface Usage {
  readonly flags: Map<string, FlagUsage>;
  readonly gateFlagProse: string;
  readonly listedGates: Map<string, GateUsage>;
}

/** -h of one sidecar: Go's flag package prints it to stderr and exits 0. */
async function usageOf(sidecar: Sidecar): Promise<Usage> {
  const { code, stdout, stderr } = await runToEnd(sidecar, ['-h']);
  if (code !== 0) throw new Error(`${sidecar.label} -h exited ${code}:\n${stderr}`);
  const flags = parseGoUsage(stderr || stdout);
  const gateFlag = flags.get('feature-gates');
  if (!gateFlag) throw new Error(`${sidecar.label} -h lists no -feature-gates`);
  const { prose, gates } = splitGateHelp(gateFlag.help);
  return { flags, gateFlagProse: prose, listedGates: gates };
}

const GO_ENV = { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod' };

/** A module's directory in the Go module cache (downloaded if missing: go install has usually done it). */
async function moduleDir(path: string, version: string): Promise<{ dir: string; goMod: string }> {
  const { stdout } = await execFileAsync('go', ['mod', 'download', '-json', `${path}@${version}`], { cwd: '/tmp', env: GO_ENV, maxBuffer: 16 << 20 });
  const info = JSON.parse(stdout) as { Dir?: string; GoMod?: string; Error?: string };
  if (!info.Dir || !info.GoMod) throw new Error(`go mod download ${path}@${version}: ${info.Error ?? 'no directory'}`);
  return { dir: info.Dir, goMod: info.GoMod };
}

const GATE_CONSTANT = /\b\w+\s+featuregate\.Feature\s*=\s*"(\w+)"/g;

function gateConstantsUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.go') || file.endsWith('_test.go')) continue;
    for (const m of readFileSync(join(dir, file), 'utf8').matchAll(GATE_CONSTANT)) found.push(m[1]!);
  }
  return found;
}

/**
 * Gate names declared in upstream's sources at `version`: its own pkg/features, and the gate
 * packages of the k8s.io/apiserver and k8s.io/component-base versions its go.mod selects (the
 * gates its `--feature-gates` inherits). -h hides GA and deprecated ones; these names are tried.
 */
async function upstreamSourceGates(version: string): Promise<string[]> {
  const resizer = await moduleDir('github.com/kubernetes-csi/external-resizer/v2', version);
  const goMod = readFileSync(resizer.goMod, 'utf8');
  const requirement = (path: string) => new RegExp(`^\\s*${path.replaceAll('.', '\\.')} (v\\S+)`, 'm').exec(goMod)?.[1];
  const dirs = [join(resizer.dir, 'pkg', 'features')];
  const apiserver = requirement('k8s.io/apiserver');
  if (apiserver) dirs.push(join((await moduleDir('k8s.io/apiserver', apiserver)).dir, 'pkg', 'features'));
  const componentBase = requirement('k8s.io/component-base');
  if (componentBase) {
    const dir = (await moduleDir('k8s.io/component-base', componentBase)).dir;
    dirs.push(join(dir, 'metrics', 'features'), join(dir, 'zpages', 'features'));
  }
  return dirs.flatMap(gateConstantsUnder);
}

/** Both sidecars' facts, then their differences. `cluster` is where both start for the metrics. */
export async function checkDrift(options: {
  version: string;
  cluster: () => Promise<ClusterHandle>;
  /**
   * More gate names to try: those of the documented list, so a gate neither -h lists nor
   * upstream's sources declare (one upstream removed, that ours still takes) is tried too.
   */
  moreGates?: readonly string[];
  progress?: (line: string) => void;
}): Promise<DriftResult> {
  const progress = options.progress ?? (() => {});
  const upstream = await upstreamSidecar(options.version, progress);
  const ours = oursSidecar();

  progress('reading -h of both');
  const [upstreamUsage, oursUsage] = await Promise.all([usageOf(upstream), usageOf(ours)]);
  const candidates = [
    ...new Set([
      ...upstreamUsage.listedGates.keys(),
      ...oursUsage.listedGates.keys(),
      ...KNOWN_GATES.keys(),
      ...(options.moreGates ?? []),
      ...(await upstreamSourceGates(options.version)),
    ]),
  ].sort();
  progress(`trying ${candidates.length} feature gates with true and with false on both`);
  const [upstreamTrials, oursTrials] = await Promise.all([tryGates(upstream, candidates), tryGates(ours, candidates)]);

  progress('starting both against the API server and a CSI driver for their metrics');
  const cluster = await options.cluster();
  const [upstreamScrape, oursScrape] = await scrapeAtStart(cluster, [upstream, ours]);

  const facts = (usage: Usage, trials: SidecarFacts['gateTrials'], metrics: ReadonlyMap<string, MetricFamily>): SidecarFacts => ({
    flags: usage.flags,
    gateFlagProse: usage.gateFlagProse,
    listedGates: usage.listedGates,
    gateTrials: trials,
    metrics,
  });
  const u = facts(upstreamUsage, upstreamTrials, upstreamScrape!.families);
  const o = facts(oursUsage, oursTrials, oursScrape!.families);
  const metrics = compareMetrics(u, o);
  return {
    version: options.version,
    differences: [...compareFlags(u, o), ...compareGates(u, o), ...metrics.differences],
    unsampledInOursOnly: metrics.unsampledInOursOnly,
    counts: {
      flags: { upstream: u.flags.size, ours: o.flags.size },
      gatesTried: candidates.length,
      metrics: { upstream: u.metrics.size, ours: o.metrics.size },
    },
  };
}
