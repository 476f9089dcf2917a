import assert from 'node:assert/strict';
import { SourceMap } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SourceMapLines } from './source-map-lines.js';

const here = fileURLToPath(new URL('.', import.meta.url));

// A real esbuild source map (the kind dist/resizer.js.map is), made from this directory's sources
// the way scripts/build.sh bundles them, checked position by position against node:module's SourceMap.
async function bundleMap(): Promise<{ code: string; map: { sources: string[]; mappings: string } }> {
  const esbuild = await import('esbuild');
  const out = await esbuild.build({
    entryPoints: [join(here, 'logger.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    sourcemap: 'external',
    sourcesContent: false,
    outfile: join(here, 'out.js'),
    packages: 'external',
    logLevel: 'silent',
  });
  const file = (suffix: string) => out.outputFiles.find((f) => f.path.endsWith(suffix))!.text;
  return { code: file('out.js'), map: JSON.parse(file('out.js.map')) };
}

test('every generated position resolves to the file and line node:module SourceMap.findEntry gives', async () => {
  const { code, map } = await bundleMap();
  const ours = SourceMapLines.parse(map);
  const node = new SourceMap(map as ConstructorParameters<typeof SourceMap>[0]);
  const lines = code.split('\n');
  let checked = 0;
  for (let line = 0; line <= lines.length; line++) {
    const width = (lines[line] ?? '').length;
    for (let column = 0; column <= width + 1; column += 3) {
      const want = node.findEntry(line, column) as { originalSource?: string; originalLine?: number };
      const got = ours.find(line, column);
      if (want.originalSource === undefined) {
        assert.equal(got, undefined, `${line}:${column}`);
      } else {
        assert.ok(got, `${line}:${column} has no entry`);
        // Node resolves sources against the map's URL; the file name and line are what the logger uses.
        assert.ok(want.originalSource.endsWith(got.source.replace(/^(\.\.\/)+/, '')), `${line}:${column}: ${got.source} vs ${want.originalSource}`);
        assert.equal(got.line, want.originalLine, `${line}:${column}`);
      }
      checked++;
    }
  }
  assert.ok(checked > 1000, `only ${checked} positions checked`);
});

test('malformed mappings are refused, and an empty map finds nothing', () => {
  assert.throws(() => SourceMapLines.parse({ sources: ['a.ts'], mappings: 'AAAA,!!' }), /malformed source map mappings/);
  const empty = SourceMapLines.parse({ sources: [], mappings: '' });
  assert.equal(empty.find(0, 0), undefined);
  assert.equal(empty.find(10, 5), undefined);
});

test('segments without a source, lines past the end and columns before the first segment', () => {
  // Line 0: col 0 → a.ts:0, col 4 → no source. Line 1: empty. Line 2: col 2 → b.ts:5.
  const map = SourceMapLines.parse({ sources: ['a.ts', 'b.ts'], mappings: 'AAAA,I;;ECKA' });
  assert.deepEqual(map.find(0, 0), { source: 'a.ts', line: 0 });
  assert.deepEqual(map.find(0, 3), { source: 'a.ts', line: 0 });
  assert.equal(map.find(0, 4), undefined);
  assert.equal(map.find(1, 0), undefined); // the previous segment (no source)
  assert.equal(map.find(2, 1), undefined);
  assert.deepEqual(map.find(2, 2), { source: 'b.ts', line: 5 });
  assert.deepEqual(map.find(9, 0), { source: 'b.ts', line: 5 });
});

test('serialize and deserialize give the same lookups, also from an unaligned buffer; other bytes are refused', async () => {
  const { code, map } = await bundleMap();
  const parsed = SourceMapLines.parse(map);
  const bytes = parsed.serialize();
  const unaligned = Buffer.concat([Buffer.from([0]), bytes]).subarray(1);
  for (const copy of [SourceMapLines.deserialize(bytes), SourceMapLines.deserialize(unaligned)]) {
    const lines = code.split('\n');
    for (let line = 0; line < lines.length; line++) {
      for (let column = 0; column <= lines[line]!.length; column += 5) assert.deepEqual(copy.find(line, column), parsed.find(line, column));
    }
  }
  assert.throws(() => SourceMapLines.deserialize(Buffer.from('{"version":3}')), /not a source map line table/);
  assert.throws(() => SourceMapLines.deserialize(bytes.subarray(0, bytes.length - 1)), /truncated/);
});

test('only(keep): positions in kept sources resolve as before, all others find nothing', async () => {
  const { code, map } = await bundleMap();
  const all = SourceMapLines.parse(map);
  const keep = (source: string) => source.endsWith('logger.ts');
  const some = all.only(keep);
  assert.ok(some.serialize().length < all.serialize().length, 'fewer segments');
  const lines = code.split('\n');
  let kept = 0;
  for (let line = 0; line < lines.length; line++) {
    for (let column = 0; column <= lines[line]!.length; column += 3) {
      const want = all.find(line, column);
      if (want !== undefined && keep(want.source)) {
        assert.deepEqual(some.find(line, column), want, `${line}:${column}`);
        kept++;
      } else {
        assert.equal(some.find(line, column), undefined, `${line}:${column}`);
      }
    }
  }
  assert.ok(kept > 100, `only ${kept} positions in the kept source`);
});
