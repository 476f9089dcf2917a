// The chaos suite (`npm run chaos`): for each fault, N bound claims grown at once with the fault
// injected in the middle of the burst, first under our resizer, then under upstream's Go sidecar
// (where the fault applies to both), each in a fresh namespace with a fresh fault driver. Prints
// a markdown table and writes it, with the raw results, to bench/results/chaos-<date>.{md,json}.
//
//   npm run chaos                                  # everything, N=300 (500 for the leader run)
//   npm run chaos -- --faults driver-kill,recreate --n 30 --impls ours
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { componentsEnvPath, parseEnvFile, repoRoot } from '../test/cluster/components.js';
import { DEFAULT_SETTINGS, startChaosEnv } from '../test/chaos/env.js';
import { FAULTS } from '../test/chaos/faults.js';
import { runFault, type FaultResult } from '../test/chaos/harness.js';
import { chaosTable } from '../test/chaos/report.js';
import type { Impl } from './lib/resizer.js';

const HELP = `usage: tsx bench/chaos.ts [flags]
  --faults LIST      comma-separated: ${FAULTS.map((f) => f.id).join(', ')}; default all
  --impls LIST       ours, upstream (default both)
  --n N              claims grown at once (default ${DEFAULT_SETTINGS.n}, max 5000)
  --n-leader N       claims in the leader-kill run (default ${DEFAULT_SETTINGS.nLeader}, max 5000)
  --bound SECONDS    a claim not final this long after the first edit is lost (default ${DEFAULT_SETTINGS.boundMs / 1000})
  --driver-delay MS  the driver's work per expand call (default ${DEFAULT_SETTINGS.driverDelayMs})
  --ours-entry PATH  our entry point: dist/main.js (default) or src/main.ts (run under tsx)
  --out PREFIX       output files PREFIX.md and PREFIX.json (default bench/results/chaos-<date>)
`;

function intFlag(v: string | undefined, def: number, min: number, max: number, name: string): number {
  if (v === undefined) return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer in [${min}, ${max}], not ${v}`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      faults: { type: 'string' },
      impls: { type: 'string' },
      n: { type: 'string' },
      'n-leader': { type: 'string' },
      bound: { type: 'string' },
      'driver-delay': { type: 'string' },
      'ours-entry': { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const wanted = (values.faults ?? FAULTS.map((f) => f.id).join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const id of wanted) if (!FAULTS.some((f) => f.id === id)) throw new Error(`unknown fault ${id}; known: ${FAULTS.map((f) => f.id).join(', ')}`);
  const impls = (values.impls ?? 'ours,upstream').split(',').map((s) => s.trim()) as Impl[];
  for (const i of impls) if (i !== 'ours' && i !== 'upstream') throw new Error(`unknown resizer ${i}: ours or upstream`);
  const settings = {
    ...DEFAULT_SETTINGS,
    n: intFlag(values.n, DEFAULT_SETTINGS.n, 1, 5000, 'n'),
    nLeader: intFlag(values['n-leader'], DEFAULT_SETTINGS.nLeader, 1, 5000, 'n-leader'),
    boundMs: intFlag(values.bound, DEFAULT_SETTINGS.boundMs / 1000, 10, 3600, 'bound') * 1000,
    driverDelayMs: intFlag(values['driver-delay'], DEFAULT_SETTINGS.driverDelayMs, 0, 10_000, 'driver-delay'),
  };
  const oursEntry = values['ours-entry'] ?? join(repoRoot, 'dist', 'main.js');
  if (!existsSync(oursEntry)) throw new Error(`${oursEntry} does not exist: run npm run build (npm run chaos does)`);
  const components = parseEnvFile(readFileSync(componentsEnvPath(), 'utf8'));
  const upstreamBin = components.get('UPSTREAM_RESIZER_BIN') ?? '';
  if (impls.includes('upstream') && (!upstreamBin || !existsSync(upstreamBin))) {
    throw new Error('the upstream resizer is not built: run bash test/infra/build-components.sh --with-upstream (npm run chaos does)');
  }
  const log = (line: string) => process.stderr.write(`[chaos] ${line}\n`);
  const started = Date.now();
  const env = await startChaosEnv({ settings, oursEntry, upstreamBin, log });
  log(`cluster and resizer logs in ${env.cluster.dir} (kept when a run fails, or with CSI_RESIZER_KEEP_LOGS=1)`);
  const results: FaultResult[] = [];
  let failed: unknown;
  try {
    for (const fault of FAULTS.filter((f) => wanted.includes(f.id))) {
      for (const impl of impls.filter((i) => fault.impls.includes(i))) {
        log(`== ${fault.id} with ${impl}`);
        results.push(await runFault(env, fault, impl));
      }
    }
  } catch (err) {
    failed = err;
    log(
      `FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}${err instanceof Error && err.cause ? `\ncause: ${String((err.cause as Error).stack ?? err.cause)}` : ''}`,
    );
    log(`logs kept in ${env.cluster.dir}`);
  } finally {
    await env.stop({ keepLogs: failed !== undefined });
  }

  const command = `node --import tsx bench/chaos.ts ${process.argv.slice(2).join(' ')}`.trim();
  const machine = `${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB`;
  const versions = `kube-apiserver ${components.get('K8S_VERSION') ?? '?'}, etcd ${components.get('ETCD_VERSION') ?? '?'}, upstream csi-resizer ${components.get('UPSTREAM_RESIZER_VERSION') ?? '?'}, node ${process.version}`;
  const durationS = Math.round((Date.now() - started) / 1000);
  const table = chaosTable(results);
  const md = [
    `command: \`${command}\` (${durationS} s, ${new Date().toISOString()})`,
    `machine: ${machine}; ${versions}`,
    `settings: fault ${settings.faultAtMs} ms into the burst; apiserver down ${settings.apiserverDownMs} ms, etcd down ${settings.etcdDownMs} ms, ` +
      `black hole ${settings.blackholeMs} ms, driver down ${settings.driverDownMs} ms; driver ${settings.driverDelayMs} ms per expand; ` +
      `bound ${settings.boundMs / 1000} s; --workers=${settings.workers} --kube-api-qps=${settings.qps} --kube-api-burst=${settings.burst} --timeout=${settings.timeout}`,
    '',
    table,
    '',
    ...results.flatMap((r) => r.problems.map((p) => `- ${r.fault}/${r.impl}: ${p}`)),
  ].join('\n');
  process.stdout.write(`\n${md}\n`);
  const stamp = new Date()
    .toISOString()
    .replace(/[:.]/g, '-')
    .replace(/-\d{3}Z$/, 'Z');
  const out = values.out ?? join(repoRoot, 'bench', 'results', `chaos-${stamp}`);
  mkdirSync(join(out, '..'), { recursive: true });
  writeFileSync(`${out}.md`, md + '\n');
  writeFileSync(`${out}.json`, JSON.stringify({ command, durationS, machine, versions, settings, complete: failed === undefined, results }, null, 2) + '\n');
  process.stdout.write(`\nwritten to ${out}.md and .json\n`);
  if (failed !== undefined || results.some((r) => r.lost > 0 || r.wrongSizes > 0)) process.exitCode = 1;
}

// Ctrl-C or a runner's SIGTERM: exit through process.exit so the exit hooks of test/cluster kill
// every resizer and component this run started and remove the etcd data.
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));

// Bad flags and set-up failures: the message is the point (a run's own failure is logged in main).
main().catch((err: unknown) => {
  process.stderr.write(`[chaos] ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
