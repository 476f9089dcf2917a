// The Node.js runtime is named in several places (the pins scripts/node-runtime.sh installs from,
// package.json engines, the Dockerfile, the README, @types/node); they must agree, and this suite
// must be running on the pinned runtime that `npm test` selected.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../cluster/components.js';

interface Pin {
  readonly major: string;
  readonly version: string;
  readonly arch: string;
  readonly integrity: string;
}

function readPins(): Pin[] {
  const text = readFileSync(join(repoRoot, 'scripts', 'node-runtime.pins'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => {
      const [major = '', version = '', arch = '', integrity = ''] = line.trim().split(/\s+/);
      return { major, version, arch, integrity };
    });
}

const pins = readPins();
const majors = [...new Set(pins.map((p) => p.major))];
const shipped = majors[0]!;
const versionOf = (major: string): string => pins.find((p) => p.major === major)!.version;
const packageJson = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};

test('pins: each major has one version for x64 and arm64, each with a sha512', () => {
  assert.deepEqual(majors, ['26', '24'], 'the shipped LTS first, then the other supported LTS');
  for (const major of majors) {
    const rows = pins.filter((p) => p.major === major);
    assert.deepEqual(rows.map((p) => p.arch).sort(), ['arm64', 'x64'], `Node ${major}: one pin per arch`);
    assert.equal(new Set(rows.map((p) => p.version)).size, 1, `Node ${major}: the same version on both arches`);
    for (const p of rows) {
      assert.match(p.version, new RegExp(`^${major}\\.\\d+\\.\\d+$`));
      assert.match(p.integrity, /^sha512-[A-Za-z0-9+/]{86}==$/);
    }
  }
});

test('engines, Dockerfile, README and @types/node name the pinned versions', () => {
  const engines = majors
    .map(versionOf)
    .sort((a, b) => Number(a.split('.')[0]) - Number(b.split('.')[0]))
    .map((v) => `^${v}`)
    .join(' || ');
  assert.equal(packageJson.engines.node, engines);

  const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
  assert.match(dockerfile, new RegExp(`^ARG NODE_VERSION=${versionOf(shipped).replaceAll('.', '\\.')}$`, 'm'));
  assert.match(dockerfile, new RegExp(`^ARG NODE_IMAGE=node:${shipped}-`, 'm'), 'the Docker base is the same major');

  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  for (const major of majors) assert.ok(readme.includes(`Node.js ${versionOf(major)}`), `README names Node.js ${versionOf(major)}`);

  assert.equal(packageJson.devDependencies['@types/node']?.split('.')[0], shipped, '@types/node follows the shipped major');
});

test('this run is on the pinned runtime NODE_LTS selects (the shipped one by default)', () => {
  const major = process.env['NODE_LTS'] || shipped;
  assert.equal(process.version, `v${versionOf(major)}`, 'npm test puts the pinned runtime first on PATH (scripts/node-runtime.sh)');
});
