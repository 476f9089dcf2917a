// `node scripts/collect-licenses.mjs <install dir> <dest>`: copies the top-level license, notice and
// copying files of every production package installed in <install dir>/node_modules (from its
// package-lock.json) to <dest>/<package>/. The image ships the bundle, which holds these packages'
// code, instead of node_modules; their notices go with it (scripts/image.sh, the Dockerfile).
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const [deps, dest] = process.argv.slice(2);
if (!deps || !dest) throw new Error('usage: node scripts/collect-licenses.mjs <install dir> <dest>');
const lock = JSON.parse(readFileSync(join(deps, 'package-lock.json'), 'utf8'));
let copied = 0;
for (const [dir, pkg] of Object.entries(lock.packages).sort(([a], [b]) => (a < b ? -1 : 1))) {
  if (dir === '' || pkg.dev || !existsSync(join(deps, dir))) continue;
  for (const f of readdirSync(join(deps, dir)).sort()) {
    if (!/^(licen[cs]e|notice|copying)([.-].*)?$/i.test(f)) continue;
    const to = join(dest, dir.replace(/^node_modules\//, '').replaceAll('/node_modules/', '/'), f);
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(join(deps, dir, f), to);
    copied++;
  }
}
if (!existsSync(join(dest, 'prom-client'))) throw new Error(`no license files found under ${deps}/node_modules`);
process.stdout.write(`collect-licenses: ${copied} files\n`);
