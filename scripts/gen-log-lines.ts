// Part of `npm run build`: `node --import tsx scripts/gen-log-lines.ts dist/resizer.js.map` writes
// dist/resizer.js.lines, the map's line tables (src/observability/log/source-map-lines.ts) in the form the
// logger loads without decoding anything, so a start does not decode the map (docs/performance.md,
// "Start-up costs behind code choices"). Only our own sources' positions are kept.
import { readFileSync, writeFileSync } from 'node:fs';
import { SourceMapLines, type SourceMapPayload } from '../src/observability/log/source-map-lines.js';

const mapPath = process.argv[2];
if (!mapPath?.endsWith('.js.map')) throw new Error('usage: gen-log-lines.ts <bundle>.js.map');
// Log calls are in our sources only: the bundled dependencies' segments are left out.
const lines = SourceMapLines.parse(JSON.parse(readFileSync(mapPath, 'utf8')) as SourceMapPayload).only((source) => !source.split('/').includes('node_modules'));
writeFileSync(mapPath.replace(/\.map$/, '.lines'), lines.serialize());
