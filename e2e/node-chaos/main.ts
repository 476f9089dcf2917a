// `npm run chaos -- --node` (scripts/chaos.sh runs this after building the node's components and
// images): for each fault and each resizer image, a node chaos run (run.ts) on a fresh one-node
// cluster; prints a markdown table and writes it, with the raw results, to
// bench/results/node-chaos-<date>.{md,json}. docs/e2e.md, "Faults on the node", says what it
// does and how to read the table. Needs root (e2e/node.sh).
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../../test/cluster/components.js';
import { NODE_FAULTS } from './faults.js';
import { failed, nodeChaosTable } from './report.js';
import { DEFAULT_NODE_SETTINGS, pinImages, runNodeFault, type ImageName, type NodeChaosResult } from './run.js';

const D = DEFAULT_NODE_SETTINGS;
const HELP = `usage: npm run chaos -- --node [flags]
  --faults LIST          comma-separated: ${NODE_FAULTS.map((f) => f.id).join(', ')}; default all
  --images LIST          ours, upstream (default both; upstream is csi-resizer as e2e/images.sh builds it)
  --n N                  claims grown at once (default ${D.n}, 4 to 200): half online xfs under running
                         pods, a quarter offline ext4, a quarter offline xfs; every one needs node expansion
  --files N --file-mib M files each claim's pod writes and checksums (default ${D.files} of ${D.fileMiB} MiB)
  --expand-delay MS      the controller driver's working time per ControllerExpandVolume (default ${D.expandDelayMs})
  --down S               seconds a killed daemon stays down (default ${D.downS})
  --bound SECONDS        a claim not final this long after the resize requests is lost (default ${D.boundMs / 1000})
  --out PREFIX           output files PREFIX.md and PREFIX.json (default bench/results/node-chaos-<date>)
`;

function intFlag(v: string | undefined, def: number, min: number, max: number, name: string): number {
  if (v === undefined) return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer in [${min}, ${max}], not ${v}`);
  return n;
}

function list<T extends string>(v: string | undefined, all: readonly T[], what: string): T[] {
  const items = (v ?? all.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const i of items) if (!all.includes(i as T)) throw new Error(`unknown ${what} ${i}; known: ${all.join(', ')}`);
  return items as T[];
}

function parse() {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      faults: { type: 'string' },
      images: { type: 'string' },
      n: { type: 'string' },
      files: { type: 'string' },
      'file-mib': { type: 'string' },
      'expand-delay': { type: 'string' },
      down: { type: 'string' },
      bound: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const settings = {
    ...D,
    n: intFlag(values.n, D.n, 4, 200, 'n'),
    files: intFlag(values.files, D.files, 1, 16, 'files'),
    fileMiB: intFlag(values['file-mib'], D.fileMiB, 1, 64, 'file-mib'),
    expandDelayMs: intFlag(values['expand-delay'], D.expandDelayMs, 0, 10_000, 'expand-delay'),
    downS: intFlag(values.down, D.downS, 0, 60, 'down'),
    boundMs: intFlag(values.bound, D.boundMs / 1000, 30, 3600, 'bound') * 1000,
  };
  const faults = list(
    values.faults,
    NODE_FAULTS.map((f) => f.id),
    'fault',
  );
  const images = list<ImageName>(values.images, ['ours', 'upstream'], 'image');
  return { help: values.help === true, settings, faults, images, out: values.out };
}

async function main(): Promise<void> {
  const args = parse();
  if (args.help) {
    process.stdout.write(HELP);
    return;
  }
  if (process.getuid?.() !== 0) throw new Error('the node chaos runs need root (e2e/node.sh: network namespaces, mounts, cgroups)');
  const logRoot = mkdtempSync('/tmp/rz-node-chaos-');
  const imagesDir = pinImages(join(logRoot, 'images'));
  const started = Date.now();
  const out = args.out ?? join(repoRoot, 'bench', 'results', `node-chaos-${stamp(new Date())}`);
  const planned = NODE_FAULTS.filter((f) => args.faults.includes(f.id)).length * args.images.length;
  const results: NodeChaosResult[] = [];
  for (const fault of NODE_FAULTS.filter((f) => args.faults.includes(f.id))) {
    for (const image of args.images) {
      const log = (line: string) => {
        const text = `[node-chaos ${new Date().toISOString().slice(11, 19)} ${fault.id}/${image}] ${line}\n`;
        process.stderr.write(text);
        appendFileSync(join(logRoot, 'series.log'), text);
      };
      log(`== ${fault.title}, ${image}'s resizer, ${args.settings.n} claims`);
      const r = await runNodeFault(args.settings, fault, image, join(logRoot, `${fault.id}-${image}`), log, imagesDir);
      results.push(r);
      // Written after every run: a series cut short (a deadline, a machine lost) keeps what it measured.
      write(args, results, { logRoot, out, durationS: Math.round((Date.now() - started) / 1000), planned, final: false });
      log(
        `done: lost ${r.lost}, wrong sizes ${r.wrongSizes}, data damaged ${r.dataDamaged}, all final ${r.allFinalS ?? '—'} s${r.error ? `; FAILED: ${r.error}` : ''}`,
      );
    }
  }
  write(args, results, { logRoot, out, durationS: Math.round((Date.now() - started) / 1000), planned, final: true });
  if (results.some((r) => r.error !== undefined || !r.teardownClean || (r.image === 'ours' && failed(r)))) process.exitCode = 1;
}

const stamp = (d: Date) =>
  d
    .toISOString()
    .replace(/[:.]/g, '-')
    .replace(/-\d{3}Z$/, 'Z');

interface Output {
  logRoot: string;
  /** Files PREFIX.md and PREFIX.json. */
  out: string;
  durationS: number;
  /** Runs the series was asked for, and whether it has done them all. */
  planned: number;
  final: boolean;
}

function write(args: ReturnType<typeof parse>, results: NodeChaosResult[], o: Output): void {
  const s = args.settings;
  const command = `npm run chaos -- --node ${process.argv.slice(2).join(' ')}`.trim();
  const machine = `${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB`;
  const images = [...new Set(results.map((r) => `${r.image}: ${r.imageRef}`))].join('; ');
  const progress = o.final ? '' : `; ${results.length} of ${o.planned} runs so far`;
  const md = [
    `command: \`${command}\` (${o.durationS} s, ${new Date().toISOString()}${progress})`,
    `machine: ${machine}; node ${process.version}; images ${images}`,
    `settings: ${s.n} claims ${s.fromSize} → ${s.toSize}, each with ${s.files} files of ${s.fileMiB} MiB; controller driver ${s.expandDelayMs} ms per ControllerExpandVolume; ` +
      `controller faults ${s.controllerFaultAfterMs} ms after the first ControllerExpandVolume began, node faults at the first NodeExpandVolume; daemons down ${s.downS} s; bound ${s.boundMs / 1000} s`,
    '',
    nodeChaosTable(results),
    '',
    ...results.flatMap((r) => r.problems.map((p) => `- ${r.fault}/${r.image}: ${p}`)),
  ].join('\n');
  mkdirSync(join(o.out, '..'), { recursive: true });
  writeFileSync(`${o.out}.md`, md + '\n');
  const body = { command, durationS: o.durationS, complete: o.final, machine, settings: s, results };
  writeFileSync(`${o.out}.json`, JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2) + '\n');
  if (o.final) process.stdout.write(`\n${md}\n\nlogs in ${o.logRoot}\nwritten to ${o.out}.md and .json\n`);
}

// Ctrl-C or a runner's SIGTERM: the node session's stop() runs through the pipe closing (node.sh
// tears down when its command's stdin closes), so exiting is enough.
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => process.exit(130));

main().catch((err: unknown) => {
  process.stderr.write(`[node-chaos] ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
